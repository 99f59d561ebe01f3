// Package tagstest is tagq's storage conformance suite, exported: any
// implementation of tags.Storage runs it with Run, the way river's
// riverdrivertest serves its drivers. The tests are black-box: they use
// the Storage interface only, and move time through the harness's Clock
// instead of sleeping. tags runs it on miniredis, a real redis-server and
// a Redis Cluster (tags/tagstest/redis_test.go); the engine's own tests of
// what lies beneath the interface (keys, scripts, the janitor, crash
// recovery) stay in package tags.
//
//	func TestConformance(t *testing.T) {
//		tagstest.Run(t, tagstest.Harness{New: func(t *testing.T) (tags.Storage, tagstest.Clock) {
//			return myStorage(t), myClock
//		}})
//	}
package tagstest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Clock moves a storage's time, as the suite's tests need it to (for
// visibility timeouts, delays and redrive): Advance moves the clock of
// queue by d, forward only. A storage whose clock is one for all queues
// may ignore queue.
type Clock interface {
	Advance(t *testing.T, queue string, d time.Duration)
}

// Harness makes what each test runs on.
type Harness struct {
	// New returns an empty storage for one test, with its clock; it
	// registers the storage's cleanup with t. Tests run in parallel.
	New func(t *testing.T) (tags.Storage, Clock)
}

// Run runs the suite: one subtest per semantic (named after DESIGN.md's
// S-rules), in parallel.
func Run(t *testing.T, h Harness) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, clock := h.New(t)
			c.fn(t, &B{t: t, ctx: context.Background(), s: s, clock: clock})
		})
	}
}

// B is one test's storage, with the steps the tests share.
type B struct {
	t     *testing.T
	ctx   context.Context
	s     tags.Storage
	clock Clock
}

func (b *B) advance(q string, d time.Duration) {
	b.t.Helper()
	b.clock.Advance(b.t, q, d)
}

func (b *B) queue(name string, cfg ...func(*tags.QueueConfig)) *tags.Queue {
	b.t.Helper()
	c := tags.QueueConfig{Name: name}
	for _, f := range cfg {
		f(&c)
	}
	q, err := b.s.CreateQueue(b.ctx, c)
	require.NoError(b.t, err)
	return q
}

func (b *B) tag(q, name string, cfg ...func(*tags.TagConfig)) *tags.Tag {
	b.t.Helper()
	c := tags.TagConfig{Name: name}
	for _, f := range cfg {
		f(&c)
	}
	tg, err := b.s.CreateTag(b.ctx, q, c)
	require.NoError(b.t, err)
	return tg
}

func (b *B) send(q string, bodies ...string) []string {
	b.t.Helper()
	msgs := make([]tags.OutMessage, len(bodies))
	for i, body := range bodies {
		msgs[i] = tags.OutMessage{Body: []byte(body)}
	}
	return b.sendMsgs(q, msgs...)
}

func (b *B) sendMsgs(q string, msgs ...tags.OutMessage) []string {
	b.t.Helper()
	res, err := b.s.Send(b.ctx, q, msgs)
	require.NoError(b.t, err)
	ids := make([]string, len(res))
	for i, r := range res {
		require.NoError(b.t, r.Err)
		ids[i] = r.ID
	}
	return ids
}

func (b *B) sendTopics(q string, pairs ...string) []string {
	b.t.Helper()
	msgs := make([]tags.OutMessage, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, tags.OutMessage{Topic: pairs[i], Body: []byte(pairs[i+1])})
	}
	return b.sendMsgs(q, msgs...)
}

func (b *B) receive(q, tag string, max int, opts ...func(*tags.ReceiveOptions)) []tags.Message {
	b.t.Helper()
	o := tags.ReceiveOptions{MaxMessages: max, WaitSeconds: i32(0)}
	for _, f := range opts {
		f(&o)
	}
	msgs, err := b.s.Receive(b.ctx, q, tag, o)
	require.NoError(b.t, err)
	return msgs
}

func (b *B) del(q string, msgs ...tags.Message) {
	b.t.Helper()
	hs := make([]string, len(msgs))
	for i, m := range msgs {
		hs[i] = m.ReceiptHandle
	}
	errs, err := b.s.Delete(b.ctx, q, hs)
	require.NoError(b.t, err)
	for _, e := range errs {
		require.NoError(b.t, e)
	}
}

// state is tag's counters, without the age of its oldest message (which
// moves with the clock).
func (b *B) state(q, tag string) tags.TagState {
	b.t.Helper()
	tg, err := b.s.GetTag(b.ctx, q, tag)
	require.NoError(b.t, err)
	st := tg.State
	st.OldestAvailableAge = 0
	return st
}

// ordersWithDLQ: orders (tags default, billing, shipping) -> orders-dlq,
// max receive count 2, visibility 30 s.
func ordersWithDLQ(b *B) {
	b.queue("orders-dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
	b.queue("orders", func(c *tags.QueueConfig) {
		c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 2}
	})
	b.tag("orders", "billing")
	b.tag("orders", "shipping")
}

func topicQueue(c *tags.QueueConfig) { c.TopicQueue = true }

func bodies(msgs []tags.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Body)
	}
	return out
}

func requireReason(t *testing.T, err error, reason string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, reason, tags.ReasonOf(err), "error: %v", err)
}

func i32(v int32) *int32 { return &v }

// sendTime is the send time of message id of queue q, as Peek reports it.
func sendTime(b *B, q, id string) time.Time {
	b.t.Helper()
	msgs, err := b.s.Peek(b.ctx, q, []string{id})
	require.NoError(b.t, err)
	require.Len(b.t, msgs, 1)
	return msgs[0].SendTime
}

func priorityQueue(c *tags.QueueConfig) { c.PriorityQueue = true }

// sendPrio sends pairs of priority and body.
func (b *B) sendPrio(q string, pairs ...any) []string {
	b.t.Helper()
	msgs := make([]tags.OutMessage, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, tags.OutMessage{Priority: int32(pairs[i].(int)), Body: []byte(pairs[i+1].(string))})
	}
	return b.sendMsgs(q, msgs...)
}

func prios(msgs []tags.Message) []int32 {
	out := make([]int32, len(msgs))
	for i, m := range msgs {
		out[i] = m.Priority
	}
	return out
}
