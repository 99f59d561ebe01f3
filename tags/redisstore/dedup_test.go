package redisstore

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// sendDedup sends one batch through s and returns each entry's result,
// failing on an error of the whole call.
func sendDedup(t *testing.T, s *Store, b *bundle, q string, msgs ...tags.OutMessage) []tags.SendResult {
	t.Helper()
	res, err := s.Send(b.ctx, q, msgs)
	require.NoError(t, err)
	return res
}

// withID is a message with a deduplication id ("": none).
func withID(body, id string) tags.OutMessage {
	m := tags.OutMessage{Body: []byte(body)}
	if id != "" {
		m.DeduplicationID = &id
	}
	return m
}

// dedupCount is what GetQueue says of a queue's deduplicated sends.
func (b *bundle) dedupCount(q string) int64 {
	b.t.Helper()
	qi, err := b.s.GetQueue(b.ctx, q)
	require.NoError(b.t, err)
	return qi.DeduplicatedTotal
}

// A send with an id already stored answers with the first message's id and
// send time, stores nothing, and is counted; other ids are stored.
func TestDedupAnswersWithTheFirstMessage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		first := sendDedup(t, b.s, b, "q", withID("a", "order-1"))
		require.NoError(t, first[0].Err)
		require.False(t, first[0].Duplicate)
		b.advance("q", time.Second)
		again := sendDedup(t, b.s, b, "q", withID("a, different body", "order-1"), withID("b", "order-2"))
		require.NoError(t, again[0].Err)
		require.True(t, again[0].Duplicate)
		require.Equal(t, first[0].ID, again[0].ID)
		require.Equal(t, first[0].SendTime, again[0].SendTime, "the first message's send time, not now")
		require.NoError(t, again[1].Err)
		require.False(t, again[1].Duplicate)
		require.NotEqual(t, first[0].ID, again[1].ID)

		require.Equal(t, []string{"a", "b"}, bodies(b.receive("q", "", 10)))
		require.Equal(t, int64(2), b.rdb.XLen(b.ctx, b.s.qkeys("q").stream).Val())
		require.Equal(t, int64(1), b.dedupCount("q"))
		b.requireSizes("q", 2)
		st := b.state("q", "default")
		require.Equal(t, int64(2), st.InFlight, "the duplicate is counted nowhere in the tag")
	})
}

// Two entries of one batch with the same id: the second is the first's
// duplicate.
func TestDedupWithinOneBatch(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		res := sendDedup(t, b.s, b, "q", withID("a", "x"), withID("b", ""), withID("c", "x"), withID("d", "y"))
		for _, r := range res {
			require.NoError(t, r.Err)
		}
		require.Equal(t, []bool{false, false, true, false},
			[]bool{res[0].Duplicate, res[1].Duplicate, res[2].Duplicate, res[3].Duplicate})
		require.Equal(t, res[0].ID, res[2].ID)
		require.Equal(t, []string{"a", "b", "d"}, bodies(b.receive("q", "", 10)))
		require.Equal(t, int64(1), b.dedupCount("q"))
	})
}

// The window is DeduplicationWindow from the first store, not renewed by
// duplicates: at its end the id stores a new message, which opens a new
// window.
func TestDedupWindowRunsFromTheFirstStore(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.advance("q", 0)
		first := sendDedup(t, b.s, b, "q", withID("1", "id"))[0]
		b.advance("q", 4*time.Minute)
		require.True(t, sendDedup(t, b.s, b, "q", withID("2", "id"))[0].Duplicate)
		b.advance("q", time.Minute-time.Millisecond)
		last := sendDedup(t, b.s, b, "q", withID("3", "id"))[0]
		require.True(t, last.Duplicate, "1 ms before the window ends")
		require.Equal(t, first.ID, last.ID)
		b.advance("q", time.Millisecond)
		second := sendDedup(t, b.s, b, "q", withID("4", "id"))[0]
		require.False(t, second.Duplicate, "the window ends 5 minutes after the first store, whatever came since")
		require.NotEqual(t, first.ID, second.ID)
		b.advance("q", tags.DeduplicationWindow-time.Millisecond)
		again := sendDedup(t, b.s, b, "q", withID("5", "id"))[0]
		require.True(t, again.Duplicate)
		require.Equal(t, second.ID, again.ID, "the new window answers with the new message")
		require.Equal(t, []string{"1", "4"}, bodies(b.receive("q", "", 10)))
		require.Equal(t, int64(3), b.dedupCount("q"))
	})
}

