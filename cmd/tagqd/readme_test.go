package main

import (
	"os"
	"os/exec"
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

// TestE2E_READMEWalkThroughsRunAsWritten runs the README's curl
// walk-throughs, as written but for the address, against a real tagqd, and
// checks the state they leave: the README cannot go stale.
func TestE2E_READMEWalkThroughsRunAsWritten(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("the README walk-throughs need jq (apt-get install -y jq)")
	}
	d := start(t, backend{name: "embedded"})
	blocks := readmeBlocks(t, "A walk-through with curl", "Dead letters")
	dir := t.TempDir()
	for _, title := range []string{"A walk-through with curl", "Dead letters"} {
		for _, script := range blocks[title] {
			script = strings.ReplaceAll(script, "localhost:8080", d.http)
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "README %q block failed:\n%s", title, out)
			require.NotContains(t, string(out), `"code":`, "an API error in %q:\n%s", title, out)
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
