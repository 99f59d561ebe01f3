package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// tagq queue create --partitions: get and list show the count; every
// message reaches the tag once; a count out of range or on a priority
// queue is refused naming the field.
func TestCLI_QueuePartitions(t *testing.T) {
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-parts") })
	out := ok(t, "queue", "create", "cli-parts", "--partitions", "4")
	require.Regexp(t, `(?m)^cli-parts\s+1\s+0\s+0\s+0\s+4\s*$`, out)
	require.Regexp(t, `(?m)^partitions\s+4: every tag reads each`, ok(t, "queue", "get", "cli-parts"))
	require.Regexp(t, `(?m)^cli-parts\s+1\s+0\s+0\s+0\s+4\s*$`, ok(t, "queue", "list", "--prefix", "cli-parts"))
	js := jsonLines(t, ok(t, "queue", "get", "cli-parts", "-o", "json"))
	require.Equal(t, float64(4), js[0]["partitions"])

	for range 4 { // one batch each: they rotate over the partitions
		ok(t, "send", "cli-parts", "a", "b")
	}
	require.Regexp(t, `(?m)^cli-parts\s+1\s+8\s+8\s+0\s+4\s*$`, ok(t, "queue", "list", "--prefix", "cli-parts"))
	got := map[string]int{}
	for range 8 {
		for _, m := range jsonLines(t, ok(t, "receive", "cli-parts", "--max", "10", "--delete", "-o", "json")) {
			got[m["body"].(string)]++
		}
		if len(got) == 2 && got["YQ=="]+got["Yg=="] == 8 {
			break
		}
	}
	require.Equal(t, map[string]int{"YQ==": 4, "Yg==": 4}, got, "JSON bodies are base64: a and b")

	_, errs, code := runTagq(t, "", "queue", "create", "cli-parts-bad", "--partitions", "0")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "--partitions: 1-64")
	for _, args := range [][]string{{"--partitions", "65"}, {"--partitions", "-1"}, {"--partitions", "2", "--priority-queue"},
		{"--partitions", "2", "--dead-letter-queue"}} {
		_, errs, code = runTagq(t, "", append([]string{"queue", "create", "cli-parts-bad"}, args...)...)
		require.Equal(t, 1, code, "%v: %s", args, errs)
		require.Contains(t, errs, "queue.partitions", args)
	}
	_, _, code = runTagq(t, "", "queue", "get", "cli-parts-bad")
	require.Equal(t, 1, code, "nothing created")
	t.Cleanup(func() { runTagq(t, "", "queue", "delete", "cli-parts-one") })
	ok(t, "queue", "create", "cli-parts-one")
	require.Regexp(t, `(?m)^partitions\s+1$`, ok(t, "queue", "get", "cli-parts-one"))
}
