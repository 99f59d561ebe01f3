package redisstore

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// S21: nothing available waits. A receive is two steps (XREADGROUP into
// the tag's PEL, then receive.lua); a tagqd that stops between them leaves
// entries read and unrecorded, which the janitor makes visible again once
// they sat the stalled read. Receives already waiting then — a Consume
// stream's Reader, a long poll — on the janitor's store or another, must
// get them at once, not when something unrelated happens (issue 23: a
// Consume stream waited for ever).
//
// Time is synctest's: miniredis's clock (TIME, PEL idle times), the
// stores' timers and hints all follow it.

const livenessStalled = 5 * time.Second

// liveStore is another store on b's Redis with the production clock (its
// hints are followed) and livenessStalled as its stalled read.
func liveStore(t *testing.T, b *bundle) *Store {
	t.Helper()
	s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t), StalledRead: livenessStalled})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// readByHand does a receive's first step alone, as a tagqd killed before
// its script would leave it: n entries read into tag's PEL, unrecorded.
func readByHand(t *testing.T, b *bundle, q, tag string, n int) {
	t.Helper()
	res, err := b.rdb.XReadGroup(b.ctx, &redis.XReadGroupArgs{Group: tag, Consumer: "c", Count: int64(n),
		Streams: []string{b.s.qkeys(q).stream, ">"}, Block: -1}).Result()
	require.NoError(t, err)
	require.Len(t, res[0].Messages, n)
}

// msgs is n messages to send.
func msgs(n int) []tags.OutMessage {
	out := make([]tags.OutMessage, n)
	for i := range out {
		out[i] = tags.OutMessage{Body: []byte{byte('a' + i)}}
	}
	return out
}

// startWaiter starts a receive waiting on s: a Consume stream's Reader,
// or a long poll. It ends before the test's stores close.
func startWaiter(t *testing.T, s *Store, q string, reader bool) <-chan []tags.Message {
	t.Helper()
	ch := make(chan []tags.Message, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	var r *Reader
	if reader {
		var err error
		r, err = s.NewReader(ctx, q, "", nil)
		require.NoError(t, err)
	}
	go func() {
		defer close(done)
		var msgs []tags.Message
		var err error
		if r != nil {
			defer r.Close()
			msgs, err = r.Receive(ctx, 100)
		} else {
			msgs, err = s.Receive(ctx, q, "", tags.ReceiveOptions{MaxMessages: 100, WaitSeconds: i32(20)})
		}
		if err != nil && ctx.Err() == nil {
			t.Errorf("receive: %v", err)
		}
		ch <- msgs
	}()
	return ch
}

func TestS21_ARecoveredReadReachesWaitingReceives(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reader  bool // a Consume stream's Reader, else a long poll
		another bool // the receive waits on a store other than the janitor's
	}{
		{"consume/one store", true, false},
		{"consume/two stores", true, true},
		{"long poll/one store", false, false},
		{"long poll/two stores", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := syncBundle(t)
				janitor := liveStore(t, b)
				waits := janitor
				if tc.another {
					waits = liveStore(t, b)
				}
				b.queue("q")
				_, err := janitor.Send(b.ctx, "q", msgs(10))
				require.NoError(t, err)
				readByHand(t, b, "q", "default", 10)

				// The receive finds nothing (the ten are read) and waits.
				ch := startWaiter(t, waits, "q", tc.reader)
				synctest.Wait()
				select {
				case got := <-ch:
					t.Fatalf("the receive returned %d messages before the read was recovered", len(got))
				default:
				}

				// The janitor recovers the read once it sat the stalled read.
				time.Sleep(livenessStalled + janitor.stalledSlack())
				p, err := janitor.JanitorPass(b.ctx, "q", time.Minute)
				require.NoError(t, err)
				require.Zero(t, p.Held)
				recovered := time.Now()
				select {
				case got := <-ch:
					require.Len(t, got, 10)
					require.Less(t, time.Since(recovered), 100*time.Millisecond)
				case <-time.After(2 * time.Second):
					t.Fatalf("the receive still waits 2 s after the read was recovered; tag %+v", b.state("q", "default"))
				}
			})
		})
	}
}

// The janitor's pass that finds a read not yet stalled says when to look
// again (so redrive's worker comes back then, however idle the queue).
func TestS21_TheJanitorSaysWhenAReadMayBeStalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := syncBundle(t)
		s := liveStore(t, b)
		b.queue("q")
		_, err := s.Send(b.ctx, "q", msgs(3))
		require.NoError(t, err)
		p, err := s.JanitorPass(b.ctx, "q", time.Minute)
		require.NoError(t, err)
		require.Zero(t, p.Recheck, "nothing read: nothing to look at again")

		readByHand(t, b, "q", "default", 3)
		time.Sleep(2 * time.Second)
		p, err = s.JanitorPass(b.ctx, "q", time.Minute)
		require.NoError(t, err)
		require.Equal(t, livenessStalled+s.stalledSlack()-2*time.Second, p.Recheck)
		require.Equal(t, tags.TagState{Available: 3}, b.state("q", "default"), "a read not yet recovered counts as available")

		time.Sleep(p.Recheck)
		p, err = s.JanitorPass(b.ctx, "q", time.Minute)
		require.NoError(t, err)
		require.Zero(t, p.Recheck)
		require.Zero(t, b.pelCount("q", "default"), "recovered")
		got, err := s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 10, WaitSeconds: i32(0)})
		require.NoError(t, err)
		require.Len(t, got, 3)
	})
}

