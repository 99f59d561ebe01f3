package redrive

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/redisstore"
)

func i32(v int32) *int32 { return &v }

// TestWorker_S7_MovesWithoutAnyonePolling: the worker alone takes a
// message past its last deadline to the DLQ, and a worker on a second
// process moves nothing twice.
func TestWorker_S7_MovesWithoutAnyonePolling(t *testing.T) {
	for name, rdb := range clients(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			prefix := "tagqtest-redrive-" + name + time.Now().Format("150405.000000")
			s, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Prefix: prefix, TestClock: true})
			require.NoError(t, err)
			t.Cleanup(func() { cleanup(rdb, prefix) })
			_, err = s.CreateQueue(ctx, tags.QueueConfig{Name: "dlq", DeadLetterQueue: true})
			require.NoError(t, err)
			_, err = s.CreateQueue(ctx, tags.QueueConfig{Name: "q", VisibilityTimeoutSeconds: i32(1),
				RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}})
			require.NoError(t, err)
			_, err = s.Send(ctx, "q", []tags.OutMessage{{Body: []byte("m")}})
			require.NoError(t, err)
			got, err := s.Receive(ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
			require.NoError(t, err)
			require.Len(t, got, 1)
			// Move the queue's clock past the deadline (tags' test clock).
			ms := time.Now().Add(time.Hour).UnixMilli()
			require.NoError(t, rdb.HSet(ctx, prefix+":{q}:m", "test_clock_ms", ms).Err())

			w1 := New(Config{Store: s})
			other, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Prefix: prefix, TestClock: true})
			require.NoError(t, err)
			w2 := New(Config{Store: other})
			require.NoError(t, w1.RunOnce(ctx))
			require.NoError(t, w2.RunOnce(ctx))
			dlq, err := s.GetTag(ctx, "dlq", "default")
			require.NoError(t, err)
			require.EqualValues(t, 1, dlq.State.Available)
			src, err := s.GetTag(ctx, "q", "default")
			require.NoError(t, err)
			require.EqualValues(t, 1, src.State.DeadTotal)
			w1.Stop()
			w1.Stop()
			New(Config{Store: s}).Stop() // never started
		})
	}
}

func clients(t *testing.T) map[string]redis.UniversalClient {
	m := miniredis.RunT(t)
	out := map[string]redis.UniversalClient{"miniredis": redis.NewClient(&redis.Options{Addr: m.Addr()})}
	if url := os.Getenv("TAGQ_TEST_REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		require.NoError(t, err)
		out["redis"] = redis.NewClient(opt)
	}
	for _, c := range out {
		t.Cleanup(func() { _ = c.Close() })
	}
	return out
}

func cleanup(rdb redis.UniversalClient, prefix string) {
	ctx := context.Background()
	keys, _ := rdb.Keys(ctx, prefix+":*").Result()
	if len(keys) > 0 {
		rdb.Del(ctx, keys...)
	}
}

