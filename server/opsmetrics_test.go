package server

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Every metric the alert rules and the Grafana dashboard in ops/ use
// (ops/metric-names.txt, kept exact by ops's own tests) is one tagqd
// serves.
func TestOpsMetricsAreServed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "orders"}})
	require.NoError(t, err) // a call, so the latency histogram has a sample

	raw, err := os.ReadFile("../ops/metric-names.txt")
	require.NoError(t, err)
	code, body := b.do(t, "GET", "/metrics", "")
	require.Equal(t, 200, code)
	served := map[string]bool{}
	for _, l := range strings.Split(body, "\n") {
		if name, _, ok := strings.Cut(l, "{"); ok && !strings.HasPrefix(l, "#") {
			served[name] = true
		} else if name, _, ok := strings.Cut(l, " "); ok && !strings.HasPrefix(l, "#") {
			served[name] = true
		}
	}
	n := 0
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		require.True(t, served[l], "tagqd does not serve %s", l)
		n++
	}
	require.Greater(t, n, 15)
}
