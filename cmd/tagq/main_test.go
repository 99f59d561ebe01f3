package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/tagqdtest"
)

var addr string

func TestMain(m *testing.M) {
	// No test reads the config file of the user running it: TAGQ_CONFIG
	// names a file that does not exist unless a test writes its own.
	dir, err := os.MkdirTemp("", "tagq-cli-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("TAGQ_CONFIG", filepath.Join(dir, "absent.json"))
	for _, v := range []string{"TAGQ_CONTEXT", "TAGQ_ADDR", "TAGQ_CA", "TAGQ_CERT", "TAGQ_KEY", "TAGQ_TLS", "TAGQ_API_KEY"} {
		os.Unsetenv(v)
	}
	code := tagqdtest.Main(m.Run, &addr, nil)
	os.RemoveAll(dir)
	os.Exit(code)
}

// tagq runs one command line in-process against the test's tagqd.
func runTagq(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"--addr", addr}, args...), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := runTagq(t, "", args...)
	require.Equal(t, 0, code, "tagq %v: %s", args, errs)
	return out
}

func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var res []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		res = append(res, m)
	}
	return res
}

// The check for the CLI: a queue with two tags and a DLQ; send,
// receive on both tags, delete, dead-letter one, read its dead-letter data.
func TestCLI_QueueTagsSendReceiveDeleteDeadLetter(t *testing.T) {
	t.Cleanup(func() { // so the test can run again on the same tagqd (go test -count=N)
		runTagq(t, "", "queue", "delete", "cli-orders")
		runTagq(t, "", "queue", "delete", "cli-dlq", "--force")
	})
	ok(t, "queue", "create", "cli-dlq", "--dead-letter-queue")
	ok(t, "queue", "create", "cli-orders", "--redrive-to", "cli-dlq", "--max-receives", "3")
	ok(t, "tag", "create", "cli-orders", "billing")
	ok(t, "tag", "create", "cli-orders", "shipping")
	out, _, code := runTagq(t, "first\nsecond\n", "send", "cli-orders") // one message per stdin line
	require.Equal(t, 0, code)
	require.Len(t, strings.Fields(out), 2)
	ok(t, "send", "cli-orders", "third", "--attr", "region=eu")

	billing := jsonLines(t, ok(t, "receive", "cli-orders", "--tag", "billing", "--max", "10", "-o", "json"))
	require.Len(t, billing, 3)
	shipping := jsonLines(t, ok(t, "receive", "cli-orders", "--tag", "shipping", "--max", "10", "-o", "json"))
	require.Len(t, shipping, 3)
	for _, m := range billing {
		ok(t, "delete", m["receipt_handle"].(string))
	}
	ok(t, "dead-letter", shipping[0]["receipt_handle"].(string), "--reason", "BAD_ADDRESS", "--description", "no such street")

	table := ok(t, "dead", "cli-dlq")
	require.Contains(t, table, "cli-orders")
	require.Contains(t, table, "shipping")
	require.Contains(t, table, "BAD_ADDRESS")
	dead := jsonLines(t, ok(t, "dead", "cli-dlq", "-o", "json"))
	require.Len(t, dead, 1)
	dl := dead[0]["dead_letter"].(map[string]any)
	require.Equal(t, "cli-orders", dl["source_queue_name"])
	require.Equal(t, "shipping", dl["source_tag"])
	require.Equal(t, "no such street", dl["description"])
	require.Equal(t, shipping[0]["message_id"], dl["original_message_id"])

	tags := ok(t, "tag", "list", "cli-orders")
	require.Regexp(t, `billing\s+0\s+0\s+0\s+3\s+3\s+0\s+0`, tags)
	require.Regexp(t, `shipping\s+0\s+2\s+0\s+3\s+0\s+1\s+0`, tags)

	ok(t, "move", "start", "cli-dlq")
	require.Contains(t, ok(t, "move", "list", "cli-dlq"), "TASK")
}

func TestCLI_ErrorsAPersonCanActOn(t *testing.T) {
	_, errs, code := runTagq(t, "", "queue", "get", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "QUEUE_NOT_FOUND")
	require.Contains(t, errs, "tagq queue list")

	_, errs, code = runTagq(t, "", "queue", "create", "has space")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "INVALID_NAME")

	_, errs, code = runTagq(t, "", "receive", "x", "--max", "0")
	require.Equal(t, 2, code, "a usage error")
	require.Contains(t, errs, "--max must be between 1 and 100")

	_, _, code = runTagq(t, "", "frobnicate")
	require.Equal(t, 2, code)

	var out, errb bytes.Buffer
	code = run(context.Background(), []string{"--addr", "127.0.0.1:1", "queue", "list"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 1, code)
	require.Contains(t, errb.String(), "cannot reach tagqd at 127.0.0.1:1")
}

