package redisstore

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// ordersWithDLQ: orders (tags default, billing, shipping) -> orders-dlq,
// max receive count 2, visibility 30 s.
func ordersWithDLQ(b *bundle) {
	b.queue("orders-dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
	b.queue("orders", func(c *tags.QueueConfig) {
		c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 2}
	})
	b.tag("orders", "billing")
	b.tag("orders", "shipping")
}

// stageDead dead-letters m (received once by tag) into queue's outbox
// without relaying it, as a crash right after the ack would leave it.
func stageDead(t *testing.T, b *bundle, queue, tag string, m tags.Message) {
	t.Helper()
	k := b.s.qkeys(queue)
	tk := k.tag(tag)
	res, err := scriptSettle.Run(b.ctx, b.rdb, []string{k.meta, k.stream, tk.state, tk.visible, tk.last, k.outbox, k.wake, tk.batches},
		queue, tag, 0, 1, 0, 0, "", m.ID, m.Delivery(queue).FirstMs, m.ReceiveCount, tags.ReasonConsumerDeadLettered, "").Int64Slice()
	require.NoError(t, err)
	require.Equal(t, []int64{0, 1}, res, "no topic made ready; staged")
}

func TestS7_RedriveFiresPerTagWithoutPolling(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		ids := b.sendMsgs("orders", tags.OutMessage{Body: []byte("order-1"),
			Attributes: map[string]tags.Attribute{"region": {String: "eu"}}})
		require.Len(t, b.receive("orders", "billing", 1), 1)
		b.del("orders", b.receive("orders", "shipping", 1)...)
		b.advance("orders", 30*time.Second)
		second := b.receive("orders", "billing", 1)
		require.Len(t, second, 1)
		require.Equal(t, 2, second[0].ReceiveCount)
		require.Equal(t, tags.TagState{InFlight: 1, ReceivedTotal: 2}, b.state("orders", "billing"))

		b.advance("orders", 30*time.Second)
		// Deadline passed: not available to billing any more, not yet moved.
		require.Equal(t, tags.TagState{ReceivedTotal: 2}, b.state("orders", "billing"))
		moved, err := b.s.SweepDead(b.ctx, "orders") // the background sweeper's work; nobody receives
		require.NoError(t, err)
		require.Equal(t, 1, moved)
		moved, err = b.s.SweepDead(b.ctx, "orders") // a second sweeper finds nothing
		require.NoError(t, err)
		require.Zero(t, moved)

		require.Equal(t, tags.TagState{ReceivedTotal: 2, DeadTotal: 1}, b.state("orders", "billing"))
		require.Equal(t, tags.TagState{ReceivedTotal: 1, DeletedTotal: 1}, b.state("orders", "shipping"), "shipping untouched")
		require.Equal(t, tags.TagState{Available: 1}, b.state("orders", "default"), "the default tag still has it")
		require.Equal(t, tags.TagState{Available: 1}, b.state("orders-dlq", "default"))
		dead := b.receive("orders-dlq", "", 10)
		require.Len(t, dead, 1)
		d := dead[0]
		require.Equal(t, "order-1", string(d.Body))
		require.Equal(t, "eu", d.Attributes["region"].String)
		require.Equal(t, "orders", d.Attributes[tags.SourceQueueAttribute].String)
		require.NotNil(t, d.DeadLetter)
		require.Equal(t, "orders", d.DeadLetter.SourceQueue)
		require.Equal(t, "billing", d.DeadLetter.SourceTag)
		require.Equal(t, ids[0], d.DeadLetter.OriginalMessageID)
		require.Equal(t, 2, d.DeadLetter.OriginalReceiveCount)
		require.Equal(t, tags.ReasonMaxReceiveCountExceeded, d.DeadLetter.Reason)
		require.False(t, d.DeadLetter.DeadTime.IsZero())
	})
}

