package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's SQS section runs as written, but for the addresses: the
// aws CLI and boto3 snippets (with TAGQ_SQS_CLIENT_TESTS=1: they need
// Debian's awscli and python3-boto3) against a tagqd without --auth, and
// the SigV4 credentials request against one with it. (The aws-sdk-go-v2
// snippet is sqs/example_test.go's code.)
func TestE2E_READMESQSRunsAsWritten(t *testing.T) {
	t.Parallel()
	blocks := readmeBlocks(t, "SQS compatibility")["SQS compatibility"]
	var cli, creds string
	for _, b := range blocks {
		switch {
		case strings.Contains(b, "aws --endpoint-url"):
			cli = b
		case strings.Contains(b, "sigv4-credentials"):
			creds = b
		}
	}
	require.NotEmpty(t, cli, "an aws CLI block")
	require.NotEmpty(t, creds, "a credentials block")

	a := startAuth(t, backend{name: "embedded"})
	script := strings.ReplaceAll(creds, "https://tagq.internal:9324", "http://"+a.proc.SQS)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "TAGQ_API_KEY="+e2eAdminKey)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var got map[string]string
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Equal(t, "bootstrap", got["aws_access_key_id"])
	require.Equal(t, "admin", got["principal"])
	require.Len(t, got["aws_secret_access_key"], 43)

	if os.Getenv("TAGQ_SQS_CLIENT_TESTS") == "" {
		t.Skip("TAGQ_SQS_CLIENT_TESTS=1 runs the aws CLI and boto3 snippets")
	}
	d := start(t, backend{name: "embedded"})
	cmd = exec.Command("bash", "-euo", "pipefail", "-c", strings.ReplaceAll(cli, "localhost:9324", d.proc.SQS))
	cmd.Env = append(withoutAWS(os.Environ()), "PATH=/usr/bin:"+os.Getenv("PATH"), "HOME="+t.TempDir())
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), `"Body": "invoice 7"`, "the audit tag's copy")

	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	sec := string(raw)[strings.Index(string(raw), "\n## SQS compatibility"):]
	py := regexp.MustCompile("(?s)```python\n(.*?)```").FindStringSubmatch(sec)
	require.NotNil(t, py, "a python block")
	cmd = exec.Command("/usr/bin/python3", "-c", strings.ReplaceAll(py[1], "localhost:9324", d.proc.SQS))
	cmd.Env = append(withoutAWS(os.Environ()), "HOME="+t.TempDir())
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "receipt 1 north\n", string(out))
}
