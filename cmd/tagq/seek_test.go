package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tagq tag seek: back to the oldest, to a message id, to now; the target
// must be one flag; a message not retained is MESSAGE_NOT_FOUND.
func TestCLI_TagSeek(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-seek") })
	ok(t, "queue", "create", "cli-seek", "--retain-acked")
	require.Contains(t, ok(t, "queue", "get", "cli-seek"), "retain acked")
	ids := strings.Fields(ok(t, "send", "cli-seek", "one", "two", "three"))
	require.Len(t, ids, 3)
	for _, m := range jsonLines(t, ok(t, "receive", "cli-seek", "--max", "10", "-o", "json")) {
		ok(t, "delete", m["receipt_handle"].(string))
	}

	require.Regexp(t, `(?m)^default\s+3\s+0\s+0\s+3\s+3\s+0\s+0$`, ok(t, "tag", "seek", "cli-seek", "default", "--oldest"))
	require.Regexp(t, `(?m)^default\s+2\s+0\s+0\s+3\s+3\s+0\s+0$`,
		ok(t, "tag", "seek", "cli-seek", "default", "--message-id", ids[1]))
	got := jsonLines(t, ok(t, "receive", "cli-seek", "--max", "10", "-o", "json"))
	require.Len(t, got, 2)
	require.Equal(t, ids[1], got[0]["message_id"])
	require.Regexp(t, `(?m)^default\s+0\s+0\s+0\s+5\s+3\s+0\s+0$`, ok(t, "tag", "seek", "cli-seek", "default", "--now"))
	require.Regexp(t, `(?m)^default\s+3\s+0\s+0\s+5\s+3\s+0\s+0$`, ok(t, "tag", "seek", "cli-seek", "default", "--ago", "1h"))
	js := jsonLines(t, ok(t, "tag", "seek", "cli-seek", "default", "--time", "2000-01-01T00:00:00Z", "-o", "json"))
	require.Equal(t, "default", js[0]["name"])

	_, errs, code := runTagq(t, "", "tag", "seek", "cli-seek", "default")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "--message-id")
	_, errs, code = runTagq(t, "", "tag", "seek", "cli-seek", "default", "--oldest", "--now")
	require.Equal(t, 2, code, errs)
	_, errs, code = runTagq(t, "", "tag", "seek", "cli-seek", "default", "--time", "yesterday")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "RFC 3339")
	_, errs, code = runTagq(t, "", "tag", "seek", "cli-seek", "default", "--message-id", "1-1")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "MESSAGE_NOT_FOUND")
}
