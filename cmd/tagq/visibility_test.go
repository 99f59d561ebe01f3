package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/tagqdtest"
)

// receiveHandles receives up to max messages for the default tag, hidden
// for an hour, and returns their receipt handles.
func receiveHandles(t *testing.T, target, queue string, max int) []string {
	t.Helper()
	out, errs, code := runAt(target, "receive", queue, "--max", fmt.Sprint(max), "--visibility", "1h", "-o", "json")
	require.Equal(t, 0, code, errs)
	var hs []string
	for _, m := range jsonLines(t, out) {
		hs = append(hs, m["receipt_handle"].(string))
	}
	return hs
}

func TestCLI_NackMakesMessagesVisibleAgainAtOnce(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-nack") })
	ok(t, "queue", "create", "cli-nack")
	ok(t, "send", "cli-nack", "a", "b")
	hs := receiveHandles(t, addr, "cli-nack", 10)
	require.Len(t, hs, 2)
	require.Regexp(t, `default\s+0\s+2\s`, ok(t, "tag", "list", "cli-nack"), "both hidden for an hour")

	require.Equal(t, "nacked 1 of 1 (visible again now)\n", ok(t, "nack", hs[0]))
	again := jsonLines(t, ok(t, "receive", "cli-nack", "--max", "10", "-o", "json"))
	require.Len(t, again, 1, "only the nacked one came back")
	require.Equal(t, "a", bodyOf(t, again[0]))
	require.EqualValues(t, 2, again[0]["receive_count"])

	// The old handle of "a" is stale now: reported, the valid one still
	// changes, and the exit code says something failed.
	out, errs, code := runTagq(t, "", "nack", hs[0], hs[1], "--delay", "30s")
	require.Equal(t, 1, code)
	require.Equal(t, "nacked 1 of 2 (visible again in 30s)\n", out)
	require.Contains(t, errs, hs[0]+": ")
	require.Contains(t, errs, "RECEIPT_HANDLE_STALE")
	require.NotContains(t, errs, hs[1])
	require.Contains(t, errs, "1 of 2 receipt handles failed")

	// Per handle in JSON; a handle that is not one fails on its own too.
	out, errs, code = runTagq(t, "", "nack", "not-a-handle", hs[1], "-o", "json")
	require.Equal(t, 1, code, errs)
	res := jsonLines(t, out)
	require.Len(t, res, 2)
	require.Equal(t, false, res[0]["ok"])
	require.NotEmpty(t, res[0]["reason"])
	require.Equal(t, hs[1], res[1]["receipt_handle"])
	require.Equal(t, true, res[1]["ok"])
	require.Len(t, jsonLines(t, ok(t, "receive", "cli-nack", "--max", "10", "-o", "json")), 1, "b is back")
}

// More than 100 handles go in batches of 100; handles may come from stdin.
func TestCLI_NackManyHandlesFromStdin(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-nack-many") })
	ok(t, "queue", "create", "cli-nack-many")
	_, errs, code := runTagq(t, strings.Repeat("m\n", 150), "send", "cli-nack-many")
	require.Equal(t, 0, code, errs)
	hs := append(receiveHandles(t, addr, "cli-nack-many", 100), receiveHandles(t, addr, "cli-nack-many", 100)...)
	require.Len(t, hs, 150)
	out, errs, code := runTagq(t, strings.Join(hs, "\n")+"\n", "nack", "-")
	require.Equal(t, 0, code, errs)
	require.Equal(t, "nacked 150 of 150 (visible again now)\n", out)
	require.Regexp(t, `default\s+150\s+0\s`, ok(t, "tag", "list", "cli-nack-many"))
}

func TestCLI_NackExtendUsage(t *testing.T) {
	for _, args := range [][]string{
		{"nack"},                                  // no handle
		{"nack", "h", "--delay", "1500ms"},        // not whole seconds
		{"nack", "h", "--delay", "-1s"},           // negative
		{"extend", "h"},                           // no --by
		{"extend", "h", "--by", "13h"},            // beyond the API's 12h
		{"extend", "h", "--by", "bogus"},          // not a duration
		{"delete"},                                // no handle
		{"dead-letter", "q", "h"},                 // the queue is --queue now
		{"send", "q", "body", "--file", "x.json"}, // both
		{"dead", "q", "--max", "100001"},          // beyond what dead lists
		{"context", "set", "has space", "--addr", "x"},
	} {
		_, errs, code := runTagq(t, "", args...)
		require.Equal(t, 2, code, "tagq %v: %s", args, errs)
	}
	_, errs, code := runTagq(t, "", "nack", "-")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "no receipt handles on standard input")
}

