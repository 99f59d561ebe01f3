package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The peers' figures mean something only if they do the work: every
// message sent is received once by each group and acknowledged, so that
// the server holds nothing afterwards; and remove leaves nothing behind.
// These run against the local servers, and skip when they do not answer.

func TestNATSPeerDoesTheWork(t *testing.T) {
	url := envOr("TAGQ_TEST_NATS_URL", "nats://127.0.0.1:4222")
	if err := answers(url, "4222"); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	p, err := dialNATS(ctx, url)
	require.NoError(t, err)
	t.Cleanup(p.close)
	for _, groups := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d groups", groups), func(t *testing.T) {
			q := exercisePeer(t, p, groups)
			nq := q.(*natsQueue)
			// Acks are sent, not confirmed: the server may take a moment.
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				for g, cons := range nq.cons {
					info, err := cons.Info(ctx)
					if !assert.NoError(c, err) {
						return
					}
					assert.Zerof(c, info.NumAckPending, "group %d: delivered, not acknowledged", g)
					assert.Zerof(c, info.NumPending, "group %d: not delivered", g)
					assert.EqualValuesf(c, 200, info.AckFloor.Stream, "group %d: acknowledged up to", g)
				}
				s, err := p.pjs.Stream(ctx, nq.stream)
				if assert.NoError(c, err) {
					assert.Zero(c, s.CachedInfo().State.Msgs, "messages left in the stream")
				}
			}, 5*time.Second, 50*time.Millisecond)
			require.NoError(t, q.remove())
			_, err := p.pjs.Stream(ctx, nq.stream)
			require.ErrorIs(t, err, jetstream.ErrStreamNotFound)
		})
	}
}

func TestRabbitMQPeerDoesTheWork(t *testing.T) {
	url := envOr("TAGQ_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/")
	if err := answers(url, "5672"); err != nil {
		t.Skip(err)
	}
	p, err := dialAMQP(url)
	require.NoError(t, err)
	t.Cleanup(p.close)
	for _, groups := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d groups", groups), func(t *testing.T) {
			q := exercisePeer(t, p, groups).(*amqpQueue)
			// The consumers' channels are closed: what they did not
			// acknowledge is back in the queue, and would be counted.
			ch, err := p.pub.Channel()
			require.NoError(t, err)
			defer func() { _ = ch.Close() }()
			for _, n := range q.queues {
				st, err := ch.QueueDeclarePassive(n, true, false, false, false, nil)
				require.NoError(t, err)
				require.Zero(t, st.Messages, "%s: messages left", n)
				require.Zero(t, st.Consumers, "%s: consumers left", n)
			}
			require.NoError(t, q.remove())
			_, err = ch.QueueDeclarePassive(q.queues[0], true, false, false, false, nil)
			var ae *amqp.Error
			require.True(t, errors.As(err, &ae), "queue still there: %v", err)
			require.Equal(t, amqp.NotFound, ae.Code)
		})
	}
}

