package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/tagqdtest"
)

// ---- W7: recovery (issue 23 D): a newcomer's first load test. Many
// messages are sent, a share of them received and left in flight; while
// their visibility runs out and they come back (the background work
// moving them back, a consumer receiving and deleting them again), calls
// on another queue must keep being answered: the max and p99 of their
// latencies are the figures (bar: no call over 1 s, p99 under 50 ms).

// w7Config is W7's shape.
type w7Config struct {
	messages, inflight int           // sent, and of them received and left in flight
	visibility         time.Duration // of those receives (whole seconds)
	stores             []string      // "embedded" (tagqd's in-process store), "redis" (the bench's Redis)
	scrape             time.Duration // how often /metrics is scraped meanwhile (0: never)
	bin                string
	redisArgs          []string // a tagqd's flags for the bench's Redis
}

// w7Result is one store's run.
type w7Result struct {
	store              string
	sendFor, recvFor   time.Duration // how long the sends and the receives took
	probes             int           // probe calls measured
	p50, p99, max      time.Duration
	slow               int           // probe calls over 1 s
	drained            time.Duration // from the deadline until the consumer deleted them all
	failed             int           // probe calls that failed
	recoveredAvailable int64         // messages the consumer got back
}

// w7 runs W7 on each store, a tagqd of its own each.
func (e *env) w7(c w7Config) {
	var rs []w7Result
	for _, store := range c.stores {
		r, err := e.w7On(c, store)
		if err != nil {
			fmt.Printf("W7 on %s failed: %v\n\n", store, err)
			continue
		}
		rs = append(rs, r)
	}
	fmt.Printf("## W7: recovery: %d messages sent, %d received and left in flight (visibility %v); calls on another queue while they come back\n\n",
		c.messages, c.inflight, c.visibility)
	fmt.Println("| store | sends took | receives took | probe calls | p50 ms | p99 ms | max ms | calls over 1 s | failed | back and deleted in |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		fmt.Printf("| %s | %v | %v | %d | %s | %s | %s | %d | %d | %v (%d) |\n", r.store, r.sendFor.Round(time.Millisecond),
			r.recvFor.Round(time.Millisecond), r.probes, ms(r.p50), ms(r.p99), ms(r.max), r.slow, r.failed,
			r.drained.Round(time.Millisecond), r.recoveredAvailable)
	}
	fmt.Println()
	printLoad()
}

// w7On runs W7 on a fresh tagqd over store.
func (e *env) w7On(c w7Config, store string) (w7Result, error) {
	r := w7Result{store: store}
	args := []string{"--log-level", "error"}
	if store == "redis" {
		args = append(c.redisArgs, args...)
	}
	d, err := tagqdtest.Start(c.bin, args...)
	if err != nil {
		return r, err
	}
	defer func() { _, _ = d.Stop() }()
	client, err := tagq.Dial(d.GRPC)
	if err != nil {
		return r, err
	}
	defer client.Close()
	ctx := e.ctx
	m, q := client.Messages, client.Queues
	const loaded, probe = "w7-recovery", "w7-probe"
	for _, name := range []string{loaded, probe} {
		_, _ = q.DeleteQueue(ctx, &tagqv1.DeleteQueueRequest{Name: name, Force: true})
		if _, err := q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: name}}); err != nil {
			return r, err
		}
	}
	defer func() {
		for _, name := range []string{loaded, probe} {
			_, _ = q.DeleteQueue(context.WithoutCancel(ctx), &tagqv1.DeleteQueueRequest{Name: name, Force: true})
		}
	}()

	// The load: the sends, then the receives, by 8 clients each.
	start := time.Now()
	var next atomic.Int64
	if err := inParallel(ctx, 8, func(ctx context.Context) error {
		for next.Add(100) <= int64(c.messages) {
			if err := sendVia(ctx, m, loaded, 100, func() []byte { return e.body }); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return r, fmt.Errorf("sending: %w", err)
	}
	r.sendFor = time.Since(start)
	start = time.Now()
	vis := int32(c.visibility / time.Second)
	var got atomic.Int64
	if err := inParallel(ctx, 8, func(ctx context.Context) error {
		for got.Load() < int64(c.inflight) {
			res, err := m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: loaded, MaxMessages: i32(10),
				WaitSeconds: i32(0), VisibilitySeconds: &vis})
			if err != nil {
				return err
			}
			got.Add(int64(len(res.GetMessages())))
		}
		return nil
	}); err != nil {
		return r, fmt.Errorf("receiving: %w", err)
	}
	r.recvFor = time.Since(start)
	deadline := start.Add(c.visibility)

	// The probes: 4 clients send, receive and delete one message at a time
	// on the other queue, each call measured, until the loaded queue is
	// drained; /metrics scraped meanwhile; a consumer takes back what comes
	// back once the deadline passed.
	pctx, stopProbes := context.WithCancel(ctx)
	defer stopProbes()
	var lat latencies
	var slow, failed atomic.Int64
	var probes sync.WaitGroup
	timed := func(call func() error) {
		t0 := time.Now()
		err := call()
		d := time.Since(t0)
		if pctx.Err() != nil {
			return
		}
		if err != nil {
			failed.Add(1)
			return
		}
		lat.add(d)
		if d > time.Second {
			slow.Add(1)
		}
	}
	for range 4 {
		probes.Add(1)
		go func() {
			defer probes.Done()
			for pctx.Err() == nil {
				timed(func() error {
					_, err := m.SendMessage(pctx, &tagqv1.SendMessageRequest{Queue: probe, Body: e.body})
					return err
				})
				var got []*tagqv1.Message
				timed(func() error {
					res, err := m.ReceiveMessage(pctx, &tagqv1.ReceiveMessageRequest{Queue: probe, MaxMessages: i32(1), WaitSeconds: i32(0)})
					got = res.GetMessages()
					return err
				})
				for _, msg := range got {
					timed(func() error {
						_, err := m.DeleteMessage(pctx, &tagqv1.DeleteMessageRequest{Queue: probe, ReceiptHandle: msg.GetReceiptHandle()})
						return err
					})
				}
				time.Sleep(5 * time.Millisecond) // a probe, not a load
			}
		}()
	}
	if c.scrape > 0 {
		probes.Add(1)
		go func() {
			defer probes.Done()
			scrapeEvery(pctx, d.HTTP, c.scrape, 0)
		}()
	}
	time.Sleep(time.Until(deadline))
	// They come back: one consumer receives and deletes them, as a client
	// that restarted would.
	var back int64
	for back < int64(c.inflight) && time.Since(deadline) < 10*time.Minute {
		res, err := m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: loaded, MaxMessages: i32(10), WaitSeconds: i32(1)})
		if err != nil {
			return r, fmt.Errorf("receiving them back: %w", err)
		}
		var again []*tagqv1.Message
		for _, msg := range res.GetMessages() {
			if msg.GetReceiveCount() > 1 {
				again = append(again, msg)
			}
		}
		back += int64(len(again))
		if len(again) > 0 {
			if err := deleteVia(ctx, m, loaded, again); err != nil {
				return r, err
			}
		}
		// (Those never received before, which come after the due ones,
		// are left in flight: not W7's business.)
	}
	r.drained, r.recoveredAvailable = time.Since(deadline), back
	stopProbes()
	probes.Wait()
	r.p50, r.p99, r.max = lat.pct()
	r.probes, r.slow, r.failed = len(lat.d), int(slow.Load()), int(failed.Load())
	return r, nil
}

// inParallel runs f in n goroutines and returns the first error (the
// others' context is cancelled then).
func inParallel(ctx context.Context, n int, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	return first
}
