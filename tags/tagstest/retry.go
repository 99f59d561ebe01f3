package tagstest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// S23 Retry backoff. A queue's retry_policy {min_backoff_seconds,
// max_backoff_seconds} (0 <= min <= max <= 43200) applies to each tag on
// its own: a message that a tag received n times and that comes back to
// it — its visibility (set by that receive) ran out, or a nack asked for
// the policy (tags.VisibilityChange.RetryBackoff, tags.Settlement.Retry)
// — is available to that tag again only after a backoff drawn from
// [b, min(max, 2b)], b = min(max, min·2^(n-1)) (tags.RetryPolicy's
// BackoffBounds). Meanwhile it still counts in flight, and its receipt
// handle still deletes it. A stream's extend (tags.Settlement.Extend)
// renews the visibility and keeps the backoff after it, as a receive
// does. An explicit visibility change (any seconds, 0 included) always
// wins: the message is visible then, no backoff. A
// message at its redrive policy's max receive count is dead-lettered when
// its visibility runs out, never backed off (S7). Without a policy:
// available at once, as before. Topic queues keep a topic blocked while
// its message backs off (S13). The policy is read when a message is
// received (or nacked): setting or removing it changes the deliveries
// after.
var retryCases = []struct {
	name string
	fn   func(t *testing.T, b *B)
}{
	{"S23_RetryNoPolicyIsImmediate", testS23_RetryNoPolicyIsImmediate},
	{"S23_RetryTimeoutBacksOffExponentiallyToTheCap", testS23_RetryTimeoutBacksOffExponentiallyToTheCap},
	{"S23_RetryJitterSpreadsWithinBounds", testS23_RetryJitterSpreadsWithinBounds},
	{"S23_RetryNackTakesThePolicyExplicitTimeoutsWin", testS23_RetryNackTakesThePolicyExplicitTimeoutsWin},
	{"S23_RetryStreamExtendKeepsTheBackoff", testS23_RetryStreamExtendKeepsTheBackoff},
	{"S23_RetryRedriveIsNotBackedOff", testS23_RetryRedriveIsNotBackedOff},
	{"S23_RetryUpdateSetsAndRemoves", testS23_RetryUpdateSetsAndRemoves},
	{"S23_RetryTopicWaitsWhileBackingOff", testS23_RetryTopicWaitsWhileBackingOff},
	{"S23_RetryPriorityQueue", testS23_RetryPriorityQueue},
	{"S23_RetryBadInput", testS23_RetryBadInput},
}

func retryPolicy(lo, hi int32) func(*tags.QueueConfig) {
	return func(c *tags.QueueConfig) {
		c.RetryPolicy = &tags.RetryPolicy{MinBackoffSeconds: lo, MaxBackoffSeconds: hi}
		c.VisibilityTimeoutSeconds = i32(30)
	}
}

// comesBack asserts that the message m (what is in flight on q's tag)
// comes back no earlier than after lo and by hi, counting from now + wait
// (its visibility): the clock is moved to just before lo, then to hi, and
// what comes back is received.
func (b *B) comesBack(q, tag string, wait, lo, hi time.Duration, id string, count int) tags.Message {
	b.t.Helper()
	b.advance(q, wait+lo-time.Millisecond)
	require.Empty(b.t, b.receive(q, tag, 10), "not back before %v of backoff", lo)
	st := tag
	if st == "" {
		st = tags.DefaultTagName
	}
	require.Equal(b.t, int64(1), b.state(q, st).InFlight, "in flight while it backs off")
	b.advance(q, hi-lo+time.Millisecond)
	got := b.receive(q, tag, 10)
	require.Len(b.t, got, 1, "back by %v of backoff", hi)
	require.Equal(b.t, id, got[0].ID)
	require.Equal(b.t, count, got[0].ReceiveCount)
	return got[0]
}

