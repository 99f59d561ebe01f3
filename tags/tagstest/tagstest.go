// Package tagstest is tagq's storage conformance suite, exported: any
// implementation of tags.Storage runs it with Run, the way river's
// riverdrivertest serves its drivers. The tests are black-box: they use
// the Storage interface only, and move time through the harness's Clock
// instead of sleeping. tagq runs it on its Redis engine (tags/redisstore)
// on miniredis, a real redis-server and a Redis Cluster
// (tags/tagstest/redis_test.go); the engine's own tests of what lies
// beneath the interface (keys, scripts, the janitor, crash recovery) are
// in package tags/redisstore.
//
// Besides one test per semantic (conformance.go; seek.go states S22, the
// seek of a tag, in full), Run runs the model
// tests: random operations checked step by step against a reference model
// of a plain queue (model.go, S1-S12 with caps, deduplication and moves
// back), a topic queue (topicmodel.go, S13) and a priority queue
// (prioritymodel.go). They need the storage's background work on demand
// (Hooks.Maintainer; without it they skip), and check more when the
// harness gives an Inspector (invariants of how the storage keeps
// deliveries) or a Twin (a second storage on the same data). On a
// storage that makes its queues partitioned they need a Partitioner (where
// each message went): the plain and topic models then keep one sequence
// per partition and take a receive's messages from the partitions in any
// interleaving, each checked exactly (modelcheck.go shows the checks fail
// on wrong answers). TAGQ_MODEL_SEEDS and TAGQ_MODEL_OPS scale them;
// TAGQ_MODEL_FIRST_SEED replays the plain model from a seed.
//
//	func TestConformance(t *testing.T) {
//		tagstest.Run(t, tagstest.Harness{
//			New: func(t *testing.T) (tags.Storage, tagstest.Clock) {
//				return myStorage(t), myClock
//			},
//			Hooks: func(t *testing.T, s tags.Storage, c tagstest.Clock) tagstest.Hooks {
//				return tagstest.Hooks{Maintainer: myBackground(s)}
//			},
//		})
//	}
package tagstest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Clock moves a storage's time, as the suite's tests need it to (for
// visibility timeouts, delays and redrive): Advance moves the clock of
// queue by d, forward only; Now is queue's time, which once Advance was
// called (the tests advance by 0 to start) moves only by Advance. A
// storage whose clock is one for all queues may ignore queue.
type Clock interface {
	Advance(t *testing.T, queue string, d time.Duration)
	Now(t *testing.T, queue string) time.Time
}

// Harness makes what each test runs on.
type Harness struct {
	// New returns an empty storage for one test, with its clock; it
	// registers the storage's cleanup with t. Tests run in parallel.
	New func(t *testing.T) (tags.Storage, Clock)
	// Hooks, optional, gives the model tests what they need of the storage
	// s that New returned (with its clock c) beyond the Storage interface.
	// It is called at most once per test, by the model tests only; what it
	// makes, it cleans up through t.
	Hooks func(t *testing.T, s tags.Storage, c Clock) Hooks
}

// Hooks are a storage's extras for the model tests. Each is optional.
type Hooks struct {
	// Maintainer runs the storage's background work when a model test
	// asks. Without it the model tests skip: their model has a storage
	// dead-letter, trim and move back when told and not otherwise.
	Maintainer Maintainer
	// Inspector checks what the storage keeps beneath the interface after
	// every step of the plain model. Without it, those checks are left out.
	Inspector Inspector
	// Twin is a second storage on the same data, which keeps deliveries
	// another way (redisstore.Store: Config.InFlightZset); the plain model
	// receives through either at random, as processes of one deployment
	// may differ. Without it, everything goes through the one storage.
	Twin tags.Storage
	// Partitioner, for a harness whose storage makes the model tests'
	// queues partitioned (tags.QueueConfig.Partitions > 1), says where the
	// storage put each message; the models then keep one sequence per
	// partition. Without it the model tests skip on a partitioned queue.
	// With it the priority model skips: a priority queue has one partition,
	// which the harness's unpartitioned twin covers.
	Partitioner Partitioner
}

// Partitioner tells the model tests how a storage lays out a partitioned
// queue: each partition is a queue of its own to the per-tag rules (its
// order of message ids, its janitor, its share of the caps), and a
// receive gathers from all of them in any interleaving.
type Partitioner interface {
	// Locate names the partition (0 to Partitions-1) of queue that holds
	// message id, and the stream id (package streamid) the message has in
	// that partition.
	Locate(queue, id string) (partition int, streamID string)
	// CapShares is the cap on retained messages and bytes that each
	// partition of q (as GetQueue reports it) enforces of q's own.
	CapShares(q *tags.Queue) (messages, bytes int64)
}

// Maintainer is the background work a storage's server runs on timers
// (for redisstore.Store, package redrive's worker), one step on one queue at a
// time.
type Maintainer interface {
	// Janitor makes one janitor pass over queue: messages whose retention
	// passed go (each counted expired by every tag that had not finished
	// it), and so do messages every tag is done with, oldest first, up to
	// the first one a tag still needs. The model follows redisstore.Store's
	// rule there: a tag needs every message of a second (of message id) in
	// which it holds one not finished.
	Janitor(ctx context.Context, queue string) error
	// Sweep dead-letters queue's messages that a tag received its redrive
	// policy's max receive count times and whose deadline passed (S7).
	Sweep(ctx context.Context, queue string) error
	// RunMove advances dlq's running move task (S10) by period's worth of
	// its rate.
	RunMove(ctx context.Context, dlq string, period time.Duration) error
}

// Inspector checks invariants of a storage's own, beneath the Storage
// interface.
type Inspector interface {
	// CheckTag checks how the storage keeps the deliveries tag of queue
	// has in flight, between calls (none is in progress), and says how
	// many it checked; a broken invariant is an error. A model run long
	// enough in which no call checked any fails: the path went untested.
	CheckTag(ctx context.Context, queue, tag string) (checked int, err error)
}

// Run runs the suite: one subtest per semantic (named after DESIGN.md's
// S-rules), then the model tests (Model_…), in parallel.
func Run(t *testing.T, h Harness) {
	for _, c := range slices.Concat(cases, retryCases) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, clock := h.New(t)
			b := &B{t: t, ctx: context.Background(), s: s, clock: clock}
			if h.Hooks != nil {
				b.makeHooks = func() Hooks { return h.Hooks(t, s, clock) }
			}
			c.fn(t, b)
		})
	}
}

