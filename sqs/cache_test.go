package sqs

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// answerOf is a receive answer of n messages of size bytes each.
func answerOf(n, size int) *receiveResult {
	r := &receiveResult{}
	for i := range n {
		r.Messages = append(r.Messages, sqsMessage{MessageID: strconv.Itoa(i), Body: strings.Repeat("z", size)})
	}
	return r
}

// The attempt cache is bounded by bytes, overall and per principal; an
// answer past its end is dropped when another is kept; an answer of
// messages visible at once is not kept.
func TestAttemptCache_Bounds(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	a := newAttemptCache(func() time.Time { return now })
	const mb = 1 << 20

	// Thirty answers of ten 1 MB messages (the review's probe): one
	// principal keeps what fits in its 16 MiB, the process at most 64 MiB.
	for i := range 30 {
		a.put("p1/"+strconv.Itoa(i), "p1", answerOf(10, mb), time.Minute)
	}
	require.LessOrEqual(t, a.bytes, int64(maxAttemptBytesPerPrincipal))
	require.Equal(t, 1, len(a.m), "16 MiB holds one answer of 10 MB")
	require.NotNil(t, a.get("p1/0"), "the first is kept; the later ones would go over")
	for p := range 10 {
		for i := range 3 {
			a.put("p"+strconv.Itoa(p)+"/x"+strconv.Itoa(i), "p"+strconv.Itoa(p), answerOf(5, mb), time.Minute)
		}
	}
	require.LessOrEqual(t, a.bytes, int64(maxAttemptBytes))
	for p, n := range a.of {
		require.LessOrEqual(t, n, int64(maxAttemptBytesPerPrincipal), p)
	}
	var total int64
	for _, at := range a.m {
		total += at.size
	}
	require.Equal(t, a.bytes, total)

	// Ended answers are dropped when another is kept, and a retry after
	// the end gets nothing.
	now = now.Add(2 * time.Minute)
	require.Nil(t, a.get("p1/0"))
	a.put("late", "q", answerOf(1, 10), time.Minute)
	require.Equal(t, 1, len(a.m), "only the new one is left")
	require.Equal(t, 1, a.byEnd.Len())
	require.NotNil(t, a.get("late"))

	// Visibility 0: not kept.
	a.put("zero", "q", answerOf(1, 10), 0)
	require.Nil(t, a.get("zero"))

	// The window is 5 minutes at most.
	a.put("long", "q", answerOf(1, 10), time.Hour)
	now = now.Add(attemptWindow)
	require.Nil(t, a.get("long"))
}
