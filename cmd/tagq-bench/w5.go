package main

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// memResult is W5's memory figures for one system and tag count.
type memResult struct {
	system           string
	tags             int
	perMessage       float64 // bytes of Redis memory per retained message
	perInFlight      float64 // bytes per in-flight message, for one tag
	drain            result
	backlog, flights int
}

// fill sends n messages with 4 goroutines in batches of 100.
func fill(n int, send func() error) error {
	var left atomic.Int64
	left.Store(int64(n / 100))
	var wg sync.WaitGroup
	var first error
	var once sync.Once
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := send(); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func (e *env) w5(tags, backlog, inflight int) []memResult {
	body := func() []byte { return e.body }
	var out []memResult

	// tagq
	e.tagqQueue("w5", tags, &tagqv1.Queue{VisibilityTimeoutSeconds: i32(43200)})
	m0 := redisMem(e.ctx, e.rdb)
	if err := fill(backlog, func() error { return e.tagqSend("w5", 100, body) }); err != nil {
		panic(err)
	}
	m1 := redisMem(e.ctx, e.rdb)
	for got := 0; got < inflight; {
		r, err := e.m.ReceiveMessage(e.ctx, &tagqv1.ReceiveMessageRequest{Queue: "w5", MaxMessages: i32(100), WaitSeconds: i32(0)})
		if err != nil {
			panic(err)
		}
		got += len(r.GetMessages())
	}
	m2 := redisMem(e.ctx, e.rdb)
	// Drain the default tag: 4 consumers, receive 10 + delete, until the
	// backlog is gone (the in-flight ones are given back first).
	tr := result{workload: fmt.Sprintf("W5 drain, %d tags", tags), system: "tagq"}
	var done atomic.Int64
	mt := startMeter(e.ctx, e.nodes, e.pid)
	var wg sync.WaitGroup
	stopAt := time.Now().Add(4 * e.dur)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stopAt) && done.Load() < int64(backlog-inflight) {
				r, err := e.m.ReceiveMessage(e.ctx, &tagqv1.ReceiveMessageRequest{Queue: "w5", MaxMessages: i32(10), WaitSeconds: i32(0)})
				if err != nil || len(r.GetMessages()) == 0 {
					return
				}
				if err := e.tagqDelete("w5", r.GetMessages()); err != nil {
					return
				}
				done.Add(int64(len(r.GetMessages())))
			}
		}()
	}
	wg.Wait()
	tr.msgs = done.Load()
	mt.stop(&tr)
	out = append(out, memResult{system: "tagq", tags: tags, backlog: backlog, flights: inflight,
		perMessage: (m1 - m0) / float64(backlog), perInFlight: (m2 - m1) / float64(inflight), drain: tr})
	_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w5", Force: true})

	// raw
	key := e.rawStream("w5", tags)
	m0 = redisMem(e.ctx, e.rdb)
	if err := fill(backlog, func() error { return e.rawSend(key, 100, body) }); err != nil {
		panic(err)
	}
	m1 = redisMem(e.ctx, e.rdb)
	for got := 0; got < inflight; {
		msgs, err := e.rawRead(key, "g0", "hold", 100, -1)
		if err != nil {
			panic(err)
		}
		got += len(msgs)
	}
	m2 = redisMem(e.ctx, e.rdb)
	rr := result{workload: fmt.Sprintf("W5 drain, %d tags", tags), system: "raw"}
	done.Store(0)
	mt = startMeter(e.ctx, e.nodes, 0)
	stopAt = time.Now().Add(4 * e.dur)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stopAt) && done.Load() < int64(backlog-inflight) {
				msgs, err := e.rawRead(key, "g0", "c"+strconv.Itoa(i), 10, -1)
				if err != nil || len(msgs) == 0 {
					return
				}
				if err := e.rawAck(key, "g0", msgs); err != nil {
					return
				}
				done.Add(int64(len(msgs)))
			}
		}()
	}
	wg.Wait()
	rr.msgs = done.Load()
	mt.stop(&rr)
	e.rdb.Del(e.ctx, key)
	return append(out, memResult{system: "raw", tags: tags, backlog: backlog, flights: inflight,
		perMessage: (m1 - m0) / float64(backlog), perInFlight: (m2 - m1) / float64(inflight), drain: rr})
}
