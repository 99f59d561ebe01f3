package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// bodyOf decodes a message's body from its JSON form (base64).
func bodyOf(t *testing.T, m map[string]any) string {
	t.Helper()
	s, _ := m["body"].(string)
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return string(b)
}

func TestCLI_DeadRefusesAQueueThatIsNotADLQ(t *testing.T) {
	t.Cleanup(func() {
		runTagq(t, "", "queue", "delete", "cli-notdlq")
		runTagq(t, "", "queue", "delete", "cli-notdlq-dlq", "--force")
		runTagq(t, "", "queue", "delete", "cli-plain")
	})
	ok(t, "queue", "create", "cli-notdlq-dlq", "--dead-letter-queue")
	ok(t, "queue", "create", "cli-notdlq", "--redrive-to", "cli-notdlq-dlq")
	ok(t, "queue", "create", "cli-plain")
	ok(t, "send", "cli-notdlq", "x")
	ok(t, "send", "cli-plain", "y")

	out, errs, code := runTagq(t, "", "dead", "cli-notdlq")
	require.Equal(t, 1, code)
	require.Empty(t, out, "no rows")
	require.Contains(t, errs, "queue cli-notdlq is not a dead-letter queue")
	require.Contains(t, errs, "tagq dead cli-notdlq-dlq", "points at its DLQ")
	out, errs, code = runTagq(t, "", "dead", "cli-plain")
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, errs, "queue cli-plain is not a dead-letter queue")

	// A message sent straight to a DLQ has no dead-letter data: its unset
	// fields print as "-", never as 1970.
	ok(t, "send", "cli-notdlq-dlq", "sent directly")
	table := ok(t, "dead", "cli-notdlq-dlq")
	require.NotContains(t, table, "1970")
	require.Regexp(t, `\S+\s+-\s+-\s+0\s+-\s+-\s+-\s+sent directly`, table)
}

// `dead --max` says when there are more than it shows, on stderr, and
// never truncates silently.
func TestCLI_DeadSaysWhenItShowsOnlySome(t *testing.T) {
	t.Cleanup(func() {
		runTagq(t, "", "queue", "delete", "cli-dead-src")
		runTagq(t, "", "queue", "delete", "cli-dead-many", "--force")
	})
	ok(t, "queue", "create", "cli-dead-many", "--dead-letter-queue")
	ok(t, "queue", "create", "cli-dead-src", "--redrive-to", "cli-dead-many")
	ok(t, "send", "cli-dead-src", "one", "two", "three")
	for _, m := range jsonLines(t, ok(t, "receive", "cli-dead-src", "--max", "10", "-o", "json")) {
		ok(t, "dead-letter", m["receipt_handle"].(string), "--reason", "TEST")
	}
	out, errs, code := runTagq(t, "", "dead", "cli-dead-many", "--max", "2", "-o", "json")
	require.Equal(t, 0, code, errs)
	require.Len(t, jsonLines(t, out), 2)
	require.Contains(t, errs, "showing the first 2 of 3 dead letters available in cli-dead-many")

	out, errs, code = runTagq(t, "", "dead", "cli-dead-many")
	require.Equal(t, 0, code, errs)
	require.Empty(t, errs, "all shown: no note")
	require.Equal(t, 4, strings.Count(out, "\n"), "a header and three rows: %s", out)
	require.Regexp(t, `cli-dead-src\s+default\s+1\s+TEST\s+20\d\d-`, out, "with the time it died")
}