func testS23_RetryNoPolicyIsImmediate(t *testing.T, b *B) {
	q := b.queue("q", func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
	require.Nil(t, q.RetryPolicy)
	b.advance("q", 0)
	ids := b.send("q", "m")
	require.Len(t, b.receive("q", "", 1), 1)
	m := b.comesBack("q", "", 30*time.Second, 0, 0, ids[0], 2)
	nack(t, b, "q", m.ReceiptHandle)
	require.Len(t, b.receive("q", "", 1), 1, "a nack: at once")
}

func testS23_RetryTimeoutBacksOffExponentiallyToTheCap(t *testing.T, b *B) {
	q := b.queue("q", retryPolicy(10, 60))
	require.Equal(t, &tags.RetryPolicy{MinBackoffSeconds: 10, MaxBackoffSeconds: 60}, q.RetryPolicy)
	got, err := b.s.GetQueue(b.ctx, "q")
	require.NoError(t, err)
	require.Equal(t, q.RetryPolicy, got.RetryPolicy)
	b.tag("q", "other")
	b.advance("q", 0)
	ids := b.send("q", "m")
	require.Len(t, b.receive("q", "", 1), 1)
	// Receive n -> backoff in [b, min(60, 2b)], b = min(60, 10·2^(n-1)).
	want := [][2]time.Duration{{10, 20}, {20, 40}, {40, 60}, {60, 60}, {60, 60}}
	var m tags.Message
	for n, w := range want {
		lo, hi := (*q.RetryPolicy).BackoffBounds(n + 1)
		require.Equal(t, w[0]*time.Second, lo)
		require.Equal(t, w[1]*time.Second, hi)
		m = b.comesBack("q", "", 30*time.Second, lo, hi, ids[0], n+2)
	}
	// The other tag is untouched (S1): its first receive now.
	o := b.receive("q", "other", 1)
	require.Len(t, o, 1)
	require.Equal(t, 1, o[0].ReceiveCount)
	// Deleted while in flight: gone for good.
	b.del("q", m)
	require.Equal(t, int64(0), b.state("q", "default").InFlight)
}

func testS23_RetryJitterSpreadsWithinBounds(t *testing.T, b *B) {
	b.queue("q", retryPolicy(10, 3600))
	b.advance("q", 0)
	bodies := make([]string, 20)
	for i := range bodies {
		bodies[i] = "m"
	}
	b.send("q", bodies...)
	require.Len(t, b.receive("q", "", 20), 20)
	// Backoff after the first receive: [10 s, 20 s]. Count what comes back
	// each second.
	b.advance("q", 30*time.Second+10*time.Second-time.Millisecond)
	require.Empty(t, b.receive("q", "", 20))
	b.advance("q", time.Millisecond)
	back, seconds := 0, 0
	for s := 10; s <= 20; s++ {
		n := len(b.receive("q", "", 20))
		if n > 0 {
			seconds++
		}
		back += n
		if s < 20 {
			b.advance("q", time.Second)
		}
	}
	require.Equal(t, 20, back, "every message back by the upper bound")
	require.Greater(t, seconds, 1, "jitter: messages that failed together come back at different times")
	st := b.state("q", "default")
	require.Equal(t, int64(20), st.InFlight)
}

func testS23_RetryNackTakesThePolicyExplicitTimeoutsWin(t *testing.T, b *B) {
	b.queue("q", retryPolicy(10, 60))
	b.advance("q", 0)
	ids := b.send("q", "m")
	m := b.receive("q", "", 1)[0]

	// A nack asking for the policy: back after [10 s, 20 s] (received once).
	errs, err := b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: m.ReceiptHandle, RetryBackoff: true}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	m = b.comesBack("q", "", 0, 10*time.Second, 20*time.Second, ids[0], 2)

	// An explicit nack (0 s): at once, no backoff.
	nack(t, b, "q", m.ReceiptHandle)
	m = b.receive("q", "", 1)[0]
	require.Equal(t, 3, m.ReceiveCount)

	// An explicit visibility change: visible exactly then (backoff none).
	errs, err = b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: m.ReceiptHandle, VisibilitySeconds: 5}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	m = b.comesBack("q", "", 5*time.Second, 0, 0, ids[0], 4)

	// A stream's nack (Settle) asking for the policy: received 4 times,
	// b = 60 (the cap): back after exactly 60 s.
	d := m.Delivery("q")
	d.Tag = "default"
	require.NoError(t, b.s.Settle(b.ctx, []*tags.SettleBatch{{Queue: "q", Tag: "default",
		Ops: []tags.Settlement{{Kind: tags.SettleVisibility, Delivery: d, Retry: true}}}}))
	m = b.comesBack("q", "", 0, 60*time.Second, 60*time.Second, ids[0], 5)

	// A nack with the policy and a delay of its own is refused.
	errs, err = b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: m.ReceiptHandle, VisibilitySeconds: 3, RetryBackoff: true}})
	if err == nil {
		err = errs[0]
	}
	requireReason(t, err, tags.ReasonInvalidArgumentRange)
	e, _ := tags.AsError(err)
	require.Equal(t, "visibility_seconds", e.Field)
}

