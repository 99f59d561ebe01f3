package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readmeBlocks returns the ```sh blocks of the README sections whose
// headings start with one of the given titles.
func readmeBlocks(t *testing.T, titles ...string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	out := map[string][]string{}
	for _, sec := range strings.Split(string(raw), "\n## ")[1:] {
		heading := sec[:strings.Index(sec, "\n")]
		for _, title := range titles {
			if strings.HasPrefix(heading, title) {
				for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(sec, -1) {
					out[title] = append(out[title], b[1])
				}
			}
		}
	}
	for _, title := range titles {
		require.NotEmpty(t, out[title], "README section %q has no sh block", title)
	}
	return out
}

// walkThrough is a README block marked "<!-- walk-through -->" (run in a
// scratch folder) or "<!-- walk-through: from the checkout -->" (run in the
// repository's root).
type walkThrough struct {
	script       string
	fromCheckout bool
}

// walkThroughs returns README's walk-through blocks in the order they appear.
func walkThroughs(t *testing.T) []walkThrough {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var out []walkThrough
	re := regexp.MustCompile("(?s)<!-- walk-through(: from the checkout)? -->\n```sh\n(.*?)```")
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		out = append(out, walkThrough{script: m[2], fromCheckout: m[1] != ""})
	}
	require.GreaterOrEqual(t, len(out), 7, "README's walk-throughs: curl, dead letters, the CLI's install and use, seek, topic and priority queues")
	return out
}

// TestE2E_READMEWalkThroughsRunAsWritten runs every README walk-through,
// as written but for the REST address, one after the other against one
// real tagqd (the CLI's on its gRPC address, TAGQ_ADDR; its `go install`
// into a scratch GOBIN on PATH), and checks the state they leave: the
// README cannot go stale, and its walk-throughs do not collide.
func TestE2E_READMEWalkThroughsRunAsWritten(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("the README walk-throughs need jq (apt-get install -y jq)")
	}
	d := start(t, backend{name: "embedded"})
	dir, bin := t.TempDir(), t.TempDir()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	env := append(os.Environ(), "GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TAGQ_ADDR="+d.grpc,
		"TAGQ_CONFIG="+filepath.Join(dir, "tagq-config.json"))
	var cliOut string
	for i, w := range walkThroughs(t) {
		script := strings.ReplaceAll(w.script, "localhost:8080", d.http)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		if w.fromCheckout {
			cmd.Dir = root
		}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "README walk-through %d failed:\n%s\n--- output:\n%s", i+1, w.script, out)
		require.NotContains(t, string(out), `"code":`, "an API error in walk-through %d:\n%s", i+1, out)
		if strings.Contains(w.script, "tagq queue list") {
			cliOut = string(out)
		}
	}
	st := func(q, tag string) map[string]any {
		s, _ := jget(d.restOK("GET", "/v1/queues/"+q+"/tags/"+tag, ""), "tag", "state").(map[string]any)
		return s
	}
	require.Equal(t, "3", st("orders", "billing")["deleted_total"])
	require.Equal(t, "3", st("orders", "shipping")["in_flight"], "two held, one nacked and received again")
	require.Equal(t, "4", st("orders", "shipping")["received_total"])
	require.Equal(t, "1", st("payments", "ledger")["dead_total"])
	// The seek's: three deleted, then replayed and received again.
	audit := st("audit-log", "default")
	require.Equal(t, "3", audit["deleted_total"], "%v", audit)
	require.Equal(t, "6", audit["received_total"], "%v", audit)
	require.Equal(t, "3", audit["in_flight"], "%v", audit)
	// The CLI's: one deleted, one nacked for 10 s, one dead-lettered and moved back.
	inv := st("invoices", "billing")
	require.Equal(t, "1", inv["deleted_total"])
	require.Equal(t, "1", inv["dead_total"])
	require.Eventually(t, func() bool { return st("invoices", "billing")["available"] == "2" }, 10*time.Second, 20*time.Millisecond,
		"the moved-back dead letter, and the nacked message once its 10 s pass")
	require.Equal(t, "3", jget(d.restOK("GET", "/v1/queues/transfers", ""), "queue", "state", "retained_messages"))
	require.Equal(t, "2", jget(d.restOK("GET", "/v1/queues/jobs", ""), "queue", "state", "retained_messages"))
	// tagq queue list counts every tag's backlog, not the default tag's only
	// (invoices has none): billing held the nacked message in flight then,
	// and orders' shipping its three.
	require.Regexp(t, `(?m)^QUEUE\s+TAGS\s+MESSAGES\s+AVAILABLE \(MAX TAG\)\s+IN FLIGHT \(ALL TAGS\)`, cliOut)
	// AVAILABLE 0 or 1: the move back started just before runs at 500/s
	// and may or may not have put the dead letter back by then.
	require.Regexp(t, `(?m)^invoices\s+1\s+\d+\s+[01]\s+1\s+1\s+invoices-dlq$`, cliOut)
	require.Regexp(t, `(?m)^orders\s+2\s+3\s+0\s+3\s+1\s*$`, cliOut)
	tag := d.restOK("GET", "/v1/queues/orders-dlq/tags/from-payments", "")
	require.Equal(t, "payments", jget(tag, "tag", "filter", "conditions", 0, "string_value"))
	require.Eventually(t, func() bool {
		return st("payments", "ledger")["available"] == "1" || st("orders-dlq", "default")["available"] == "1"
	}, 5*time.Second, 20*time.Millisecond, "moved back, or still in the DLQ if the cancel came first")
	// The queues read only by named tags have no default tag holding
	// their messages.
	for q, tags := range map[string]int32{"orders": 2, "payments": 1} {
		queue := d.restOK("GET", "/v1/queues/"+q, "")
		require.Equal(t, "", jget(queue, "queue", "default_tag_name"), q)
		require.Nil(t, jget(queue, "queue", "state", "default_tag"), q)
		require.Equal(t, float64(tags), jget(queue, "queue", "state", "tag_count"), q)
	}
}
