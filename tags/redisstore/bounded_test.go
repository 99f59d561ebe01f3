package redisstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Issue 23 D: no script call holds the store for long. A background or
// state script on a queue with a large backlog in flight (PEL deliveries
// and in-flight zset members whose deadlines passed, a changed redrive
// policy, a long stream) touches a bounded number of entries per call,
// whatever the backlog; it stops at its bounds and the caller calls again.
// What a call touches is counted by testcount.lua (the commands, their
// arguments and replies: what the script asks of Redis; the embedded
// store runs the same scripts with no command it does in time linear in a
// stream or a PEL, see Config.Embedded and cmd/tagqd). Before, one call
// moved every due PEL batch (tagstate, sweep), rebuilt a policy's set from
// all of v, and trimmed every finished entry at once.

// touchBound is what one script call may touch here. (The backlog's
// 8,000 messages in flight, 4,000 of them in 400 PEL batches, each touch
// several entries when they move: one call moving them all, as tagstate's
// did, touched over 20,000.)
const touchBound = 5000

func TestBounded_ScriptCallsTouchBoundedEntries(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		const pel, zset = 4000, 4000 // in flight in the PEL, and in v
		b.queue("dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
		b.advance("q", 0)
		body := strings.Repeat("x", 100)
		for i := 0; i < pel+zset; i += 100 {
			msgs := make([]tags.OutMessage, 100)
			for j := range msgs {
				msgs[j] = tags.OutMessage{Body: []byte(fmt.Sprint(body, i+j))}
			}
			b.sendMsgs("q", msgs...)
		}
		// Received in batches of 10 (400 PEL batches), and through a store
		// that keeps deliveries in v.
		for got := 0; got < pel; {
			got += len(b.receive("q", "", 10))
		}
		twin, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true, InFlightZset: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = twin.Close() })
		for got := 0; got < zset; {
			msgs, err := twin.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 100, WaitSeconds: i32(0)})
			require.NoError(t, err)
			got += len(msgs)
		}
		require.Equal(t, tags.TagState{InFlight: pel + zset, ReceivedTotal: pel + zset}, b.state("q", "default"))
		b.advance("q", time.Minute) // every deadline passed

		meta := b.s.qkeys("q").meta
		require.NoError(t, b.rdb.HSet(b.ctx, meta, "test_count", 1).Err())
		touched := func() int64 {
			n, err := b.rdb.HGet(b.ctx, meta, "test_touched").Int64()
			if isNil(err) {
				return 0
			}
			require.NoError(t, err)
			return n
		}
		// measure runs one script call and says what it touched.
		measure := func(name string, call func()) int64 {
			before := touched()
			call()
			n := touched() - before
			t.Logf("%s: %d entries touched", name, n)
			require.LessOrEqual(t, n, int64(touchBound), "%s touched %d entries in one call", name, n)
			return n
		}

		// The state of the tag (GetTag, metrics): 50 due batches moved at most.
		measure("tagstate", func() { b.state("q", "default") })
		// janitor calls the janitor, call after call, until it has nothing left.
		janitor := func(name string) {
			for i := 0; ; i++ {
				more := false
				measure(fmt.Sprintf("%s call %d", name, i), func() {
					_, more, err = b.s.janitorStep(b.ctx, "q", "", 0)
					require.NoError(t, err)
				})
				if !more {
					return
				}
				require.Less(t, i, 1000)
			}
		}
		janitor("janitor")
		require.Equal(t, tags.TagState{Available: pel + zset, ReceivedTotal: pel + zset}, b.state("q", "default"),
			"the janitor moved every due batch")

		// A redrive policy set: the sweep rebuilds its set in pages and
		// sweeps in calls of bounded work.
		_, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{SetRedrivePolicy: true,
			RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}})
		require.NoError(t, err)
		k := b.s.qkeys("q")
		names, err := b.s.rdb.HKeys(b.ctx, k.tags).Result()
		require.NoError(t, err)
		for i := 0; ; i++ {
			var res []int64
			measure(fmt.Sprintf("sweep call %d", i), func() {
				keys := []string{k.meta, k.stream, k.outbox, k.tags}
				for _, n := range names {
					tk := k.tag(n)
					keys = append(keys, tk.state, tk.visible, tk.last, tk.batches)
				}
				res, err = scriptSweep.Run(b.ctx, b.s.rdb, keys, append([]any{"q", sweepBatch, "", 0}, toAny(names)...)...).Int64Slice()
				require.NoError(t, err)
			})
			if res[0] < sweepBatch && res[2] == 0 {
				break
			}
			require.Less(t, i, 1000)
		}
		st := b.state("q", "default")
		require.EqualValues(t, pel+zset, st.DeadTotal, "every one, received once, dead-lettered")
		require.Zero(t, st.Available+st.InFlight)

		// What every tag finished goes: trimmed in bounded calls too.
		janitor("janitor trim")
		n, err := b.rdb.XLen(b.ctx, k.stream).Result()
		require.NoError(t, err)
		require.Zero(t, n, "every entry trimmed")
	})
}