// A store with no receive waiting (no watch reads the wake stream for it)
// trusts a cached hint for hintTTL at most: a short poll after a recovery
// elsewhere finds the messages.
func TestS21_AnUnwatchedHintIsTrustedBriefly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := syncBundle(t)
		janitor, poller := liveStore(t, b), liveStore(t, b)
		b.queue("q")
		_, err := janitor.Send(b.ctx, "q", msgs(4))
		require.NoError(t, err)
		readByHand(t, b, "q", "default", 4)
		poll := func() []tags.Message {
			got, err := poller.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 10, WaitSeconds: i32(0)})
			require.NoError(t, err)
			return got
		}
		require.Empty(t, poll()) // the poller caches "nothing due for an hour"
		time.Sleep(livenessStalled + janitor.stalledSlack())
		_, err = janitor.JanitorPass(b.ctx, "q", time.Minute)
		require.NoError(t, err)
		require.Len(t, poll(), 4)
	})
}

// The same on every backend (real Redis too, whose clock tests cannot
// drive): a janitor with a stalled read of a millisecond recovers the read
// at once, and receives waiting on either store get it.
func TestS21_ARecoveredReadReachesWaitingReceivesOnEveryBackend(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		janitor, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t), StalledRead: time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { _ = janitor.Close() })
		other := prodStore(t, b)
		b.queue("q")
		_, err = other.Send(b.ctx, "q", msgs(10))
		require.NoError(t, err)
		readByHand(t, b, "q", "default", 10)
		consume := startWaiter(t, other, "q", true)
		longPoll := startWaiter(t, janitor, "q", false)
		require.Eventually(t, func() bool { return other.Waiting() == 1 && janitor.Waiting() == 1 }, 5*time.Second,
			time.Millisecond)
		time.Sleep(10 * time.Millisecond) // the read sits its (short) stalled read
		_, err = janitor.JanitorPass(b.ctx, "q", time.Minute)
		require.NoError(t, err)
		// One of them takes all ten (the other may wait on).
		var got []tags.Message
		select {
		case got = <-consume:
		case got = <-longPoll:
		case <-time.After(10 * time.Second): // a long poll waits 20 s: it was not woken
			t.Fatalf("no receive was woken by the recovery; tag %+v", b.state("q", "default"))
		}
		require.Len(t, got, 10)
	})
}

