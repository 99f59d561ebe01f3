package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every wait here is bounded: a regression fails, never hangs.
const wait = 15 * time.Second

// lockedBuffer is an output a running command writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tail runs `tagq tail` until it has printed n lines, then interrupts it
// (cancels its context) and returns its output and exit code, and when
// each line was seen (within 5 ms).
func tail(t *testing.T, n int, args ...string) (string, string, int, []time.Time) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errs lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"--addr", addr, "tail"}, args...), strings.NewReader(""), &out, &errs)
	}()
	var seen []time.Time
	require.Eventually(t, func() bool {
		for l := strings.Count(out.String(), "\n"); len(seen) < l; {
			seen = append(seen, time.Now())
		}
		return len(seen) >= n
	}, wait, 5*time.Millisecond, "tail printed %d lines: %q %q", n, &out, &errs)
	cancel()
	select {
	case c := <-code:
		return out.String(), errs.String(), c, seen
	case <-time.After(wait):
		t.Fatal("tail did not stop when interrupted")
	}
	return "", "", -1, nil
}

func TestCLI_TailDeletePrintsAndDeletes(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-tail") })
	ok(t, "queue", "create", "cli-tail")
	ok(t, "tag", "create", "cli-tail", "audit")
	ok(t, "send", "cli-tail", "one", "two", "three")
	out, errs, code, _ := tail(t, 3, "cli-tail", "--tag", "audit", "--delete")
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `(?s)\tone\n.*\ttwo\n.*\tthree\n`, out, "in the order sent")
	require.Regexp(t, `audit\s+0\s+0\s+0\s+3\s+3\s`, ok(t, "tag", "list", "cli-tail"), "all three deleted")
	require.Regexp(t, `default\s+3\s+0\s`, ok(t, "tag", "list", "cli-tail"), "other tags untouched")
}

// Without --delete, a printed message stays hidden for its visibility
// timeout (as a received message would) and then comes again.
func TestCLI_TailKeepsWhatItDoesNotDelete(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-tail-keep") })
	ok(t, "queue", "create", "cli-tail-keep", "--visibility", "1s")
	ok(t, "send", "cli-tail-keep", "again")
	out, errs, code, seen := tail(t, 2, "cli-tail-keep", "-o", "json")
	require.Equal(t, 0, code, errs)
	require.GreaterOrEqual(t, seen[1].Sub(seen[0]), 900*time.Millisecond, "not given back at once")
	msgs := jsonLines(t, out)
	require.Len(t, msgs, 2)
	require.Equal(t, "YWdhaW4=", msgs[0]["body"], "JSON bodies are base64")
	require.EqualValues(t, 1, msgs[0]["receive_count"])
	require.EqualValues(t, 2, msgs[1]["receive_count"], "the same message, after its visibility timeout")
	require.Equal(t, msgs[0]["message_id"], msgs[1]["message_id"])
	require.Regexp(t, `default\s+\d+\s+\d+\s+\d+\s+\d+\s+0\s`, ok(t, "tag", "list", "cli-tail-keep"), "nothing deleted")
}

func TestCLI_TailMissingQueueOrTag(t *testing.T) {
	_, errs, code := runTagq(t, "", "tail", "no-such-queue")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "QUEUE_NOT_FOUND")
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-tail-notag") })
	ok(t, "queue", "create", "cli-tail-notag")
	_, errs, code = runTagq(t, "", "tail", "cli-tail-notag", "--tag", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "TAG_NOT_FOUND")
}