// DESIGN §8: with two replicas' background workers, one sweeps a queue
// (the holder of its sweeper lease); the other looks again only when that
// lease would lapse, and then takes the work over.
func TestWorker_OneReplicaSweepsAQueue(t *testing.T) {
	for name, rdb := range clients(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			prefix := "tagqtest-redrive-lease-" + name + time.Now().Format("150405.000000")
			t.Cleanup(func() { cleanup(rdb, prefix) })
			a, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Prefix: prefix, TestClock: true})
			require.NoError(t, err)
			b, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Prefix: prefix, TestClock: true})
			require.NoError(t, err)
			_, err = a.CreateQueue(ctx, tags.QueueConfig{Name: "dlq", DeadLetterQueue: true})
			require.NoError(t, err)
			_, err = a.CreateQueue(ctx, tags.QueueConfig{Name: "q", VisibilityTimeoutSeconds: i32(1),
				RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}})
			require.NoError(t, err)
			clock := time.Now().UnixMilli()
			setClock := func(ms int64) { require.NoError(t, rdb.HSet(ctx, prefix+":{q}:m", "test_clock_ms", ms).Err()) }
			setClock(clock)

			wa, wb := New(Config{Store: a}), New(Config{Store: b})
			pa := &pass{idle: newIdle(time.Second, sweepIdleMax)}
			pb := &pass{idle: newIdle(time.Second, sweepIdleMax)}
			now := time.Now()
			require.NoError(t, wa.run(ctx, pa, now)) // a takes q's lease: 1 s idle gap + LeaseGrace
			_, err = a.Send(ctx, "q", []tags.OutMessage{{Body: []byte("m")}})
			require.NoError(t, err)
			got, err := a.Receive(ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
			require.NoError(t, err)
			require.Len(t, got, 1)
			setClock(clock + 2000) // past the 1 s visibility, within a's lease

			require.NoError(t, wb.run(ctx, pb, now))
			dead := func() int64 {
				tg, err := a.GetTag(ctx, "q", "default")
				require.NoError(t, err)
				return tg.State.DeadTotal
			}
			require.Zero(t, dead(), "b swept a queue a holds")
			require.False(t, pb.idle.Due("q", now.Add(time.Second)), "b looks again before a's lease lapses")
			require.True(t, pb.idle.Due("q", now.Add(tags.LeaseGrace)))

			// a stops. Past its lease, b's next due pass sweeps.
			setClock(clock + 5000)
			require.NoError(t, wb.run(ctx, pb, now.Add(tags.LeaseGrace)))
			require.EqualValues(t, 1, dead())
		})
	}
}

func TestIdle_UntilAndIdleGap(t *testing.T) {
	i := newIdle(time.Second, 8*time.Second)
	now := time.Unix(1000, 0)
	require.Equal(t, time.Second, i.IdleGap("q"))
	i.Done("q", now, false)
	require.Equal(t, 2*time.Second, i.IdleGap("q"))
	i.Until("q", now.Add(time.Minute))
	require.False(t, i.Due("q", now.Add(59*time.Second)))
	require.True(t, i.Due("q", now.Add(time.Minute)))
	require.Equal(t, 2*time.Second, i.IdleGap("q"), "Until keeps the backoff")
	i.Done("q", now, false)
	i.Done("q", now, false)
	i.Done("q", now, false)
	require.Equal(t, 8*time.Second, i.IdleGap("q"))
}

// DESIGN §8: the janitor of a replica without a queue's janitor lease
// looks at the queue again only when the lease would lapse, not every
// interval; the holder's own passes renew it and follow its backoff.
func TestWorker_JanitorWaitsForTheHoldersLease(t *testing.T) {
	for name, rdb := range clients(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			prefix := "tagqtest-redrive-janitor-" + name + time.Now().Format("150405.000000")
			t.Cleanup(func() { cleanup(rdb, prefix) })
			a, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Prefix: prefix, TestClock: true})
			require.NoError(t, err)
			other, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Prefix: prefix, TestClock: true})
			require.NoError(t, err)
			_, err = a.CreateQueue(ctx, tags.QueueConfig{Name: "q"})
			require.NoError(t, err)
			require.NoError(t, rdb.HSet(ctx, prefix+":{q}:m", "test_clock_ms", time.Now().UnixMilli()).Err())
			_, held, err := a.TrimQueueLeased(ctx, "q", 10*time.Minute)
			require.NoError(t, err)
			require.Zero(t, held)
			lease := func() string { return rdb.HGet(ctx, prefix+":{q}:m", "lj").Val() }
			mine := lease()
			require.NotEmpty(t, mine)

			backoff := newIdle(time.Second, janitorIdleMax)
			before := time.Now()
			require.NoError(t, New(Config{Store: other}).janitor(ctx, backoff))
			require.False(t, backoff.Due("q", before.Add(9*time.Minute)), "visited again while the lease holds")
			require.True(t, backoff.Due("q", time.Now().Add(10*time.Minute)), "not visited once the lease would lapse")
			require.Equal(t, mine, lease(), "the other replica took nothing")

			own := newIdle(time.Second, janitorIdleMax)
			require.NoError(t, New(Config{Store: a}).janitor(ctx, own))
			require.True(t, own.Due("q", time.Now().Add(time.Second)))
			require.NotEqual(t, mine, lease(), "renewed for the next idle gap and LeaseGrace")
			require.Equal(t, strings.Fields(mine)[0], strings.Fields(lease())[0], "by its holder")
		})
	}
}