// exercisePeer sends 200 distinct messages with 2 producers in batches of
// 10, receives them with 2 consumers per group, checks that each group got
// each message exactly once, and closes the producers and consumers.
func exercisePeer(t *testing.T, p peer, groups int) peerQueue {
	t.Helper()
	ctx := context.Background()
	q, err := p.open(ctx, fmt.Sprintf("test-%d", groups), groups, 100)
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.remove() }) // the caller checks, then removes; this is for failures
	var cons []peerConsumer
	for g := range 2 * groups {
		c, err := q.consumer(g % groups)
		require.NoError(t, err)
		cons = append(cons, c)
	}
	const total = 200
	var wg sync.WaitGroup
	errs := make(chan error, 2+len(cons))
	for i := range 2 {
		pr, err := q.producer()
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer pr.close()
			for b := range total / 2 / 10 {
				bodies := make([][]byte, 10)
				for j := range bodies {
					bodies[j] = fmt.Appendf(nil, "m-%d-%d-%d", i, b, j)
				}
				if err := sendAll(pr, bodies); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	seen := make([]map[string]int, groups)
	for g := range seen {
		seen[g] = map[string]int{}
	}
	count := func(g int) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, k := range seen[g] {
			n += k
		}
		return n
	}
	deadline := time.Now().Add(15 * time.Second)
	for i, c := range cons {
		g := i % groups
		wg.Add(1)
		go func() {
			defer wg.Done()
			for count(g) < total && time.Now().Before(deadline) {
				_, err := c.receive(10, 200*time.Millisecond, func(b []byte) {
					mu.Lock()
					seen[g][string(b)]++
					mu.Unlock()
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, c := range cons {
		c.close()
	}
	for g := range seen {
		require.Len(t, seen[g], total, "group %d: distinct messages received", g)
		for body, n := range seen[g] {
			require.Equal(t, 1, n, "group %d received %s %d times", g, body, n)
		}
	}
	return q
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Each row's ratios are to raw and to nats in the same workload; rows
// without one show "-", and latency rows compare their p99 with nats's.
func TestTableRatios(t *testing.T) {
	row := func(workload, system string, msgs int64, p99 time.Duration) result {
		return result{workload: workload, system: system, msgs: msgs, elapsed: time.Second, p99: p99}
	}
	var b bytes.Buffer
	writeTable(&b, "t", []result{
		row("A", "tagq", 300, 0), row("A", "raw", 1200, 0), row("A", "nats", 600, 0), row("A", "rabbitmq", 180, 0),
		row("B", "tagq", 100, 0), row("B", "raw", 400, 0),
		row("C", "tagq", 1000, 3*time.Millisecond), row("C", "nats", 1000, 2*time.Millisecond),
	})
	cells := map[string][]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		f := strings.Split(l, "|")
		if len(f) > 5 && strings.TrimSpace(f[1]) != "workload" && !strings.HasPrefix(f[1], "-") {
			for i := range f {
				f[i] = strings.TrimSpace(f[i])
			}
			cells[f[1]+" "+f[2]] = f[3:]
		}
	}
	for _, c := range []struct{ row, rate, xraw, xnats string }{
		{"A tagq", "300", "0.25", "0.50"}, {"A raw", "1200", "-", "2.00"},
		{"A nats", "600", "0.50", "-"}, {"A rabbitmq", "180", "0.15", "0.30"},
		{"B tagq", "100", "0.25", "-"}, {"B raw", "400", "-", "-"},
		{"C tagq", "1000", "-", "1.00"}, {"C nats", "1000", "-", "-"},
	} {
		got := cells[c.row]
		require.NotNil(t, got, c.row)
		require.Equal(t, []string{c.rate, c.xraw, c.xnats}, got[:3], c.row)
	}
	require.True(t, strings.HasPrefix(cells["C tagq"][len(cells["C tagq"])-2], "p99 1.50 x NATS's"), cells["C tagq"])
	require.Equal(t, "", cells["C nats"][len(cells["C nats"])-2])
}

// fakeProducer confirms a publish when its test says so.
type fakeProducer struct {
	mu      sync.Mutex
	confirm []chan error
}

func (f *fakeProducer) publish([]byte) (func() error, error) {
	c := make(chan error, 1)
	f.mu.Lock()
	f.confirm = append(f.confirm, c)
	f.mu.Unlock()
	return func() error { return <-c }, nil
}

// confirmNth confirms the nth publish (from 0) with err.
func (f *fakeProducer) confirmNth(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.confirm[n] <- err
}

func (f *fakeProducer) close() {}

// W3's window: send returns with at most n unconfirmed, waiting for the
// oldest; flush waits for them all; a refused message is an error.
func TestWindowedKeepsAtMostNUnconfirmed(t *testing.T) {
	f := &fakeProducer{}
	w := &windowed{p: f, n: 2}
	require.NoError(t, w.send(nil))
	require.NoError(t, w.send(nil)) // two out, none confirmed: no wait
	sent := make(chan error, 1)
	go func() { sent <- w.send(nil) }()
	select {
	case <-sent:
		t.Fatal("a third send returned with the first unconfirmed")
	case <-time.After(50 * time.Millisecond):
	}
	f.confirmNth(0, nil)
	require.NoError(t, <-sent)
	require.Len(t, w.pending, 2)
	f.confirmNth(1, nil)
	f.confirmNth(2, errNacked)
	require.ErrorIs(t, w.flush(), errNacked)
	require.Empty(t, w.pending)
}
