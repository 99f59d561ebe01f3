package redrive

import (
	"context"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/redisstore"
)

// S21 with the background worker as tagqd runs it: a read cut short
// (XREADGROUP done, receive script never run, as when a tagqd dies
// between the two) reaches a receive already waiting — a Consume stream's
// reader or a long poll, on the janitor's replica or another — within the
// stalled read and 2 s, however idle the queue was: the janitor looks at
// it before the read is stalled and comes back when it is.
//
// miniredis runs inside a synctest bubble (over net.Pipe): Redis's clock,
// PEL idle times, the workers' tickers and the stores' timers all follow
// the bubble's clock.

const stalled = 4 * time.Second

type replica struct {
	s *redisstore.Store
	w *Worker
}

// bubbleReplicas starts n replicas (store and background worker) on one
// miniredis in the bubble.
func bubbleReplicas(t *testing.T, n int) (redis.UniversalClient, []replica) {
	m := miniredis.NewMiniRedis()
	t.Cleanup(m.Close)
	dial := func() redis.UniversalClient {
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true,
			Dialer: func(context.Context, string, string) (net.Conn, error) { return m.Dial() }})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	var rs []replica
	for range n {
		s, err := redisstore.New(context.Background(), redisstore.Config{Client: dial(), Prefix: "live", StalledRead: stalled})
		require.NoError(t, err)
		w := New(Config{Store: s})
		w.Start()
		t.Cleanup(func() { w.Stop(); _ = s.Close() })
		rs = append(rs, replica{s: s, w: w})
	}
	return dial(), rs
}

func TestS21_AStalledReadReachesWaitingReceivesWithinTheStalledReadAnd2s(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas int
	}{{"one replica", 1}, {"two replicas", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rdb, rs := bubbleReplicas(t, tc.replicas)
				ctx := context.Background()
				first, last := rs[0].s, rs[len(rs)-1].s
				_, err := first.CreateQueue(ctx, tags.QueueConfig{Name: "q"})
				require.NoError(t, err)
				msgs := make([]tags.OutMessage, 10)
				for i := range msgs {
					msgs[i].Body = []byte{byte('a' + i)}
				}
				_, err = first.Send(ctx, "q", msgs)
				require.NoError(t, err)
				// An idle queue: the janitor has backed off as far as it goes.
				time.Sleep(time.Minute)

				_, err = rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "default", Consumer: "c", Count: 10,
					Streams: []string{"live:{q}:s", ">"}, Block: -1}).Result()
				require.NoError(t, err)
				read := time.Now()

				got := make(chan int, 2)
				rctx, cancel := context.WithCancel(ctx)
				defer cancel()
				r, err := last.NewReader(rctx, "q", "", nil)
				require.NoError(t, err)
				defer r.Close()
				go func() {
					m, _ := r.Receive(rctx, 100)
					got <- len(m)
				}()
				go func() {
					m, _ := first.Receive(rctx, "q", "", tags.ReceiveOptions{MaxMessages: 100, WaitSeconds: i32(20)})
					got <- len(m)
				}()
				select {
				case n := <-got:
					require.Equal(t, 10, n)
					require.LessOrEqual(t, time.Since(read), stalled+2*time.Second)
					t.Logf("delivered %v after the read (stalled read %v)", time.Since(read), stalled)
				case <-time.After(stalled + 2*time.Second):
					t.Fatalf("nothing delivered within the stalled read and 2 s")
				}
				cancel()
				<-got
			})
		})
	}
}
