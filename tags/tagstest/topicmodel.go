package tagstest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/streamid"
)

// testModel_TopicQueue runs random sends (topics a, b, c), receives on two
// tags, deletes, nacks, DeadMessage, seeks, time advancing and sweeps against a
// topic queue (S13) and a reference model: per tag, a message may be
// handed out only when it is the first of its topic the tag has not
// deleted or dead-lettered, and it is not in flight; a receive returns as
// many as the model has ready, up to its max; receive counts and every
// tag counter match after each step. (The model of model.go covers
// S1-S12 on plain queues.)
func testModel_TopicQueue(t *testing.T, b *B) {
	seeds, ops := b.modelSeeds(), envInt("TAGQ_MODEL_OPS", 250)
	b.eachSeed(1, seeds, func(t *testing.T, b *B, seed int) {
		runTopicModel(t, b, fmt.Sprintf("topics%d", seed), uint64(seed), ops)
	})
}

type tmMsg struct {
	id, topic, body string
	part            int   // the partition that holds it (0 on a queue of one)
	ms              int64 // its stream id's millisecond
}

type tmState struct {
	done     bool  // deleted or dead-lettered
	deadline int64 // in flight until (ms of the queue clock); 0 never received
	count    int
	handle   string
	d        tags.Delivery // what a consume stream settles instead of the handle
}

type tmTag struct {
	name           string
	st             []tmState // per message
	rcv, del, dead int64
}

// want is the counters the model expects of tg at the queue's ms at.
func (tg *tmTag) want(at int64) tags.TagState {
	var want tags.TagState
	for _, s := range tg.st {
		switch {
		case s.done:
		case s.deadline > at:
			want.InFlight++
		default:
			want.Available++
		}
	}
	want.ReceivedTotal, want.DeletedTotal, want.DeadTotal = tg.rcv, tg.del, tg.dead
	return want
}

// nack makes tg's message i visible again at once (at: the queue's ms now).
func (tg *tmTag) nack(t *testing.T, b *B, q string, i int, at int64) {
	t.Helper()
	nack(t, b, q, tg.st[i].handle)
	tg.st[i].deadline = at
}

