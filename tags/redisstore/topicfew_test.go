package redisstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// receiveCalls counts a client's receive script calls (either build, by
// EVALSHA or by EVAL), in all and per receive (a context made by ctx).
type receiveCalls struct {
	n      atomic.Int64
	hashes map[string]bool
}

// oneReceive is what receiveCalls counted of one receive: its script
// calls, and those after the first that handed out a message.
type oneReceive struct {
	calls, after atomic.Int64
	found        atomic.Bool
}

type receiveCallsKey struct{}

func newReceiveCalls() *receiveCalls {
	return &receiveCalls{hashes: map[string]bool{scriptReceive.prod.Hash(): true, scriptReceive.test.Hash(): true,
		scriptReceive.embProd.Hash(): true, scriptReceive.embTest.Hash(): true}}
}

// ctx is parent, its receive script calls counted in r.
func (h *receiveCalls) ctx(parent context.Context, r *oneReceive) context.Context {
	return context.WithValue(parent, receiveCallsKey{}, r)
}

func (h *receiveCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *receiveCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r := h.count(ctx, cmd)
		err := next(ctx, cmd)
		if r != nil && err == nil {
			// The reply's fifth element: the messages handed out from v, p
			// and read in the script (a topic queue's are all there).
			if c, ok := cmd.(*redis.Cmd); ok {
				if res, err := c.Slice(); err == nil && len(res) > 4 {
					if l, _ := res[4].([]any); len(l) > 0 {
						r.found.Store(true)
					}
				}
			}
		}
		return err
	}
}

func (h *receiveCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			_ = h.count(ctx, c)
		}
		return next(ctx, cmds)
	}
}

// count counts cmd if it is a receive script call, and returns its
// receive's counts (nil: none, or not a receive script call).
func (h *receiveCalls) count(ctx context.Context, cmd redis.Cmder) *oneReceive {
	args := cmd.Args()
	if len(args) < 2 {
		return nil
	}
	s, _ := args[1].(string)
	switch strings.ToLower(cmd.Name()) {
	case "evalsha":
	case "eval":
		sum := sha1.Sum([]byte(s))
		s = hex.EncodeToString(sum[:])
	default:
		return nil
	}
	if !h.hashes[s] {
		return nil
	}
	h.n.Add(1)
	r, _ := ctx.Value(receiveCallsKey{}).(*oneReceive)
	if r != nil {
		r.calls.Add(1)
		if r.found.Load() {
			r.after.Add(1)
		}
	}
	return r
}

// A topic queue with few topics delivers one message per receive and
// delete at a time for each topic (S13), so what a receive that has a
// message to hand out does before it returns is on every message's path.
// A receive used to read on while what it read was held behind blocked
// topics, for up to 20 script calls, keeping the message it had (and its
// topic blocked) meanwhile; and a topic queue's due redeliveries took a
// call of their own before every read.
//
// On a 1-topic queue whose producers keep the stream ahead (300 messages
// sent first, and a batch of 10 more for each delivered message up to
// 600): one receive takes one script call; then four receivers long-poll
// and delete until all are delivered, each once, in send order. No
// receive makes a script call after the one that found its message, and
// the receive script calls stay under 4.5 a message (about 3: the call
// that hands a message out, and those of receivers that a delete or a
// send woke and that found the topic blocked again; before: about 5.5).
func TestS13_FewTopicsTakeAReceiveCallPerMessage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		calls := newReceiveCalls()
		b.rdb.AddHook(calls)
		b.queue("q", topicQueue)
		const prefill, total, batch, receivers = 300, 600, 10, 4
		var (
			sendMu sync.Mutex
			sent   int
		)
		// sendBatch sends the next batch of topic t (bodies: their order),
		// while fewer than total are sent.
		sendBatch := func() error {
			sendMu.Lock()
			defer sendMu.Unlock()
			if sent >= total {
				return nil
			}
			msgs := make([]tags.OutMessage, batch)
			for i := range msgs {
				msgs[i] = tags.OutMessage{Topic: "t", Body: []byte(fmt.Sprint(sent + i))}
			}
			if _, err := b.s.Send(b.ctx, "q", msgs); err != nil {
				return err
			}
			sent += len(msgs)
			return nil
		}
		for range prefill / batch {
			require.NoError(t, sendBatch())
		}

		var first oneReceive
		ms, err := b.s.Receive(calls.ctx(b.ctx, &first), "q", "", tags.ReceiveOptions{MaxMessages: 10, WaitSeconds: i32(0)})
		require.NoError(t, err)
		require.Len(t, ms, 1)
		require.Equal(t, "0", string(ms[0].Body))
		require.Equal(t, int64(1), first.calls.Load(), "script calls of a receive with a message to hand out")
		got := []string{"0"}
		b.del("q", ms[0])

		ctx, cancel := context.WithTimeout(b.ctx, time.Minute) // bounds the test, never reached
		defer cancel()
		var (
			mu        sync.Mutex
			inFlight  bool
			receives  int   // receives that handed out a message
			handedOut int64 // receive script calls of those receives
			after     int64 // of them, calls after the one that found the message
		)
		errc := make(chan error, receivers)
		var wg sync.WaitGroup
		for range receivers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					var n oneReceive
					ms, err := b.s.Receive(calls.ctx(ctx, &n), "q", "", tags.ReceiveOptions{MaxMessages: 10, WaitSeconds: i32(5)})
					if ctx.Err() != nil {
						return
					}
					if err != nil {
						errc <- err
						return
					}
					if len(ms) == 0 {
						continue
					}
					mu.Lock()
					if len(ms) > 1 || inFlight {
						mu.Unlock()
						errc <- fmt.Errorf("two of one topic in flight at once")
						return
					}
					inFlight = true
					got = append(got, string(ms[0].Body))
					receives++
					handedOut += n.calls.Load()
					after += n.after.Load()
					mu.Unlock()
					if err := sendBatch(); err != nil {
						errc <- err
						return
					}
					mu.Lock()
					inFlight = false // before the delete: a receive may get the next at once
					done := len(got) == total
					mu.Unlock()
					errs, err := b.s.Delete(b.ctx, "q", []string{ms[0].ReceiptHandle})
					if err == nil {
						err = errs[0]
					}
					if err != nil {
						errc <- err
						return
					}
					if done {
						cancel() // the others' long polls end
					}
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			require.NoError(t, err)
		}
		require.Len(t, got, total, "the test's minute ran out")
		for i, body := range got {
			require.Equal(t, fmt.Sprint(i), body, "in send order, each once")
		}
		require.Equal(t, tags.TagState{ReceivedTotal: total, DeletedTotal: total}, b.state("q", "default"))
		all := calls.n.Load()
		t.Logf("%d messages: %d receive script calls (%.2f a message); %.2f a receive that handed one out, %d after the call that found it",
			total, all, float64(all)/total, float64(handedOut)/float64(receives), after)
		require.Zero(t, after, "script calls of receives after the one that found their message")
		require.LessOrEqual(t, float64(all)/total, 4.5, "receive script calls a message")
	})
}
