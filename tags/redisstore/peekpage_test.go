package redisstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

func TestPeekPage_RefusesPositionsItDidNotIssue(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "m")
		for _, pos := range []string{"x", "x1", "v-1", "v01", "v", "p1.5", "s1-", "sfoo"} {
			_, _, err := b.s.PeekPage(b.ctx, "q", "", 1, pos)
			e, ok := tags.AsError(err)
			require.True(t, ok, pos)
			require.Equal(t, "page_token", e.Field, pos)
		}
		msgs, next, err := b.s.PeekPage(b.ctx, "q", "", 1, "s")
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		require.Empty(t, next)
	})
}
