package main

import (
	"encoding/json"
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
}

// TestE2E_OpenAPIIsServedAndConsistent checks the served document's
// structure: Swagger 2.0, every operation with responses, every $ref
// resolving, and every HTTP route of the API present.
func TestE2E_OpenAPIIsServedAndConsistent(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	raw, err := httpGet("http://" + d.http + "/openapi.json")
	require.NoError(t, err)
	var doc struct {
		Swagger     string                               `json:"swagger"`
		Paths       map[string]map[string]map[string]any `json:"paths"`
		Definitions map[string]any                       `json:"definitions"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &doc))
	require.Equal(t, "2.0", doc.Swagger)
	refs := regexp.MustCompile(`"\$ref":\s*"#/definitions/([^"]+)"`).FindAllStringSubmatch(raw, -1)
	require.NotEmpty(t, refs)
	for _, r := range refs {
		require.Contains(t, doc.Definitions, r[1], "dangling $ref")
	}
	ops := 0
	for path, methods := range doc.Paths {
		for method, op := range methods {
			require.Contains(t, op, "responses", "%s %s", method, path)
			require.NotEmpty(t, op["operationId"], "%s %s", method, path)
			ops++
		}
	}
	// Every RPC with an HTTP rule in tagq.http.yaml is in the document.
	rules, err := os.ReadFile("../../proto/tagq/v1/tagq.http.yaml")
	require.NoError(t, err)
	require.Equal(t, strings.Count(string(rules), "selector:"), ops)
}