func testS23_RetryRedriveIsNotBackedOff(t *testing.T, b *B) {
	b.queue("dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
	b.queue("q", retryPolicy(100, 1000), func(c *tags.QueueConfig) {
		c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 2}
	})
	b.advance("q", 0)
	ids := b.send("q", "m")
	require.Len(t, b.receive("q", "", 1), 1)
	b.comesBack("q", "", 30*time.Second, 100*time.Second, 200*time.Second, ids[0], 2)
	// At the max receive count: dead-lettered when the visibility runs
	// out, not backed off.
	b.advance("q", 30*time.Second)
	require.Empty(t, b.receive("q", "", 10))
	st := b.state("q", "default")
	require.Equal(t, int64(1), st.DeadTotal)
	require.Equal(t, int64(0), st.InFlight)
	require.Len(t, b.receive("dlq", "", 10), 1)

	// A nack asking for the policy at the max receive count: due at once,
	// and dead-lettered by the next receive.
	ids = b.send("q", "n")
	require.Len(t, b.receive("q", "", 1), 1)
	n := b.comesBack("q", "", 30*time.Second, 100*time.Second, 200*time.Second, ids[0], 2)
	errs, err := b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: n.ReceiptHandle, RetryBackoff: true}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.Empty(t, b.receive("q", "", 10))
	st = b.state("q", "default")
	require.Equal(t, int64(2), st.DeadTotal)
	require.Equal(t, int64(0), st.InFlight)
	require.Len(t, b.receive("dlq", "", 10), 1)
}

func testS23_RetryUpdateSetsAndRemoves(t *testing.T, b *B) {
	b.queue("q", func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
	b.advance("q", 0)
	ids := b.send("q", "m")
	up, err := b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{SetRetryPolicy: true,
		RetryPolicy: &tags.RetryPolicy{MinBackoffSeconds: 5, MaxBackoffSeconds: 5}})
	require.NoError(t, err)
	require.Equal(t, &tags.RetryPolicy{MinBackoffSeconds: 5, MaxBackoffSeconds: 5}, up.RetryPolicy)
	require.Len(t, b.receive("q", "", 1), 1)
	m := b.comesBack("q", "", 30*time.Second, 5*time.Second, 5*time.Second, ids[0], 2)

	// Other updates leave it.
	up, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{DelaySeconds: i32(0)})
	require.NoError(t, err)
	require.NotNil(t, up.RetryPolicy)

	up, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{SetRetryPolicy: true})
	require.NoError(t, err)
	require.Nil(t, up.RetryPolicy)
	// This delivery was made with the policy (5 s); the next ones without.
	m = b.comesBack("q", "", 30*time.Second, 5*time.Second, 5*time.Second, ids[0], 3)
	_ = m
	b.comesBack("q", "", 30*time.Second, 0, 0, ids[0], 4)
}

func testS23_RetryTopicWaitsWhileBackingOff(t *testing.T, b *B) {
	b.queue("q", topicQueue, retryPolicy(10, 10))
	b.advance("q", 0)
	ids := b.sendTopics("q", "a", "a1", "a", "a2", "b", "b1")
	got := b.receive("q", "", 10)
	b.inOrder("q", []string{"a1", "b1"}, bodies(got))
	b.del("q", withBody(t, got, "b1"))
	// a1's visibility runs out; during its backoff a2 waits behind it.
	m := b.comesBack("q", "", 30*time.Second, 10*time.Second, 10*time.Second, ids[0], 2)
	require.Equal(t, "a1", string(m.Body))
	b.del("q", m)
	require.Equal(t, []string{"a2"}, bodies(b.receive("q", "", 10)))
}