func TestCLI_EveryCommandHasHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"queue", "--help"}, {"queue", "create", "--help"}, {"tag", "create", "--help"},
		{"send", "--help"}, {"receive", "--help"}, {"tail", "--help"}, {"peek", "--help"}, {"dead", "--help"},
		{"dead-letter", "--help"}, {"move", "start", "--help"}, {"move", "list", "--help"}, {"move", "cancel", "--help"},
		{"access", "--help"}, {"access", "principals", "create", "--help"}, {"access", "keys", "issue", "--help"},
		{"access", "permissions", "set", "--help"}, {"nack", "--help"}, {"extend", "--help"}, {"tag", "get", "--help"},
		{"context", "--help"}, {"context", "set", "--help"}, {"context", "use", "--help"}, {"context", "list", "--help"},
		{"context", "delete", "--help"}} {
		out := ok(t, args...)
		require.Contains(t, out, "Usage:", "tagq %v", args)
	}
}

// A queue without a default tag and with a cap that drops the oldest.
func TestCLI_QueueWithoutDefaultTagAndACap(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-capped") })
	ok(t, "queue", "create", "cli-capped", "--no-default-tag", "--max-retained-messages", "2", "--drop-oldest")
	ok(t, "tag", "create", "cli-capped", "reader")
	ok(t, "send", "cli-capped", "one", "two", "three")
	q := ok(t, "queue", "get", "cli-capped")
	require.Regexp(t, `caps\s+2 messages, 0 bytes \(0: none\), OVERFLOW_POLICY_DROP_OLDEST`, q)
	require.Regexp(t, `retained messages\s+2\n`, q)
	require.Regexp(t, `dropped \(overflow\)\s+1\n`, q)
	require.NotContains(t, q, "default tag")
	got := jsonLines(t, ok(t, "receive", "cli-capped", "--tag", "reader", "--max", "10", "-o", "json"))
	require.Len(t, got, 2, "the oldest was dropped")
	_, errs, code := runTagq(t, "", "receive", "cli-capped")
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "no default tag")
}

func TestCLI_Version(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--version"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	require.Regexp(t, `^tagq \S+ \(revision [^,]+, go[0-9.]+\S*\)\n$`, out.String())
}

// An error of the Go client (which starts "tagq: ") is printed with one
// "tagq: ", not two.
func TestCLI_OnePrefix(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--addr", "127.0.0.1:1", "--ca", filepath.Join(t.TempDir(), "missing.pem"), "queue", "list"},
		strings.NewReader(""), &out, &errb)
	require.Equal(t, 1, code)
	require.Regexp(t, `^tagq: CA file: open \S*missing.pem: no such file or directory\n$`, errb.String())
}

// send --dedup-id: a repeat within the window prints the first message's
// id and stores nothing; the flag names one message.
func TestCLI_SendDedupID(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-dedup") })
	ok(t, "queue", "create", "cli-dedup")
	first := strings.TrimSpace(ok(t, "send", "cli-dedup", "--dedup-id", "order-1", "a"))
	require.NotEmpty(t, first)
	require.Equal(t, first, strings.TrimSpace(ok(t, "send", "cli-dedup", "--dedup-id", "order-1", "a, again")))
	_, errs, code := runTagq(t, "", "send", "cli-dedup", "--dedup-id", "order-2", "x", "y")
	require.Equal(t, 2, code, "a usage error: %s", errs)
	require.Contains(t, errs, "--dedup-id")
	_, errs, code = runTagq(t, "", "send", "cli-dedup", "--dedup-id", "no spaces", "x")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "deduplication_id")
	got := jsonLines(t, ok(t, "receive", "cli-dedup", "--max", "10", "-o", "json"))
	require.Len(t, got, 1)
	require.Equal(t, first, got[0]["message_id"])
}

// Rate quotas: set on create, shown by get, changed by update; a tag's own.
func TestCLI_RateQuotas(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-quota") })
	ok(t, "queue", "create", "cli-quota", "--write-quota", "5", "--read-quota", "2")
	require.Regexp(t, `quotas\s+write 5/s, read 2/s per tag \(0: none\)`, ok(t, "queue", "get", "cli-quota"))
	ok(t, "queue", "update", "cli-quota", "--write-quota", "0")
	require.Regexp(t, `quotas\s+write 0/s, read 2/s per tag`, ok(t, "queue", "get", "cli-quota"))
	ok(t, "tag", "create", "cli-quota", "bulk", "--read-quota", "0")
	require.Regexp(t, `read quota\s+0/s`, ok(t, "tag", "get", "cli-quota", "bulk"))
	require.NotContains(t, ok(t, "tag", "get", "cli-quota", "default"), "read quota")
	_, errs, code := runTagq(t, "", "queue", "update", "cli-quota")
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "--write-quota")
}

// Priority queues: created with --priority-queue, shown by get; send
// --priority orders what each tag receives.
func TestCLI_PriorityQueue(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-prio") })
	ok(t, "queue", "create", "cli-prio", "--priority-queue")
	require.Regexp(t, `priority queue\s+yes`, ok(t, "queue", "get", "cli-prio"))
	ok(t, "send", "cli-prio", "--priority", "12", "report")
	ok(t, "send", "cli-prio", "plain")
	ok(t, "send", "cli-prio", "--priority", "1", "page-1", "page-2")
	_, errs, code := runTagq(t, "", "send", "cli-prio", "--priority", "17", "bad")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "priority")
	got := jsonLines(t, ok(t, "receive", "cli-prio", "--max", "10", "-o", "json"))
	require.Len(t, got, 4)
	var order []string
	for _, m := range got {
		order = append(order, fmt.Sprintf("%v", m["priority"]))
	}
	require.Equal(t, []string{"1", "1", "8", "12"}, order)
}