func TestS9_RelayIsExactlyOnceWhateverStepItStopsAt(t *testing.T) {
	// Not parallel with other relay users: relayFault is package state.
	for _, step := range []string{"before-add", "after-add"} {
		t.Run(step, func(t *testing.T) {
			eachBackendInTurn(t, func(t *testing.T, b *bundle) {
				ordersWithDLQ(b)
				b.send("orders", "m1", "m2")
				got := b.receive("orders", "billing", 2)
				stop := errors.New("crash at " + step)
				relayFault = func(s string) error {
					if s == step {
						return stop
					}
					return nil
				}
				errs, err := b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: got[0].ReceiptHandle},
					{ReceiptHandle: got[1].ReceiptHandle}})
				relayFault = nil
				require.NoError(t, err, "the ack is done; the relay failure is logged and retried")
				require.NoError(t, errs[0])
				outbox, err := b.rdb.XLen(b.ctx, b.s.qkeys("orders").outbox).Result()
				require.NoError(t, err)
				require.EqualValues(t, 2, outbox, "staged in the outbox, nothing lost")
				if step == "after-add" {
					// The batch was added, and not yet removed from the outbox.
					require.Equal(t, tags.TagState{Available: 2}, b.state("orders-dlq", "default"))
				}
				// Restart: relay everything, then again (as a second process would).
				n, err := b.s.RelayOutbox(b.ctx, "orders")
				require.NoError(t, err)
				require.Equal(t, 2, n)
				n, err = b.s.RelayOutbox(b.ctx, "orders")
				require.NoError(t, err)
				require.Zero(t, n)
				require.Equal(t, tags.TagState{Available: 2}, b.state("orders-dlq", "default"), "no loss, no duplicate")
				require.Equal(t, []string{"m1", "m2"}, bodies(b.receive("orders-dlq", "", 10)))
				require.Equal(t, tags.TagState{ReceivedTotal: 2, DeadTotal: 2}, b.state("orders", "billing"))
			})
		})
	}
}

func TestS9_ARelayInProgressTakesOverAConcurrentCallersDeadLetters(t *testing.T) {
	// Not parallel with other relay users: relayFault is package state.
	eachBackendInTurn(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		b.send("orders", "m1", "m2")
		got := b.receive("orders", "billing", 2)
		stageDead(t, b, "orders", "billing", got[0])

		// The first relay stops before its first add until released.
		inside, release := make(chan struct{}), make(chan struct{})
		first := true
		relayFault = func(step string) error {
			if step == "before-add" && first {
				first = false
				close(inside)
				<-release
			}
			return nil
		}
		defer func() { relayFault = nil }()
		type result struct {
			n   int
			err error
		}
		done := make(chan result, 1)
		go func() {
			n, err := b.s.RelayOutbox(b.ctx, "orders")
			done <- result{n, err}
		}()
		<-inside

		// A second caller stages another dead letter: it does not wait
		// for the running relay (which is blocked), and relays nothing.
		stageDead(t, b, "orders", "billing", got[1])
		n, err := b.s.RelayOutbox(b.ctx, "orders")
		require.NoError(t, err)
		require.Zero(t, n, "handed to the running relay")

		close(release)
		r := <-done
		require.NoError(t, r.err)
		require.Equal(t, 2, r.n, "the running relay went round again for the second")
		outbox, err := b.rdb.XLen(b.ctx, b.s.qkeys("orders").outbox).Result()
		require.NoError(t, err)
		require.Zero(t, outbox)
		require.Equal(t, []string{"m1", "m2"}, bodies(b.receive("orders-dlq", "", 10)))
	})
}

func TestS9_RelayKeepsDeadLettersWhenTheDLQIsGone(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		b.send("orders", "m")
		got := b.receive("orders", "billing", 1)
		// Staged, then the DLQ disappears (forced delete).
		stageDead(t, b, "orders", "billing", got[0])
		k := b.s.qkeys("orders")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "orders-dlq", true))
		n, err := b.s.RelayOutbox(b.ctx, "orders")
		require.NoError(t, err)
		require.Zero(t, n)
		outbox, err := b.rdb.XLen(b.ctx, k.outbox).Result()
		require.NoError(t, err)
		require.EqualValues(t, 1, outbox, "kept, not dropped")
	})
}

func TestS9_DeletingASourceQueueKeepsItsStagedDeadLetters(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		b.send("orders", "m")
		got := b.receive("orders", "billing", 1)
		stageDead(t, b, "orders", "billing", got[0])
		require.NoError(t, b.s.DeleteQueue(b.ctx, "orders", false))
		require.Equal(t, []string{"m"}, bodies(b.receive("orders-dlq", "", 10)))
	})
}