func testS23_RetryPriorityQueue(t *testing.T, b *B) {
	b.queue("q", priorityQueue, retryPolicy(10, 10))
	b.advance("q", 0)
	b.sendPrio("q", 8, "low")
	first := b.receive("q", "", 1)
	require.Equal(t, []string{"low"}, bodies(first))
	b.advance("q", 30*time.Second)
	b.sendPrio("q", 1, "high")
	// Backing off: the new message goes first.
	require.Equal(t, []string{"high"}, bodies(b.receive("q", "", 10)))
	b.advance("q", 10*time.Second)
	again := b.receive("q", "", 10)
	require.Equal(t, []string{"low"}, bodies(again))
	require.Equal(t, 2, again[0].ReceiveCount)
}

func testS23_RetryBadInput(t *testing.T, b *B) {
	b.queue("q")
	for _, c := range []struct {
		p     tags.RetryPolicy
		field string
	}{
		{tags.RetryPolicy{MinBackoffSeconds: -1, MaxBackoffSeconds: 10}, "retry_policy.min_backoff_seconds"},
		{tags.RetryPolicy{MinBackoffSeconds: 0, MaxBackoffSeconds: 43201}, "retry_policy.max_backoff_seconds"},
		{tags.RetryPolicy{MinBackoffSeconds: 43201, MaxBackoffSeconds: 43201}, "retry_policy.min_backoff_seconds"},
		{tags.RetryPolicy{MinBackoffSeconds: 20, MaxBackoffSeconds: 10}, "retry_policy.max_backoff_seconds"},
	} {
		p := c.p
		_, err := b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "bad", RetryPolicy: &p})
		requireReason(t, err, tags.ReasonInvalidArgumentRange)
		e, _ := tags.AsError(err)
		require.Equal(t, tags.KindInvalidArgument, e.Kind)
		require.Equal(t, c.field, e.Field)
		_, err = b.s.GetQueue(b.ctx, "bad")
		requireReason(t, err, tags.ReasonQueueNotFound)

		_, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{SetRetryPolicy: true, RetryPolicy: &p})
		requireReason(t, err, tags.ReasonInvalidArgumentRange)
		e, _ = tags.AsError(err)
		require.Equal(t, c.field, e.Field)
	}
	got, err := b.s.GetQueue(b.ctx, "q")
	require.NoError(t, err)
	require.Nil(t, got.RetryPolicy, "nothing written")
	// The bounds themselves are fine.
	_, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{SetRetryPolicy: true,
		RetryPolicy: &tags.RetryPolicy{MinBackoffSeconds: 0, MaxBackoffSeconds: tags.MaxBackoffSeconds}})
	require.NoError(t, err)
}

// A Consume stream's extend (the Go Consumer renews what it holds) keeps
// the backoff: a consumer that renewed and then died leaves the message
// to come back after the renewed visibility and its backoff. Without a
// policy an extend is exactly its visibility.
func testS23_RetryStreamExtendKeepsTheBackoff(t *testing.T, b *B) {
	extend := func(q string, m tags.Message, d time.Duration) {
		t.Helper()
		dv := m.Delivery(q)
		dv.Tag = tags.DefaultTagName
		sb := &tags.SettleBatch{Queue: q, Tag: tags.DefaultTagName,
			Ops: []tags.Settlement{{Kind: tags.SettleVisibility, Delivery: dv, VisibilityMs: d.Milliseconds(), Extend: true}}}
		require.NoError(t, b.s.Settle(b.ctx, []*tags.SettleBatch{sb}))
		require.NoError(t, sb.Errs[0])
	}
	b.queue("q", retryPolicy(10, 10))
	b.advance("q", 0)
	ids := b.send("q", "m")
	got := b.receive("q", "", 1)
	require.Len(t, got, 1)
	b.advance("q", 20*time.Second) // within the 30 s visibility: renewed for 60 s from now
	extend("q", got[0], 60*time.Second)
	b.comesBack("q", "", 60*time.Second, 10*time.Second, 10*time.Second, ids[0], 2)

	b.queue("plain", func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
	b.advance("plain", 0)
	pids := b.send("plain", "m")
	got = b.receive("plain", "", 1)
	require.Len(t, got, 1)
	extend("plain", got[0], 60*time.Second)
	b.comesBack("plain", "", 60*time.Second, 0, 0, pids[0], 2)
}