// Topic queues: created with --topic-queue, shown by get; send --topic
// orders a topic's messages, one received at a time.
func TestCLI_TopicQueue(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-topics") })
	ok(t, "queue", "create", "cli-topics", "--topic-queue")
	require.Regexp(t, `topic queue\s+yes`, ok(t, "queue", "get", "cli-topics"))
	ok(t, "send", "cli-topics", "--topic", "account-42", "debit-1", "credit-1")
	ok(t, "send", "cli-topics", "--topic", "account-7", "debit-2")
	_, errs, code := runTagq(t, "", "send", "cli-topics", "no-topic")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "topic")
	got := jsonLines(t, ok(t, "receive", "cli-topics", "--max", "10", "-o", "json"))
	require.Len(t, got, 2, "one per topic")
	require.Equal(t, "account-42", got[0]["topic"])
	require.Equal(t, "account-7", got[1]["topic"])
}

// queue list counts every tag, not the default tag only: a queue read by
// named tags (no default tag) shows its backlog; AVAILABLE is the tag
// furthest behind, IN FLIGHT the sum.
func TestCLI_QueueListCountsEveryTag(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-listed") })
	ok(t, "queue", "create", "cli-listed", "--no-default-tag")
	ok(t, "tag", "create", "cli-listed", "fast")
	ok(t, "tag", "create", "cli-listed", "slow")
	ok(t, "send", "cli-listed", "a", "b", "c")
	ok(t, "receive", "cli-listed", "--tag", "fast", "--max", "3", "--delete")
	ok(t, "receive", "cli-listed", "--tag", "slow", "--max", "1")
	ok(t, "receive", "cli-listed", "--tag", "fast", "--max", "1") // nothing left for fast
	out := ok(t, "queue", "list", "--contains", "li-liste")
	require.Regexp(t, `(?m)^QUEUE\s+TAGS\s+MESSAGES\s+AVAILABLE \(MAX TAG\)\s+IN FLIGHT \(ALL TAGS\)\s+PARTITIONS\s+DLQ$`, out)
	require.Regexp(t, `(?m)^cli-listed\s+2\s+3\s+2\s+1\s+1\s*$`, out, "slow has 2 available and 1 in flight; fast none")
	got := jsonLines(t, ok(t, "queue", "list", "--prefix", "cli-listed", "-o", "json"))
	require.Len(t, got, 1)
	require.Len(t, got[0]["tags"], 2, "JSON carries the tags")
}

// Retry backoff: set on create and update, shown by get, removed; bad
// flags refused before any call, a bad range by the server with its field;
// nack --backoff takes the queue's policy.
func TestCLI_RetryBackoff(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-retry") })
	ok(t, "queue", "create", "cli-retry", "--retry-min", "2s", "--retry-max", "1m")
	require.Regexp(t, `retry backoff\s+2s to 1m0s, exponential with jitter`, ok(t, "queue", "get", "cli-retry"))
	ok(t, "queue", "update", "cli-retry", "--retry-min", "0s", "--retry-max", "0s")
	require.Regexp(t, `retry backoff\s+0s to 0s`, ok(t, "queue", "get", "cli-retry"))

	// --backoff on a queue whose backoff is 0: back at once, count 2.
	ok(t, "send", "cli-retry", "m")
	h := jsonLines(t, ok(t, "receive", "cli-retry", "-o", "json"))[0]["receipt_handle"].(string)
	require.Contains(t, ok(t, "nack", h, "--backoff"), "nacked with backoff 1 of 1 (visible again after the queue's retry backoff)")
	again := jsonLines(t, ok(t, "receive", "cli-retry", "-o", "json"))
	require.Len(t, again, 1)
	require.EqualValues(t, 2, again[0]["receive_count"])
	_, errs, code := runTagq(t, "", "nack", h, "--backoff", "--delay", "5s")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "--delay or --backoff")

	ok(t, "queue", "update", "cli-retry", "--no-retry")
	require.NotContains(t, ok(t, "queue", "get", "cli-retry"), "retry backoff")

	for _, args := range [][]string{
		{"queue", "update", "cli-retry", "--retry-min", "1s"},
		{"queue", "update", "cli-retry", "--retry-min", "1500ms", "--retry-max", "2s"},
		{"queue", "update", "cli-retry", "--retry-min", "1s", "--retry-max", "2s", "--no-retry"},
	} {
		_, errs, code := runTagq(t, "", args...)
		require.Equal(t, 2, code, "%v: %s", args, errs)
		require.Contains(t, errs, "--retry", "%v", args)
	}
	_, errs, code = runTagq(t, "", "queue", "update", "cli-retry", "--retry-min", "1m", "--retry-max", "1s")
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, "INVALID_ARGUMENT_RANGE")
	require.Contains(t, errs, "max_backoff_seconds")
}
