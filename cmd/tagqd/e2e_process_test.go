package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestE2E_LogsListenAddressesAndTheEmbeddedStore checks the start-up lines
// main.go documents: where it listens, and that the embedded store loses
// its data.
func TestE2E_LogsListenAddressesAndTheEmbeddedStore(t *testing.T) {
	t.Parallel()
	d := start(t, backend{name: "embedded"}, "--log-level", "info")
	want := []string{
		`level=WARN msg="no --redis-url or --redis-cluster: using the embedded in-memory store;`,
		`level=INFO msg="grpc listening" addr=` + d.grpc,
		`level=INFO msg="http listening" addr=` + d.http,
	}
	require.Eventually(t, func() bool {
		log := d.proc.Stderr()
		for _, w := range want {
			if !strings.Contains(log, w) {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "want lines %q in\n%s", want, d.proc.Stderr())
}

// TestE2E_RefusesBadFlags: exit status 2 and a message, before binding.
func TestE2E_RefusesBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--log-format", "xml"}, {"--shutdown-timeout", "soon"}} {
		out, err := runTagqd(args...)
		require.Error(t, err, "%v", args)
		require.Equal(t, 2, exitCode(err), "%v: %s", args, out)
		require.Contains(t, out, "tagqd:")
	}
}