// Every other way a message becomes available to a tag (S21's list)
// reaches a Consume stream's Reader waiting on another store as soon as
// it is available: the store that makes it so writes the queue's wake
// stream, or the deadline it set reaches the waiting store's watch. Each
// case sets up on the first store, then starts the Reader on the second
// (it reads the tag, finds nothing it may have, caches its hint and
// waits), then makes one message available, by acting on the first store
// or by letting time pass, and says when it became available.
func TestS21_WhatBecomesAvailableReachesAReaderOnAnotherStore(t *testing.T) {
	type env struct {
		b    *bundle
		a    *Store // acts
		send func(ms ...tags.OutMessage)
		recv func(n int, vis int32) []tags.Message
	}
	cases := []struct {
		name  string
		topic bool
		queue func(*tags.QueueConfig)
		setup func(t *testing.T, e env) []tags.Message
		// make makes one message (body) available to the tag, at avail.
		make func(t *testing.T, e env, got []tags.Message) (body string, avail time.Time)
	}{
		{name: "visibility expiry",
			setup: func(t *testing.T, e env) []tags.Message {
				e.send(tags.OutMessage{Body: []byte("m")})
				return e.recv(1, 7)
			},
			make: func(t *testing.T, e env, got []tags.Message) (string, time.Time) {
				return "m", got[0].FirstReceiveTime.Add(7 * time.Second)
			}},
		{name: "delay expiry",
			setup: func(t *testing.T, e env) []tags.Message {
				e.send(tags.OutMessage{Body: []byte("m"), DelaySeconds: i32(9)})
				return nil
			},
			make: func(t *testing.T, e env, _ []tags.Message) (string, time.Time) {
				return "m", time.Now().Add(9 * time.Second) // sent just now (no time passed since)
			}},
		{name: "nack",
			setup: func(t *testing.T, e env) []tags.Message {
				e.send(tags.OutMessage{Body: []byte("m")})
				return e.recv(1, 600)
			},
			make: func(t *testing.T, e env, got []tags.Message) (string, time.Time) {
				time.Sleep(3 * time.Second)
				errs, err := e.a.ChangeVisibility(e.b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: got[0].ReceiptHandle}})
				require.NoError(t, err)
				require.NoError(t, errs[0])
				return "m", time.Now()
			}},
		{name: "move back",
			setup: func(t *testing.T, e env) []tags.Message {
				e.send(tags.OutMessage{Body: []byte("m")})
				got := e.recv(1, 600)
				errs, err := e.a.DeadLetter(e.b.ctx, "q", []tags.DeadRequest{{ReceiptHandle: got[0].ReceiptHandle}})
				require.NoError(t, err)
				require.NoError(t, errs[0])
				_, err = e.a.RelayOutbox(e.b.ctx, "q")
				require.NoError(t, err)
				return nil
			},
			make: func(t *testing.T, e env, _ []tags.Message) (string, time.Time) {
				time.Sleep(2 * time.Second)
				_, err := e.a.StartMove(e.b.ctx, "dlq", "q", "", 10)
				require.NoError(t, err)
				_, err = e.a.RunMove(e.b.ctx, "dlq", time.Second)
				require.NoError(t, err)
				return "m", time.Now()
			}},
		{name: "a read quota's second rolls over",
			queue: func(c *tags.QueueConfig) { c.ReadQuotaPerSecond = i32(1) },
			setup: func(t *testing.T, e env) []tags.Message {
				e.send(tags.OutMessage{Body: []byte("m1")}, tags.OutMessage{Body: []byte("m2")})
				return e.recv(2, 600) // m1: the quota allows one this second
			},
			make: func(t *testing.T, e env, got []tags.Message) (string, time.Time) {
				require.Len(t, got, 1)
				return "m2", got[0].FirstReceiveTime.Truncate(time.Second).Add(time.Second)
			}},
		{name: "retention unblocks a topic", topic: true,
			queue: func(c *tags.QueueConfig) { c.MessageRetentionSeconds = i32(60) },
			setup: func(t *testing.T, e env) []tags.Message {
				e.send(tags.OutMessage{Body: []byte("blocker"), Topic: "x"})
				got := e.recv(1, 3600) // in flight: its topic is blocked
				time.Sleep(30 * time.Second)
				e.send(tags.OutMessage{Body: []byte("held"), Topic: "x"})
				return got
			},
			make: func(t *testing.T, e env, got []tags.Message) (string, time.Time) {
				expires := got[0].SendTime.Add(60 * time.Second)
				time.Sleep(time.Until(expires))
				_, err := e.a.JanitorPass(e.b.ctx, "q", time.Minute) // the blocker expires
				require.NoError(t, err)
				return "held", expires
			}},
		{name: "dead-lettering unblocks a topic", topic: true,
			queue: func(c *tags.QueueConfig) {
				c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}
			},
			setup: func(t *testing.T, e env) []tags.Message {
				e.send(tags.OutMessage{Body: []byte("blocker"), Topic: "x"}, tags.OutMessage{Body: []byte("held"), Topic: "x"})
				return e.recv(1, 5)
			},
			make: func(t *testing.T, e env, got []tags.Message) (string, time.Time) {
				time.Sleep(time.Until(got[0].FirstReceiveTime.Add(5 * time.Second)))
				_, _, err := e.a.SweepDeadLeased(e.b.ctx, "q", time.Minute) // its last receive is over
				require.NoError(t, err)
				return "held", time.Now()
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := syncBundle(t)
				a, other := liveStore(t, b), liveStore(t, b)
				_, err := a.CreateQueue(b.ctx, tags.QueueConfig{Name: "dlq", DeadLetterQueue: true, TopicQueue: tc.topic})
				require.NoError(t, err)
				cfg := tags.QueueConfig{Name: "q", TopicQueue: tc.topic,
					RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 100}}
				if tc.queue != nil {
					tc.queue(&cfg)
				}
				_, err = a.CreateQueue(b.ctx, cfg)
				require.NoError(t, err)
				e := env{b: b, a: a,
					send: func(ms ...tags.OutMessage) {
						res, err := a.Send(b.ctx, "q", ms)
						require.NoError(t, err)
						for _, r := range res {
							require.NoError(t, r.Err)
						}
					},
					recv: func(n int, vis int32) []tags.Message {
						got, err := a.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: n, WaitSeconds: i32(0),
							VisibilitySeconds: i32(vis)})
						require.NoError(t, err)
						return got
					}}
				got := tc.setup(t, e)
				ch := startWaiter(t, other, "q", true)
				synctest.Wait() // it read the tag, and waits
				select {
				case early := <-ch:
					t.Fatalf("the reader got %v before anything was made available", bodies(early))
				default:
				}
				body, avail := tc.make(t, e, got)
				select {
				case got := <-ch:
					require.Equal(t, []string{body}, bodies(got))
					// Within S6's tens of milliseconds (all of it here is the
					// bubble's time: nothing waits for real time).
					require.Less(t, time.Since(avail), 100*time.Millisecond, "received %v after it became available",
						time.Since(avail))
				case <-time.After(time.Until(avail) + 2*time.Second):
					t.Fatalf("not received 2 s after it became available; tag %+v", b.state("q", "default"))
				}
			})
		})
	}
}
