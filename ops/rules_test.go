package ops

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"github.com/stretchr/testify/require"
)

const rulesFile = "prometheus/tagq-alerts.yml"

// alertingRules parses the rules file as promtool check rules does and
// builds each alerting rule.
func alertingRules(t *testing.T) map[string]*rules.AlertingRule {
	t.Helper()
	p := parser.NewParser(parser.Options{})
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation, p, slog.New(slog.DiscardHandler))
	require.Empty(t, errs)
	out := map[string]*rules.AlertingRule{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Alert, "only alerting rules here")
			expr, err := p.ParseExpr(r.Expr)
			require.NoError(t, err, r.Alert)
			require.NotContains(t, out, r.Alert, "alert names are unique")
			require.NotEmpty(t, r.Annotations["summary"], r.Alert)
			require.NotEmpty(t, r.Labels["severity"], r.Alert)
			out[r.Alert] = rules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), time.Duration(r.KeepFiringFor),
				labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", false, nil)
		}
	}
	return out
}

// firing evaluates rule every minute over series loaded by load (promqltest
// syntax), from 0 to until, and returns the labels of the alerts firing at
// the end, as "k=v,..." strings (alertname and severity left out).
func firing(t *testing.T, rule *rules.AlertingRule, load string, until time.Duration) []string {
	t.Helper()
	storage := promqltest.LoadedStorage(t, load)
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	query := rules.EngineQueryFunc(engine, storage)
	start := time.Unix(0, 0).UTC()
	for at := time.Duration(0); at <= until; at += time.Minute {
		_, err := rule.Eval(context.Background(), 0, start.Add(at), query, nil, 0)
		require.NoError(t, err)
	}
	var out []string
	for _, a := range rule.ActiveAlerts() {
		if a.State != rules.StateFiring {
			continue
		}
		var ls []string
		a.Labels.Range(func(l labels.Label) {
			if l.Name != "alertname" && l.Name != "severity" {
				ls = append(ls, l.Name+"="+l.Value)
			}
		})
		out = append(out, strings.Join(ls, ","))
	}
	sort.Strings(out)
	return out
}

func TestAlertRules(t *testing.T) {
	all := alertingRules(t)
	cases := []struct {
		alert, name string
		load        string
		until       time.Duration
		want        []string
	}{
		{"TagqBacklogGrowing", "growing on two replicas: one alert", `
load 1m
  tagq_tag_messages_available{instance="a",queue="orders",tag="billing"} 0+100x60
  tagq_tag_messages_available{instance="b",queue="orders",tag="billing"} 0+100x60
  tagq_tag_messages_available{instance="a",queue="orders",tag="shipping"} 5000x60
`, 45 * time.Minute, []string{"queue=orders,tag=billing"}},
		{"TagqBacklogGrowing", "growing but small", `
load 1m
  tagq_tag_messages_available{instance="a",queue="orders",tag="billing"} 0+10x60
`, 45 * time.Minute, nil},
		{"TagqOldestMessageTooOld", "waiting 16 minutes", `
load 1m
  tagq_tag_oldest_available_age_seconds{instance="a",queue="orders",tag="billing"} 0+60x30
`, 17 * time.Minute, []string{"queue=orders,tag=billing"}},
		{"TagqOldestMessageTooOld", "consumed every few minutes", `
load 1m
  tagq_tag_oldest_available_age_seconds{instance="a",queue="orders",tag="billing"} 0 60 120 180 0 60 120 180 0 60 120 180 0 60 120 180 0 60 120 180
`, 19 * time.Minute, nil},
		{"TagqDeadLettersRising", "5 a minute", `
load 1m
  tagq_tag_dead_total{instance="a",queue="orders",tag="billing"} 0+5x30
`, 20 * time.Minute, []string{"queue=orders,tag=billing"}},
		{"TagqDeadLettersRising", "one every two minutes", `
load 1m
  tagq_tag_dead_total{instance="a",queue="orders",tag="billing"} 0+0.5x30
`, 20 * time.Minute, nil},
		{"TagqOutboxStuck", "not empty for 20 minutes", `
load 1m
  tagq_queue_outbox_messages{instance="a",queue="orders"} 3x30
`, 20 * time.Minute, []string{"queue=orders"}},
		{"TagqOutboxStuck", "relayed as it fills", `
load 1m
  tagq_queue_outbox_messages{instance="a",queue="orders"} 0 3 0 3 0 3 0 3 0 3 0 3 0 3 0 3 0 3 0 3 0
`, 20 * time.Minute, nil},
		{"TagqMetricsStale", "Redis unreadable", `
load 1m
  tagq_metrics_age_seconds{instance="a"} 0+60x10
  tagq_metrics_age_seconds{instance="b"} 3x10
`, 6 * time.Minute, []string{"instance=a"}},
		{"TagqMetricsTruncated", "too many tags", `
load 1m
  tagq_metrics_truncated{instance="a"} 1x60
`, 40 * time.Minute, []string{""}},
		{"TagqMetricsTruncated", "all tags", `
load 1m
  tagq_metrics_truncated{instance="a"} 0x60
`, 40 * time.Minute, nil},
		{"TagqUnavailable", "half the calls fail", `
load 1m
  grpc_server_handled_total{instance="a",grpc_code="Unavailable",grpc_method="SendMessage"} 0+100x20
  grpc_server_handled_total{instance="a",grpc_code="OK",grpc_method="SendMessage"} 0+100x20
`, 15 * time.Minute, []string{"instance=a"}},
		{"TagqUnavailable", "a rare failure", `
load 1m
  grpc_server_handled_total{instance="a",grpc_code="Unavailable",grpc_method="SendMessage"} 0+1x20
  grpc_server_handled_total{instance="a",grpc_code="OK",grpc_method="SendMessage"} 0+1000x20
`, 15 * time.Minute, nil},
	}
	tested := map[string]bool{}
	for _, c := range cases {
		t.Run(c.alert+"/"+c.name, func(t *testing.T) {
			rule, ok := all[c.alert]
			require.True(t, ok, "no rule %s", c.alert)
			// A fresh rule per case: alerts keep state between evaluations.
			rule = rules.NewAlertingRule(rule.Name(), rule.Query(), rule.HoldDuration(), rule.KeepFiringFor(),
				rule.Labels(), rule.Annotations(), labels.EmptyLabels(), "", false, nil)
			require.Equal(t, c.want, firing(t, rule, c.load, c.until))
		})
		tested[c.alert] = true
	}
	for name := range all {
		require.True(t, tested[name], "alert %s has no test", name)
	}
}