// With content_based_deduplication an entry without an id is deduplicated
// by its body (SHA-256), attributes aside; an explicit id wins over the
// body's. Turning it off (here or by another process) stops it at once.
func TestDedupByContent(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		q := b.queue("q", func(c *tags.QueueConfig) { c.ContentBasedDeduplication = true })
		require.True(t, q.ContentBasedDeduplication)
		other := prodStore(t, b) // another replica, its limits cached below
		red := tags.OutMessage{Body: []byte("same"), Attributes: map[string]tags.Attribute{"color": {String: "red"}}}
		res := sendDedup(t, b.s, b, "q", tags.OutMessage{Body: []byte("same")}, red, withID("same", "mine"),
			tags.OutMessage{Body: []byte("other")})
		require.Equal(t, []bool{false, true, false, false},
			[]bool{res[0].Duplicate, res[1].Duplicate, res[2].Duplicate, res[3].Duplicate})
		require.Equal(t, res[0].ID, res[1].ID)
		dup := sendDedup(t, other, b, "q", tags.OutMessage{Body: []byte("other")})[0]
		require.True(t, dup.Duplicate, "another process deduplicates the same way")
		require.Equal(t, res[3].ID, dup.ID)
		// The id is the body's SHA-256 in hex, as SQS makes it.
		dup = sendDedup(t, b.s, b, "q", withID("anything", contentDedupID([]byte("same"))))[0]
		require.True(t, dup.Duplicate)
		require.Equal(t, res[0].ID, dup.ID)

		qi, err := b.s.GetQueue(b.ctx, "q")
		require.NoError(t, err)
		require.True(t, qi.ContentBasedDeduplication)
		off := false
		_, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{ContentBasedDeduplication: &off})
		require.NoError(t, err)
		for _, s := range []*Store{b.s, other} { // other still believes it on
			r := sendDedup(t, s, b, "q", tags.OutMessage{Body: []byte("other")})[0]
			require.NoError(t, r.Err)
			require.False(t, r.Duplicate)
		}
		require.Equal(t, int64(5), b.rdb.XLen(b.ctx, b.s.qkeys("q").stream).Val())
		require.Equal(t, int64(3), b.dedupCount("q"))
	})
}

// Content-based deduplication turned on by another process reaches a
// store whose cached limits say off, on either send path: the first send
// after it is deduplicated already.
func TestDedupByContentSetElsewhere(t *testing.T) {
	eachSendPath(t, func(t *testing.T, b *bundle, path string, s *Store) {
		q := "q" + path
		b.queue(q)
		first := sendDedup(t, s, b, q, tags.OutMessage{Body: []byte("x")})[0]
		require.NoError(t, first.Err)
		if path == "fast" {
			lim, ok := s.limits.Load(q)
			require.True(t, ok, "the fast path ran")
			require.False(t, lim.(sendLimits).contentDedup)
		}
		on := true
		_, err := prodStore(t, b).UpdateQueue(b.ctx, q, tags.QueueUpdate{ContentBasedDeduplication: &on})
		require.NoError(t, err)
		res := sendDedup(t, s, b, q, tags.OutMessage{Body: []byte("y")}, tags.OutMessage{Body: []byte("y")})
		require.NoError(t, res[0].Err)
		require.False(t, res[0].Duplicate)
		require.True(t, res[1].Duplicate)
		require.Equal(t, res[0].ID, res[1].ID)
		require.Equal(t, int64(2), b.rdb.XLen(b.ctx, b.s.qkeys(q).stream).Val())
		lim, _ := s.limits.Load(q)
		require.True(t, lim.(sendLimits).contentDedup, "the limits were read again")
	})
}

