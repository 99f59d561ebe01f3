package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tagq/tagq/tags"
)

// settler turns the acks, nacks, extends and deads of every consume stream
// into batched engine calls: all that arrived since the last flush go to
// tags.Storage.Settle together (on Redis, one script call per tag, in one pipelined
// round trip). While a flush runs the next batch gathers, so the batches
// grow with the load and an idle server adds no delay (no fixed tick).
type settler struct {
	store tags.Storage
	log   *slog.Logger

	mu       sync.Mutex
	pending  map[tagKey]*tagOps
	flushing bool
}

type tagKey struct{ queue, tag string }

// tagOps gathers one tag's settlements and who to tell about them.
type tagOps struct {
	ops   []tags.Settlement
	waits []settleWait
}

// settleWait is one submit: ops[from:from+n] of its tagOps.
type settleWait struct {
	from, n int
	done    func(errs []error, err error)
}

// settleTimeout bounds one flush; a flush that fails leaves the messages
// in flight, so they come back at their deadlines.
const settleTimeout = 30 * time.Second

func newSettler(store tags.Storage, log *slog.Logger) *settler {
	return &settler{store: store, log: log, pending: map[tagKey]*tagOps{}}
}

// submit queues settlements of one tag. done is called once they are
// durable (or failed): with one error per settlement (nil when it applied),
// or a whole-call error. It is called from the flushing goroutine and must
// not block for long.
func (st *settler) submit(queue, tag string, ops []tags.Settlement, done func(errs []error, err error)) {
	st.mu.Lock()
	k := tagKey{queue, tag}
	t := st.pending[k]
	if t == nil {
		t = &tagOps{}
		st.pending[k] = t
	}
	t.waits = append(t.waits, settleWait{from: len(t.ops), n: len(ops), done: done})
	t.ops = append(t.ops, ops...)
	start := !st.flushing
	st.flushing = true
	st.mu.Unlock()
	if start {
		go st.run()
	}
}

// run flushes until nothing is pending. One runs at a time.
func (st *settler) run() {
	for {
		st.mu.Lock()
		if len(st.pending) == 0 {
			st.flushing = false
			st.mu.Unlock()
			return
		}
		batch := st.pending
		st.pending = map[tagKey]*tagOps{}
		st.mu.Unlock()
		st.flush(batch)
	}
}

func (st *settler) flush(batch map[tagKey]*tagOps) {
	batches := make([]*tags.SettleBatch, 0, len(batch))
	owners := make([]*tagOps, 0, len(batch))
	for k, t := range batch {
		batches = append(batches, &tags.SettleBatch{Queue: k.queue, Tag: k.tag, Ops: t.ops})
		owners = append(owners, t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	err := st.store.Settle(ctx, batches)
	cancel()
	if err != nil {
		st.log.Warn("settling consume stream acks failed; the messages come back at their deadlines", "err", err)
	}
	for i, t := range owners {
		for _, w := range t.waits {
			if err != nil {
				w.done(nil, err)
				continue
			}
			w.done(batches[i].Errs[w.from:w.from+w.n], nil)
		}
	}
}