// deadLetter dead-letters tg's message i (DeadMessage).
func (tg *tmTag) deadLetter(t *testing.T, b *B, q string, i int) {
	t.Helper()
	errs, err := b.s.DeadLetter(b.ctx, q, []tags.DeadRequest{{ReceiptHandle: tg.st[i].handle}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	tg.st[i].done = true
	tg.dead++
}

const (
	tmVisMs = 10000
	tmMaxRC = 3
)

// tmRun is one run of the topic or the priority model: its queue, the
// model of its tags (message i of tgs[k].st is body(i)), where the run
// is, and the steps both models take alike.
type tmRun struct {
	t    *testing.T
	b    *B
	bg   Maintainer
	q    string
	rng  *rand.Rand
	tgs  []*tmTag
	body func(i int) string
	step int
	op   string
	// ids are the messages' ids (for seeks), reseek what a model keeps of
	// a tag beyond tmTag that a seek to message k resets (nil: nothing).
	ids    func() []string
	reseek func(tg *tmTag, k int)
	// behind, on a partitioned queue, says whether a seek to message k
	// puts message i behind the cursor (nil: i < k, one stream).
	behind func(k, i int) bool
}

func (r *tmRun) now() int64 { return r.b.now(r.q) }

func (r *tmRun) fail(format string, args ...any) {
	r.t.Helper()
	r.b.failure(fmt.Sprintf("queue %s step %d (%s): %s", r.q, r.step, r.op, fmt.Sprintf(format, args...)))
}

// pickInFlight picks a tag, and one of its messages in flight, at random.
func (r *tmRun) pickInFlight() (*tmTag, int, bool) {
	tg := r.tgs[r.rng.IntN(len(r.tgs))]
	at := r.now()
	var cand []int
	for i, s := range tg.st {
		if !s.done && s.deadline > at {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return nil, 0, false
	}
	return tg, cand[r.rng.IntN(len(cand))], true
}

// shared takes the step of roll (75-99 of 100) that both models take
// alike: a nack, DeadMessage, a seek (S22) or time advancing. It says
// false when there was nothing to take it on (the step ends there).
func (r *tmRun) shared(roll int) bool {
	switch {
	case roll >= 90 && roll < 93:
		r.seek()
	case roll < 85:
		tg, i, ok := r.pickInFlight()
		if !ok {
			return false
		}
		r.op = fmt.Sprintf("nack %s %s", tg.name, r.body(i))
		tg.nack(r.t, r.b, r.q, i, r.now())
	case roll < 90:
		tg, i, ok := r.pickInFlight()
		if !ok {
			return false
		}
		r.op = fmt.Sprintf("dead %s %s", tg.name, r.body(i))
		tg.deadLetter(r.t, r.b, r.q, i)
	default:
		d := time.Duration(1+r.rng.IntN(12)) * time.Second
		r.op = fmt.Sprintf("advance %v", d)
		r.b.advance(r.q, d)
	}
	return true
}

// seek moves a random tag's cursor (S22) to the oldest message, to a
// message's id or to now: what precedes the cursor is done with for the
// tag, what follows it is new to it (receive counts from 0, nothing in
// flight), and the state the seek answers is the model's. The clock then
// moves a second on (the storage dates deliveries in a seek's own
// millisecond a millisecond later: seek.go's tests, not the models').
func (r *tmRun) seek() {
	r.t.Helper()
	tg := r.tgs[r.rng.IntN(len(r.tgs))]
	ids := r.ids()
	k := r.rng.IntN(len(ids)+2) - 1
	var to tags.SeekTarget
	switch {
	case k < 0:
		k, to.Time = 0, time.Unix(0, 0)
	case k == len(ids):
		to.Time = time.UnixMilli(r.now())
	default:
		to.MessageID = ids[k]
	}
	r.op = fmt.Sprintf("seek %s to message %d of %d", tg.name, k, len(ids))
	got, err := r.b.s.SeekTag(r.b.ctx, r.q, tg.name, to)
	if err != nil {
		r.fail("seek: %v", err)
	}
	for i := range tg.st {
		done := i < k
		if r.behind != nil && to.MessageID != "" {
			done = r.behind(k, i)
		}
		tg.st[i] = tmState{done: done}
	}
	if r.reseek != nil {
		r.reseek(tg, k)
	}
	st := got.State
	st.OldestAvailableAge = 0
	if want := tg.want(r.now()); st != want {
		r.fail("tag %s state after the seek %+v, want %+v", tg.name, st, want)
	}
	r.b.advance(r.q, time.Second)
}

// endStep ends a step with a sweep, as the background worker would run
// (what a tag received tmMaxRC times and whose deadline passed is dead),
// then checks every tag's counters against the model's.
func (r *tmRun) endStep() {
	r.t.Helper()
	require.NoError(r.t, r.bg.Sweep(r.b.ctx, r.q))
	at := r.now()
	for _, tg := range r.tgs {
		for i := range tg.st {
			s := &tg.st[i]
			if !s.done && s.count >= tmMaxRC && s.deadline <= at {
				s.done = true
				tg.dead++
			}
		}
	}
	for _, tg := range r.tgs {
		if got, want := r.b.state(r.q, tg.name), tg.want(at); got != want {
			r.fail("tag %s state %+v, want %+v", tg.name, got, want)
		}
	}
}

func runTopicModel(t *testing.T, b *B, q string, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, 13))
	dlq := q + "-dlq"
	b.queue(dlq, topicQueue, func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
	b.queue(q, topicQueue, func(c *tags.QueueConfig) {
		c.VisibilityTimeoutSeconds = i32(tmVisMs / 1000)
		c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: tmMaxRC}
	})
	b.tag(q, "t2")
	b.advance(q, 0)
	pt, parts := partitioner(t, b, q)
	var msgs []tmMsg
	tgs := []*tmTag{{name: "default"}, {name: "t2"}}
	run := &tmRun{t: t, b: b, bg: b.maintainer(), q: q, rng: rng, tgs: tgs, body: func(i int) string { return msgs[i].body },
		ids: func() []string {
			out := make([]string, len(msgs))
			for i, m := range msgs {
				out[i] = m.id
			}
			return out
		}}
	topicPart := map[string]int{}
	if pt != nil {
		// A seek to message k: its partition from it, the others from its
		// millisecond, as a seek to that time (at or after now: the end).
		run.behind = func(k, i int) bool {
			if msgs[i].part == msgs[k].part {
				return i < k
			}
			return msgs[k].ms >= run.now() || msgs[i].ms < msgs[k].ms
		}
	}
	// ready: the messages tag may be handed out now, by index.
	ready := func(tg *tmTag, at int64) map[int]bool {
		out := map[int]bool{}
		seen := map[string]bool{}
		for i, m := range msgs {
			s := tg.st[i]
			if s.done || seen[m.topic] {
				continue
			}
			seen[m.topic] = true // the first not done blocks the rest of its topic
			if s.deadline <= at {
				out[i] = true
			}
		}
		return out
	}
	for run.step = 0; run.step < ops; run.step++ {
		switch r := rng.IntN(100); {
		case r < 25:
			n := 1 + rng.IntN(3)
			run.op = fmt.Sprintf("send %d", n)
			out := make([]tags.OutMessage, n)
			for j := range out {
				tp := string(rune('a' + rng.IntN(3)))
				out[j] = tags.OutMessage{Topic: tp, Body: []byte(fmt.Sprintf("%s%d", tp, len(msgs)+j))}
			}
			ids := b.sendMsgs(q, out...)
			for j, id := range ids {
				m := tmMsg{id: id, topic: out[j].Topic, body: string(out[j].Body)}
				if pt != nil {
					// A topic's messages all go to one partition, each
					// partition's ids in send order (S13 rests on both).
					var sid string
					m.part, sid = pt.Locate(q, id)
					ms, _, ok := streamid.Parse(sid)
					if !ok || m.part < 0 || m.part >= parts {
						run.fail("message %s: partition %d of %d, stream id %q", id, m.part, parts, sid)
					}
					m.ms = int64(ms)
					if p, ok := topicPart[m.topic]; ok && p != m.part {
						run.fail("topic %s: message %s in partition %d, earlier ones in %d", m.topic, id, m.part, p)
					}
					topicPart[m.topic] = m.part
					for i := len(msgs) - 1; i >= 0; i-- {
						if msgs[i].part == m.part {
							if _, psid := pt.Locate(q, msgs[i].id); !idLess(psid, sid) {
								run.fail("message %s after %s in partition %d", id, msgs[i].id, m.part)
							}
							break
						}
					}
				}
				msgs = append(msgs, m)
				for _, tg := range tgs {
					tg.st = append(tg.st, tmState{})
				}
			}
		case r < 60:
			tg := tgs[rng.IntN(len(tgs))]
			max := 1 + rng.IntN(4)
			run.op = fmt.Sprintf("receive %s max %d", tg.name, max)
			want := ready(tg, run.now())
			got := b.receive(q, tg.name, max)
			at := run.now()
			topics := map[string]bool{}
			for _, m := range got {
				i := -1
				for j := range msgs {
					if msgs[j].id == m.ID {
						i = j
					}
				}
				if i < 0 || !want[i] {
					run.fail("handed out %s (%s), not ready: ready %v", m.ID, m.Body, want)
				}
				if topics[m.Topic] {
					run.fail("two of topic %s in one receive", m.Topic)
				}
				topics[m.Topic] = true
				s := &tg.st[i]
				s.count++
				if m.ReceiveCount != s.count || m.Topic != msgs[i].topic || string(m.Body) != msgs[i].body {
					run.fail("got %s count %d topic %s, want %s count %d topic %s", m.Body, m.ReceiveCount, m.Topic,
						msgs[i].body, s.count, msgs[i].topic)
				}
				s.deadline, s.handle, s.d = at+tmVisMs, m.ReceiptHandle, m.Delivery(q)
				tg.rcv++
			}
			if len(got) < max && len(got) < len(want) {
				run.fail("handed out %d of %d ready (max %d)", len(got), len(want), max)
			}
		case r < 75:
			tg, i, ok := run.pickInFlight()
			if !ok {
				continue
			}
			run.op = fmt.Sprintf("delete %s %s", tg.name, msgs[i].body)
			if rng.IntN(2) == 0 {
				b.del(q, tags.Message{ReceiptHandle: tg.st[i].handle})
			} else {
				sb := &tags.SettleBatch{Queue: q, Tag: tg.name, Ops: []tags.Settlement{{Kind: tags.SettleAck, Delivery: tg.st[i].d}}}
				require.NoError(t, b.s.Settle(b.ctx, []*tags.SettleBatch{sb}))
				require.NoError(t, sb.Errs[0])
			}
			tg.st[i].done = true
			tg.del++
		default:
			if !run.shared(r) {
				continue
			}
		}
		run.endStep()
	}
	if ops >= 200 && pt != nil && len(msgs) > 0 {
		used := map[int]bool{}
		for _, m := range msgs {
			used[m.part] = true
		}
		if len(used) < 2 {
			t.Fatalf("queue %s: every topic went to one partition: partitions went untested", q)
		}
	}
}

// partitioner is the harness's Partitioner when queue q (made) is
// partitioned, with its partition count; nil for a queue of one
// partition. A partitioned queue without one skips the test.
func partitioner(t *testing.T, b *B, q string) (Partitioner, int) {
	t.Helper()
	n := b.partitions(q)
	if n <= 1 {
		return nil, 1
	}
	pt := b.extras().Partitioner
	if pt == nil {
		t.Skip("the harness gives no Partitioner (Hooks): the model cannot follow a partitioned queue")
	}
	return pt, int(n)
}