// Ids are 1-128 characters of printable ASCII; a bad one fails its entry
// naming the field, and nothing of it is stored or recorded.
func TestDedupIDIsValidated(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		ok128 := strings.Repeat("~", tags.MaxDeduplicationIDLen)
		bad := []string{"", strings.Repeat("a", tags.MaxDeduplicationIDLen+1), "with space", "tab\t", "é", "\x7f"}
		msgs := []tags.OutMessage{withID("good", ok128), withID("punct", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")}
		for _, id := range bad {
			msgs = append(msgs, tags.OutMessage{Body: []byte("bad"), DeduplicationID: &id})
		}
		res := sendDedup(t, b.s, b, "q", msgs...)
		require.NoError(t, res[0].Err)
		require.NoError(t, res[1].Err)
		for i := range bad {
			r := res[2+i]
			requireReason(t, r.Err, tags.ReasonInvalidArgumentRange)
			e := mustError(t, r.Err)
			require.Equal(t, tags.KindInvalidArgument, e.Kind)
			require.Equal(t, "deduplication_id", e.Field)
		}
		require.Equal(t, []string{"good", "punct"}, bodies(b.receive("q", "", 10)))
		require.Equal(t, int64(2), b.rdb.HLen(b.ctx, b.s.qkeys("q").sendDedup).Val())
	})
}

// A send a cap refuses (overflow reject) records nothing, so the retry
// that fits is stored; a duplicate of a stored message is answered even
// while the queue is full (it stores nothing).
func TestDedupWithACapThatRejects(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		one := int64(1)
		b.queue("q", func(c *tags.QueueConfig) { c.MaxRetainedMessages = &one })
		res := sendDedup(t, b.s, b, "q", withID("a", "a"), withID("b", "b"), withID("a again", "a"))
		require.NoError(t, res[0].Err)
		requireReason(t, res[1].Err, tags.ReasonQueueFull)
		require.NoError(t, res[2].Err, "a duplicate after a refused entry")
		require.True(t, res[2].Duplicate)
		require.Equal(t, res[0].ID, res[2].ID)
		require.Equal(t, int64(1), b.rdb.HLen(b.ctx, b.s.qkeys("q").sendDedup).Val(), "the refused id is not recorded")

		b.del("q", b.receive("q", "", 1)...)
		require.NoError(t, b.s.trimQueue(b.ctx, "q"))
		retry := sendDedup(t, b.s, b, "q", withID("b", "b"))[0]
		require.NoError(t, retry.Err)
		require.False(t, retry.Duplicate, "the refused send stored nothing, so its retry is new")
		require.Equal(t, []string{"b"}, bodies(b.receive("q", "", 10)))
	})
}

// A delayed message is deduplicated from its send, like any other; the
// duplicate stores no second delayed message.
func TestDedupOfADelayedMessage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		m := withID("later", "d")
		m.DelaySeconds = i32(60)
		first := sendDedup(t, b.s, b, "q", m)[0]
		dup := sendDedup(t, b.s, b, "q", withID("now", "d"))[0]
		require.True(t, dup.Duplicate)
		require.Equal(t, first.ID, dup.ID)
		st := b.state("q", "default")
		require.Equal(t, int64(1), st.Delayed)
		require.Equal(t, int64(0), st.Available)
		require.Equal(t, int64(1), b.rdb.ZCard(b.ctx, b.s.qkeys("q").delayed).Val())
	})
}

// Purge drops messages but keeps the window (as SQS does): a retry after a
// purge is still answered as the purged message. DeleteQueue removes every
// id with the queue.
func TestDedupAcrossPurgeAndDelete(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		first := sendDedup(t, b.s, b, "q", withID("a", "x"))[0]
		_, err := b.s.PurgeQueue(b.ctx, "q")
		require.NoError(t, err)
		dup := sendDedup(t, b.s, b, "q", withID("a", "x"))[0]
		require.True(t, dup.Duplicate)
		require.Equal(t, first.ID, dup.ID)
		require.Empty(t, b.receive("q", "", 10))

		require.NoError(t, b.s.DeleteQueue(b.ctx, "q", false))
		require.Empty(t, b.keys(b.prefix+":{q}:*"), "no key of the queue is left")
		b.queue("q")
		again := sendDedup(t, b.s, b, "q", withID("a", "x"))[0]
		require.False(t, again.Duplicate, "a new queue of the same name remembers nothing")
		require.Equal(t, int64(0), b.dedupCount("q"))
	})
}