// B is one test's storage, with the steps the tests share.
type B struct {
	t     *testing.T
	ctx   context.Context
	s     tags.Storage
	clock Clock

	makeHooks func() Hooks // nil: none
	hooks     *Hooks
	catch     bool // model failures panic (modelcheck.go), not fail t
}

// extras is the harness's Hooks for this test's storage, made at the
// first call.
func (b *B) extras() Hooks {
	if b.hooks == nil {
		b.hooks = &Hooks{}
		if b.makeHooks != nil {
			*b.hooks = b.makeHooks()
		}
	}
	return *b.hooks
}

// maintainer is the harness's Maintainer; without one, the test skips.
func (b *B) maintainer() Maintainer {
	b.t.Helper()
	mt := b.extras().Maintainer
	if mt == nil {
		b.t.Skip("the harness gives no Maintainer (Hooks): the model tests need the storage's background work")
	}
	return mt
}

// now is queue q's time in ms.
func (b *B) now(q string) int64 {
	b.t.Helper()
	return b.clock.Now(b.t, q).UnixMilli()
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

// inOrder asserts that got is want, in want's order on a queue of one
// partition; on a partitioned queue, whose partitions a receive or a
// listing takes in turn, the same elements in any order (order holds
// within a partition, and per topic: S13).
func (b *B) inOrder(q string, want, got []string, msgAndArgs ...any) {
	b.t.Helper()
	if b.partitions(q) > 1 {
		require.ElementsMatch(b.t, want, got, msgAndArgs...)
		return
	}
	require.Equal(b.t, want, got, msgAndArgs...)
}

// partitions is queue q's partition count.
func (b *B) partitions(q string) int32 {
	b.t.Helper()
	got, err := b.s.GetQueue(b.ctx, q)
	require.NoError(b.t, err)
	return max(got.Partitions, 1)
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
