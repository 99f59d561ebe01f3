package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	tagqsqs "github.com/tagq/tagq/sqs"
)

// The SQS endpoint driven by the clients of other languages, unmodified
// (sqs/clienttests): the AWS SDK for JavaScript v3 (npm, the JSON
// protocol), boto3 and the aws CLI as Debian ships them (the query
// protocol). Each runs against a real tagqd twice: on the embedded store
// with authentication off (any credentials), and with --auth (on Redis
// when TAGQ_TEST_REDIS_URL names one) signing with the SigV4 credentials of
// a tagq key. They need the clients installed, so they run only with
// TAGQ_SQS_CLIENT_TESTS=1 (.ci/run installs them: Debian's awscli and
// python3-boto3, and npm ci in sqs/clienttests/node).
func TestE2E_SQS_Clients(t *testing.T) {
	if os.Getenv("TAGQ_SQS_CLIENT_TESTS") == "" {
		t.Skip("TAGQ_SQS_CLIENT_TESTS=1 runs the JavaScript, boto3 and aws CLI suites (installed by .ci/run)")
	}
	t.Parallel()
	dir, err := filepath.Abs("../../sqs/clienttests")
	require.NoError(t, err)
	clients := []struct {
		name string
		cmd  []string
		cwd  string
	}{
		{"javascript", []string{"node", "--test"}, "node"},
		{"boto3", []string{"/usr/bin/python3", "test_boto3.py", "-v"}, "python"},
		{"aws-cli", []string{"bash", "test_cli.sh"}, "cli"},
	}
	for _, auth := range []bool{false, true} {
		name, be := "auth-off/embedded", backend{name: "embedded"}
		if auth {
			name = "auth-on/embedded"
			if url := os.Getenv("TAGQ_TEST_REDIS_URL"); url != "" {
				name, be = "auth-on/redis", backend{name: "redis", args: []string{"--redis-url", url}}
			}
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			be := prefixed(t, be)
			creds := anyCreds
			var d *daemon
			if auth {
				d = startAuth(t, be).daemon
				creds = sigV4Creds(t, d, e2eAdminKey)
			} else {
				d = start(t, be)
			}
			none := filepath.Join(t.TempDir(), "none") // no AWS config of the machine's
			for _, c := range clients {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				cmd := exec.CommandContext(ctx, c.cmd[0], c.cmd[1:]...)
				cmd.Dir = filepath.Join(dir, c.cwd)
				cmd.Env = append(withoutAWS(os.Environ()), "TAGQ_SQS_ENDPOINT=http://"+d.proc.SQS,
					"AWS_ACCESS_KEY_ID="+creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+creds.SecretAccessKey,
					"AWS_CONFIG_FILE="+none, "AWS_SHARED_CREDENTIALS_FILE="+none)
				out, err := cmd.CombinedOutput()
				cancel()
				require.NoError(t, err, "%s:\n%s", c.name, out)
				t.Logf("%s passed", c.name)
			}
		})
	}
}

// withoutAWS is env without AWS_* variables (a profile or token of the
// machine's would take the place of the test's credentials).
func withoutAWS(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "AWS_") {
			out = append(out, kv)
		}
	}
	return out
}

// sigV4Creds are an API key's SigV4 credentials, from the endpoint.
func sigV4Creds(t *testing.T, d *daemon, apiKey string) aws.Credentials {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+d.proc.SQS+tagqsqs.CredentialsPath, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var out struct {
		ID     string `json:"aws_access_key_id"`
		Secret string `json:"aws_secret_access_key"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return aws.Credentials{AccessKeyID: out.ID, SecretAccessKey: out.Secret}
}