// extend and nack --delay move the deadline to now + the duration; the
// queue's clock is driven through Redis (test_clock_ms), so this runs on
// real Redis only (TAGQ_TEST_REDIS_URL).
func TestCLI_ExtendAndNackDelayOnADrivenClock(t *testing.T) {
	url := os.Getenv("TAGQ_TEST_REDIS_URL")
	if url == "" {
		t.Skip("driving tagqd's clock needs a shared Redis: set TAGQ_TEST_REDIS_URL")
	}
	prefix := fmt.Sprintf("tagq-cli-test-%d", time.Now().UnixNano())
	d, err := tagqdtest.Start(tagqdtest.Binary, "--redis-url", url, "--key-prefix", prefix, "--test-clock")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = d.Stop()
		require.NoError(t, tagqdtest.DeletePrefix(url, prefix))
	})
	opt, err := redis.ParseURL(url)
	require.NoError(t, err)
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	var t0 time.Time
	at := func(after time.Duration) {
		t.Helper()
		require.NoError(t, rdb.HSet(context.Background(), prefix+":{cli-vis}:m", "test_clock_ms", t0.Add(after).UnixMilli()).Err())
	}
	okAt := func(args ...string) string {
		t.Helper()
		out, errs, code := runAt(d.GRPC, args...)
		require.Equal(t, 0, code, "tagq %v: %s", args, errs)
		return out
	}
	received := func() []map[string]any {
		t.Helper()
		return jsonLines(t, okAt("receive", "cli-vis", "--max", "10", "-o", "json"))
	}

	okAt("queue", "create", "cli-vis", "--visibility", "30s")
	// The clock starts after the tag's creation (a receive dated before
	// it would belong to an earlier tag of the same name).
	t0 = time.Now().Add(time.Second)
	at(0)
	okAt("send", "cli-vis", "slow work")
	first := received()
	require.Len(t, first, 1)
	require.Equal(t, "extended 1 of 1 (hidden for 2m0s from now)\n",
		okAt("extend", first[0]["receipt_handle"].(string), "--by", "2m", "--queue", "cli-vis"))
	at(time.Minute) // past the 30 s visibility timeout, before the extension ends
	require.Empty(t, received(), "extended past its visibility timeout")
	at(2*time.Minute + time.Second)
	second := received()
	require.Len(t, second, 1, "visible once the extension ended")
	require.EqualValues(t, 2, second[0]["receive_count"])

	okAt("nack", second[0]["receipt_handle"].(string), "--delay", "10s")
	at(2*time.Minute + 10*time.Second)
	require.Empty(t, received(), "hidden for the delay")
	at(2*time.Minute + 12*time.Second)
	third := received()
	require.Len(t, third, 1, "visible after the delay")
	require.EqualValues(t, 3, third[0]["receive_count"])
}

// S3: the commands on receipt handles take handles only: handles of
// several queues in one command each act on their own queue; --queue,
// when given, must be each handle's; a queue given the old way (as the
// first argument) is explained.
func TestCLI_HandlesOfSeveralQueues(t *testing.T) {
	for _, q := range []string{"cli-h1", "cli-h2"} {
		t.Cleanup(func() { runTagq(t, "", "queue", "delete", q) })
		ok(t, "queue", "create", q)
		ok(t, "send", q, "a", "b")
	}
	h1, h2 := receiveHandles(t, addr, "cli-h1", 10), receiveHandles(t, addr, "cli-h2", 10)
	require.Len(t, h1, 2)
	require.Len(t, h2, 2)

	require.Equal(t, "nacked 2 of 2 (visible again now)\n", ok(t, "nack", h1[0], h2[0]))
	require.Regexp(t, `default\s+1\s+1\s`, ok(t, "tag", "list", "cli-h1"))
	require.Regexp(t, `default\s+1\s+1\s`, ok(t, "tag", "list", "cli-h2"))

	out, errs, code := runTagq(t, "", "delete", h1[1], h2[1], "--queue", "cli-h1")
	require.Equal(t, 1, code, errs)
	require.Equal(t, "deleted 1 of 2\n", out)
	require.Contains(t, errs, h2[1]+": ")
	require.Contains(t, errs, `receipt handle belongs to queue "cli-h2", not "cli-h1"`)
	out, errs, code = runTagq(t, h2[1]+"\n", "delete", "-", "--queue", "cli-h2")
	require.Equal(t, 0, code, errs)
	require.Equal(t, "deleted 1\n", out)
	require.Regexp(t, `default\s+1\s+0\s`, ok(t, "tag", "list", "cli-h1"))
	require.Regexp(t, `default\s+1\s+0\s`, ok(t, "tag", "list", "cli-h2"))

	_, errs, code = runTagq(t, "", "delete", "cli-h1", h1[1])
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, "if that is a queue: commands on receipt handles take handles only")
}
