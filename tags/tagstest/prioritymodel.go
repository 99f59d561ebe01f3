package tagstest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tagq/tagq/tags"
)

// testModel_PriorityQueue runs random sends (priorities 0-16), receives on
// two tags, deletes, nacks, DeadMessage, seeks, time advancing and sweeps against
// a priority queue and a reference model: a receive hands out due
// redeliveries first (any order among them), then, having read every new
// message into per-priority lists, the highest priority held, FIFO within
// a priority, every 10th from the lists being the oldest held; receive
// counts, priorities and every tag counter match after each step.
func testModel_PriorityQueue(t *testing.T, b *B) {
	seeds, ops := envInt("TAGQ_MODEL_SEEDS", 6), envInt("TAGQ_MODEL_OPS", 250)
	for seed := 1; seed <= seeds; seed++ {
		runPrioModel(t, b, fmt.Sprintf("prio%d", seed), uint64(seed), ops)
	}
}

type pmTag struct {
	tmTag
	read  int          // messages read into the lists (a prefix of all sent)
	lists [][]int      // per priority 1..16 (index p-1): held messages, in order
	pk    int          // handed out from the lists
	held  map[int]bool // in a list
}

func runPrioModel(t *testing.T, b *B, q string, seed uint64, ops int) {
	if b.extras().Partitioner != nil {
		t.Skip("a priority queue has one partition: the harness's unpartitioned twin runs this model")
	}
	rng := rand.New(rand.NewPCG(seed, 17))
	dlq := q + "-dlq"
	b.queue(dlq, func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
	b.queue(q, priorityQueue, func(c *tags.QueueConfig) {
		c.VisibilityTimeoutSeconds = i32(tmVisMs / 1000)
		c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: tmMaxRC}
	})
	b.tag(q, "t2")
	b.advance(q, 0)
	type pmMsg struct {
		id, body string
		prio     int32
	}
	var msgs []pmMsg
	tgs := []*pmTag{{tmTag: tmTag{name: "default"}}, {tmTag: tmTag{name: "t2"}}}
	run := &tmRun{t: t, b: b, bg: b.maintainer(), q: q, rng: rng, body: func(i int) string { return msgs[i].body },
		ids: func() []string {
			out := make([]string, len(msgs))
			for i, m := range msgs {
				out[i] = m.id
			}
			return out
		}}
	for _, tg := range tgs {
		tg.lists = make([][]int, tags.MaxPriority)
		tg.held = map[int]bool{}
		run.tgs = append(run.tgs, &tg.tmTag)
	}
	// A seek to message k: the tag's lists are empty and it reads from k
	// on (how many it handed out from the lists, for every 10th, stays).
	run.reseek = func(t *tmTag, k int) {
		for _, tg := range tgs {
			if &tg.tmTag == t {
				tg.read, tg.lists, tg.held = k, make([][]int, tags.MaxPriority), map[int]bool{}
			}
		}
	}
	// pop takes the next message from tag's lists by the rule.
	pop := func(tg *pmTag) int {
		p := -1
		if (tg.pk+1)%tags.PriorityOldestEvery == 0 {
			for i, l := range tg.lists {
				if len(l) > 0 && (p < 0 || l[0] < tg.lists[p][0]) {
					p = i
				}
			}
		} else {
			for i, l := range tg.lists {
				if len(l) > 0 {
					p = i
					break
				}
			}
		}
		if p < 0 {
			return -1
		}
		m := tg.lists[p][0]
		tg.lists[p] = tg.lists[p][1:]
		delete(tg.held, m)
		tg.pk++
		return m
	}
	index := func(id string) int {
		for j := range msgs {
			if msgs[j].id == id {
				return j
			}
		}
		return -1
	}
	for run.step = 0; run.step < ops; run.step++ {
		switch r := rng.IntN(100); {
		case r < 30:
			n := 1 + rng.IntN(4)
			run.op = fmt.Sprintf("send %d", n)
			out := make([]tags.OutMessage, n)
			for j := range out {
				p := []int32{0, 1, 2, 5, 8, 16}[rng.IntN(6)]
				out[j] = tags.OutMessage{Priority: p, Body: []byte(fmt.Sprintf("p%d-%d", p, len(msgs)+j))}
			}
			ids := b.sendMsgs(q, out...)
			for j, id := range ids {
				p := out[j].Priority
				if p == 0 {
					p = tags.DefaultPriority
				}
				msgs = append(msgs, pmMsg{id: id, body: string(out[j].Body), prio: p})
				for _, tg := range tgs {
					tg.st = append(tg.st, tmState{})
				}
			}
		case r < 60:
			tg := tgs[rng.IntN(len(tgs))]
			max := 1 + rng.IntN(5)
			run.op = fmt.Sprintf("receive %s max %d", tg.name, max)
			at := run.now()
			redeliv := map[int]bool{}
			for i, s := range tg.st {
				if !s.done && s.count > 0 && s.deadline <= at {
					redeliv[i] = true
				}
			}
			var want []int // the first-time deliveries, in order
			if len(redeliv) < max {
				for ; tg.read < len(msgs); tg.read++ {
					p := msgs[tg.read].prio
					tg.lists[p-1] = append(tg.lists[p-1], tg.read)
					tg.held[tg.read] = true
				}
				for len(want) < max-len(redeliv) {
					m := pop(tg)
					if m < 0 {
						break
					}
					want = append(want, m)
				}
			}
			got := b.receive(q, tg.name, max)
			nre := min(len(redeliv), max)
			if len(got) != nre+len(want) {
				run.fail("handed out %d, want %d redeliveries and %d new", len(got), nre, len(want))
			}
			var gotNew []int
			for k, m := range got {
				i := index(m.ID)
				if i < 0 {
					run.fail("unknown message %s", m.ID)
				}
				if k < nre {
					if !redeliv[i] {
						run.fail("handed out %s as redelivery, not due", msgs[i].body)
					}
				} else {
					gotNew = append(gotNew, i)
				}
				s := &tg.st[i]
				s.count++
				if m.ReceiveCount != s.count || m.Priority != msgs[i].prio || string(m.Body) != msgs[i].body {
					run.fail("got %s count %d priority %d, want %s count %d priority %d", m.Body, m.ReceiveCount, m.Priority,
						msgs[i].body, s.count, msgs[i].prio)
				}
				s.deadline, s.handle = at+tmVisMs, m.ReceiptHandle
				tg.rcv++
			}
			if !slices.Equal(gotNew, want) {
				run.fail("new messages %v, want %v", gotNew, want)
			}
		case r < 75:
			tg, i, ok := run.pickInFlight()
			if !ok {
				continue
			}
			run.op = fmt.Sprintf("delete %s %s", tg.name, msgs[i].body)
			b.del(q, tags.Message{ReceiptHandle: tg.st[i].handle})
			tg.st[i].done = true
			tg.del++
		default:
			if !run.shared(r) {
				continue
			}
		}
		run.endStep()
	}
}
