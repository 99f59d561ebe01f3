package tags

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A consume stream's reader whose stream has ended (its context) must not
// take messages: nobody is left to push them to, so they would be given
// back having been received for nothing, their receive count one higher
// (closer to the redrive policy) and received_total counting a delivery
// no client saw. The chaos test found this on every few clean closes of a
// Consume stream: a wake-up and the close arrived together.
func TestReader_EndedContextReceivesNothing(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "a", "b")
		r, err := b.s.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r.Close()
		ctx, cancel := context.WithCancel(b.ctx)
		cancel()
		msgs, err := r.Receive(ctx, 10)
		require.ErrorIs(t, err, context.Canceled)
		require.Empty(t, msgs)
		require.Equal(t, TagState{Available: 2}, b.state("q", "default"))

		// A live context still receives both, with receive count 1.
		msgs, err = r.Receive(b.ctx, 10)
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		for _, m := range msgs {
			require.EqualValues(t, 1, m.ReceiveCount)
		}
	})
}
