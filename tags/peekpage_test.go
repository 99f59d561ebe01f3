package tags

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// peekAll pages through what tag would receive, size at a time, and
// returns the ids in page order and the number of pages.
func peekAll(t *testing.T, b *bundle, q, tag string, size int) ([]string, int) {
	t.Helper()
	var ids []string
	from, pages := "", 0
	for {
		msgs, next, err := b.s.PeekPage(b.ctx, q, tag, size, from)
		require.NoError(t, err)
		pages++
		require.LessOrEqual(t, len(msgs), size)
		for _, m := range msgs {
			ids = append(ids, m.ID)
		}
		if next == "" {
			return ids, pages
		}
		require.Less(t, pages, 1000, "paging does not end")
		from = next
	}
}

// PeekMessage pages: every message available to the tag once, in the
// order a receive would take them (due redeliveries first), nothing
// received.
func TestPeekPage_ListsEveryAvailableMessageOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		var bodies []string
		for i := range 250 {
			bodies = append(bodies, fmt.Sprint(i))
		}
		sent := b.send("q", bodies[:100]...)
		sent = append(sent, b.send("q", bodies[100:200]...)...)
		sent = append(sent, b.send("q", bodies[200:]...)...)

		ids, pages := peekAll(t, b, "q", "", 100)
		require.Equal(t, sent, ids)
		require.Equal(t, 3, pages)
		ids, pages = peekAll(t, b, "q", "", 50) // exactly full pages: the last says no more
		require.Equal(t, sent, ids)
		require.Equal(t, 5, pages)
		require.EqualValues(t, 0, b.state("q", "default").ReceivedTotal, "peeking receives nothing")

		// Five received, their visibility passed: due redeliveries come
		// first, across pages of 2, then the never-received rest.
		got := b.receive("q", "", 5, func(o *ReceiveOptions) { o.VisibilitySeconds = i32(1) })
		require.Len(t, got, 5)
		b.advance("q", 2*time.Second)
		ids, _ = peekAll(t, b, "q", "", 2)
		require.Len(t, ids, 250)
		require.ElementsMatch(t, sent, ids)
		require.ElementsMatch(t, sent[:5], ids[:5], "the redeliveries first")
		require.Equal(t, sent[5:], ids[5:])
	})
}

func TestPeekPage_RefusesPositionsItDidNotIssue(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "m")
		for _, pos := range []string{"x", "x1", "v-1", "v01", "v", "p1.5", "s1-", "sfoo"} {
			_, _, err := b.s.PeekPage(b.ctx, "q", "", 1, pos)
			e, ok := AsError(err)
			require.True(t, ok, pos)
			require.Equal(t, "page_token", e.Field, pos)
		}
		msgs, next, err := b.s.PeekPage(b.ctx, "q", "", 1, "s")
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		require.Empty(t, next)
	})
}
