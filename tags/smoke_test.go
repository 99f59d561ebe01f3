package tags

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("orders")
		b.tag("orders", "a")
		b.tag("orders", "b")
		b.send("orders", "m1", "m2", "m3")
		ma := b.receive("orders", "a", 10)
		require.Equal(t, []string{"m1", "m2", "m3"}, bodies(ma))
		mb := b.receive("orders", "b", 10)
		require.Equal(t, []string{"m1", "m2", "m3"}, bodies(mb))
		b.del("orders", ma...)
		require.Equal(t, TagState{DeletedTotal: 3, ReceivedTotal: 3}, b.state("orders", "a"))
		require.Equal(t, TagState{InFlight: 3, ReceivedTotal: 3}, b.state("orders", "b"))
		require.Equal(t, TagState{Available: 3}, b.state("orders", "default"))
	})
}
