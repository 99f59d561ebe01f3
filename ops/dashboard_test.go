package ops

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
)

const dashboardFile = "grafana/tagq-dashboard.json"

type panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// grafanaVars stands in for the dashboard's variables, so that its queries
// parse as PromQL.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$queue", ".*", "$tag", ".*", "$instance", ".*")

// metricNames returns the metric names expr selects.
func metricNames(t *testing.T, expr string) []string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaVars.Replace(expr))
	require.NoError(t, err, expr)
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			require.NotEmpty(t, vs.Name, "select metrics by name: %s", expr)
			out = append(out, vs.Name)
		}
		return nil
	})
	require.NotEmpty(t, out, expr)
	return out
}

// The dashboard is valid JSON whose every query is valid PromQL over
// tagq's metrics (metric-names.txt).
func TestDashboardQueries(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var d struct {
		Title      string  `json:"title"`
		UID        string  `json:"uid"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	require.Equal(t, "tagq", d.Title)
	require.NotEmpty(t, d.UID)
	known := knownMetrics(t)
	queries := 0
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
			for _, tg := range p.Targets {
				for _, n := range metricNames(t, tg.Expr) {
					require.Contains(t, known, n, "panel %q", p.Title)
				}
				queries++
			}
		}
	}
	walk(d.Panels)
	require.Greater(t, queries, 10)
	labelValues := regexp.MustCompile(`^label_values\((.+), *\w+\)$`)
	for _, v := range d.Templating.List {
		if v.Definition == "" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		require.NotNil(t, m, "variable %s: %s", v.Name, v.Definition)
		for _, n := range metricNames(t, m[1]) {
			require.Contains(t, known, n, "variable %s", v.Name)
		}
	}
}

// knownMetrics reads metric-names.txt: the series tagqd serves that the
// rules and the dashboard use (the server module's tests check that tagqd
// serves each of them).
func knownMetrics(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile("metric-names.txt")
	require.NoError(t, err)
	out := map[string]bool{}
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out
}

// metric-names.txt lists exactly the metrics the rules and the dashboard
// use: none missing, none left over.
func TestMetricNamesListIsExact(t *testing.T) {
	used := map[string]bool{}
	for _, r := range alertingRules(t) {
		for _, n := range metricNames(t, r.Query().String()) {
			used[n] = true
		}
	}
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`"expr": "((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(raw), -1) {
		var expr string
		require.NoError(t, json.Unmarshal([]byte(`"`+m[1]+`"`), &expr))
		for _, n := range metricNames(t, expr) {
			used[n] = true
		}
	}
	var want, got []string
	for n := range used {
		want = append(want, n)
	}
	for n := range knownMetrics(t) {
		got = append(got, n)
	}
	sort.Strings(want)
	sort.Strings(got)
	require.Equal(t, want, got)
}