// Ids past their window are pruned: by sends with ids (a bounded number
// per call) and by the janitor, so a queue keeps at most the ids of one
// window.
func TestDedupPrunesPastIDs(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.advance("q", 0)
		k := b.s.qkeys("q")
		for i := range 3 {
			msgs := make([]tags.OutMessage, 100)
			for j := range msgs {
				msgs[j] = withID("m", fmt.Sprintf("%d-%d", i, j))
			}
			sendDedup(t, b.s, b, "q", msgs...)
		}
		require.Equal(t, int64(300), b.rdb.ZCard(b.ctx, k.sendDedupExp).Val())
		b.advance("q", tags.DeduplicationWindow)
		sendDedup(t, b.s, b, "q", withID("new", "new"))
		require.Equal(t, int64(300-101+1), b.rdb.ZCard(b.ctx, k.sendDedupExp).Val(), "a send of 1 prunes up to 101")
		require.Equal(t, int64(300-101+1), b.rdb.HLen(b.ctx, k.sendDedup).Val())
		require.NoError(t, b.s.trimQueue(b.ctx, "q"))
		require.Equal(t, []string{"new"}, b.rdb.ZRange(b.ctx, k.sendDedupExp, 0, -1).Val(), "the janitor prunes the rest")
		require.Equal(t, []string{"new"}, b.rdb.HKeys(b.ctx, k.sendDedup).Val())
		require.True(t, sendDedup(t, b.s, b, "q", withID("x", "new"))[0].Duplicate)
	})
}

// Replicas sending the same ids at once, with the production clock: each
// id is stored exactly once, and every answer for it names that message.
func TestDedupConcurrentReplicas(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		replicas := []*Store{prodStore(t, b), prodStore(t, b)}
		b.queue("q")
		b.queue("qc", func(c *tags.QueueConfig) { c.ContentBasedDeduplication = true })
		const ids, senders, rounds = 40, 8, 5
		type answer struct{ key, id string }
		var mu sync.Mutex
		var answers []answer
		var wg sync.WaitGroup
		errs := make(chan error, senders)
		for g := range senders {
			wg.Go(func() {
				s := replicas[g%len(replicas)]
				for r := range rounds {
					for _, q := range []string{"q", "qc"} {
						// Batches of 10 overlapping ids, in a different order per sender.
						msgs := make([]tags.OutMessage, 10)
						for j := range msgs {
							n := (g*7 + r*3 + j*(g%3+1)) % ids
							msgs[j] = tags.OutMessage{Body: []byte(fmt.Sprintf("body-%d", n))}
							if q == "q" {
								id := fmt.Sprintf("id-%d", n)
								msgs[j].DeduplicationID = &id
							}
						}
						res, err := s.Send(b.ctx, q, msgs)
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						for j, x := range res {
							if x.Err != nil {
								errs <- x.Err
							}
							answers = append(answers, answer{q + "/" + string(msgs[j].Body), x.ID})
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		byKey := map[string]string{}
		for _, a := range answers {
			if prev, ok := byKey[a.key]; ok {
				require.Equal(t, prev, a.id, "%s answered with two message ids", a.key)
			}
			byKey[a.key] = a.id
		}
		for _, q := range []string{"q", "qc"} {
			got := b.receive(q, "", 100)
			seen := map[string]bool{}
			for _, m := range got {
				require.False(t, seen[string(m.Body)], "%s stored twice in %s", m.Body, q)
				seen[string(m.Body)] = true
				require.Equal(t, byKey[q+"/"+string(m.Body)], m.ID)
			}
			require.Len(t, got, ids, "every id was sent")
			require.Equal(t, int64(ids), b.state(q, "default").InFlight)
			require.Equal(t, int64(senders*rounds*10-len(got)), b.dedupCount(q))
		}
	})
}

// The metrics read (Stats) carries each queue's deduplicated count.
func TestDedupCountInStats(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("a")
		b.queue("b")
		sendDedup(t, b.s, b, "a", withID("1", "x"), withID("2", "x"), withID("3", "x"))
		stats, _, err := b.s.Stats(b.ctx, 100)
		require.NoError(t, err)
		got := map[string]int64{}
		for _, q := range stats {
			got[q.Name] = q.Deduplicated
		}
		require.Equal(t, map[string]int64{"a": 2, "b": 0}, got)
	})
}