func TestCLI_TagGetShowsEverything(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-tagget") })
	ok(t, "queue", "create", "cli-tagget")
	ok(t, "tag", "create", "cli-tagget", "eu", "--filter", "region=eu", "--filter", "vip", "--or",
		"--from", "2026-01-02T03:04:05Z")
	ok(t, "tag", "create", "cli-tagget", "all", "--from-oldest")
	ok(t, "send", "cli-tagget", "hello", "--attr", "region=eu")

	out := ok(t, "tag", "get", "cli-tagget", "eu")
	require.Regexp(t, `name\s+eu\n`, out)
	require.Regexp(t, `created\s+20\d\d-\d\d-\d\dT`, out)
	require.Regexp(t, `reads\s+messages sent from 2026-01-02T03:04:05Z\n`, out)
	require.Regexp(t, `filter\s+region=eu OR vip\n`, out)
	require.Regexp(t, `visibility\s+the queue's\n`, out)
	require.Regexp(t, `available\s+1\n`, out)
	require.Regexp(t, `oldest available age\s+\d+s\n`, out)
	require.Regexp(t, `received total\s+0\n`, out)

	out = ok(t, "tag", "get", "cli-tagget", "all")
	require.Regexp(t, `reads\s+the oldest retained message\n`, out)
	require.Regexp(t, `filter\s+none`, out)
	out = ok(t, "tag", "get", "cli-tagget", "default")
	require.Regexp(t, `reads\s+messages sent from its creation on\n`, out)

	// JSON is the API's Tag, as before.
	js := jsonLines(t, ok(t, "tag", "get", "cli-tagget", "eu", "-o", "json"))
	require.Len(t, js, 1)
	require.Equal(t, "eu", js[0]["name"])
	require.Equal(t, "2026-01-02T03:04:05Z", js[0]["start_time"])
	require.Equal(t, "OPERATOR_OR", js[0]["filter"].(map[string]any)["operator"])
	require.Equal(t, "1", js[0]["state"].(map[string]any)["available"], "int64 as a string, as protojson writes it")
}

func TestCLI_SendFile(t *testing.T) {
	t.Cleanup(func() {
		runTagq(t, "", "queue", "delete", "cli-file")
		runTagq(t, "", "queue", "delete", "cli-file-small")
	})
	ok(t, "queue", "create", "cli-file")
	body := "line one\nline two\n\x00\xff binary too"
	path := filepath.Join(t.TempDir(), "body.bin")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	ok(t, "send", "cli-file", "--file", path, "--attr", "kind=file")
	out, errs, code := runTagq(t, "from stdin\nstill one message", "send", "cli-file", "--file", "-")
	require.Equal(t, 0, code, errs)
	require.Len(t, strings.Fields(out), 1, "one message id")
	msgs := jsonLines(t, ok(t, "receive", "cli-file", "--max", "10", "-o", "json"))
	require.Len(t, msgs, 2, "each file is one message, newlines and all")
	require.Equal(t, body, bodyOf(t, msgs[0]))
	require.Equal(t, "file", msgs[0]["attributes"].(map[string]any)["kind"].(map[string]any)["string_value"])
	require.Equal(t, "from stdin\nstill one message", bodyOf(t, msgs[1]))

	_, errs, code = runTagq(t, "", "send", "cli-file", "--file", filepath.Join(t.TempDir(), "missing"))
	require.Equal(t, 2, code)
	require.Contains(t, errs, "no such file")

	// Over the queue's max_message_bytes: the server's error.
	cl, err := tagq.Dial(addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	mmb := int32(1024)
	_, err = cl.Queues.CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{
		Queue: &tagqv1.Queue{Name: "cli-file-small", MaxMessageBytes: &mmb}})
	require.NoError(t, err)
	big := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("x", 1025)), 0o600))
	_, errs, code = runTagq(t, "", "send", "cli-file-small", "--file", big)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "MESSAGE_TOO_LARGE")
}

// dead pages through PeekMessage: more than one page of 100, each once.
func TestCLI_DeadPagesPastOneHundred(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-dead-pages", "--force") })
	ok(t, "queue", "create", "cli-dead-pages", "--dead-letter-queue")
	bodies := make([]string, 130)
	for i := range bodies {
		bodies[i] = fmt.Sprintf("m%03d", i)
	}
	ok(t, append([]string{"send", "cli-dead-pages"}, bodies[:100]...)...)
	ok(t, append([]string{"send", "cli-dead-pages"}, bodies[100:]...)...)
	out, errs, code := runTagq(t, "", "dead", "cli-dead-pages", "--max", "1000", "-o", "json")
	require.Equal(t, 0, code, errs)
	require.Empty(t, errs)
	lines := jsonLines(t, out)
	require.Len(t, lines, 130)
	seen := map[string]bool{}
	for _, l := range lines {
		id := l["message_id"].(string)
		require.False(t, seen[id], "listed twice: %s", id)
		seen[id] = true
	}
	out, errs, code = runTagq(t, "", "dead", "cli-dead-pages", "--max", "120", "-o", "json")
	require.Equal(t, 0, code, errs)
	require.Len(t, jsonLines(t, out), 120)
	require.Contains(t, errs, "showing the first 120 of 130")
}
