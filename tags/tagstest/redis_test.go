package tagstest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/redisstore"
	"github.com/tagq/tagq/tags/streamid"
	"github.com/tagq/tagq/tags/tagstest"
)

// The suite on redisstore.Store: on an in-process miniredis, and with
// TAGQ_TEST_REDIS_URL / TAGQ_TEST_REDIS_CLUSTER set on that redis-server
// or Redis Cluster too, each test on a key prefix of its own, removed
// afterwards (as the engine's own suite in package tags/redisstore); on
// miniredis, the redis-server and the Cluster also with every queue it
// may have partitioned (…-partitioned), the model tests included.
func TestConformance(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		tagstest.Run(t, harness(func(t *testing.T) redis.UniversalClient {
			m := miniredis.RunT(t)
			return redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
		}, true))
	})
	// Every queue the suite makes in 3 partitions (where it may have them:
	// not a dead-letter queue, not a priority queue).
	t.Run("miniredis-partitioned", func(t *testing.T) {
		t.Parallel()
		tagstest.Run(t, partitionedHarness(harness(func(t *testing.T) redis.UniversalClient {
			m := miniredis.RunT(t)
			return redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
		}, true), 3))
	})
	// A redis-server, and a master with a replica (.ci/redis-replicated),
	// where every write waits for the replica.
	for name, env := range map[string]string{"redis": "TAGQ_TEST_REDIS_URL", "replicated": "TAGQ_TEST_REDIS_REPLICATED_URL"} {
		url := os.Getenv(env)
		if url == "" {
			continue
		}
		h := harness(func(t *testing.T) redis.UniversalClient {
			opt, err := redis.ParseURL(url)
			require.NoError(t, err)
			opt.ContextTimeoutEnabled = true
			return redis.NewClient(opt)
		}, false)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tagstest.Run(t, h)
		})
		if name == "redis" {
			t.Run("redis-partitioned", func(t *testing.T) {
				t.Parallel()
				tagstest.Run(t, partitionedHarness(h, 3))
			})
		}
	}
	if seeds := os.Getenv("TAGQ_TEST_REDIS_CLUSTER"); seeds != "" {
		cluster := harness(func(*testing.T) redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(seeds, ","), ContextTimeoutEnabled: true})
		}, false)
		t.Run("cluster", func(t *testing.T) {
			t.Parallel()
			tagstest.Run(t, cluster)
		})
		t.Run("cluster-partitioned", func(t *testing.T) {
			t.Parallel()
			tagstest.Run(t, partitionedHarness(cluster, 5))
		})
	}
}

// harness makes a Store per test on a client open gives (embedded: it is
// miniredis, run as tagqd runs its embedded store: Config.Embedded), with
// the test clock (Config.TestClock) and a fresh key prefix; its hooks run the
// background worker's steps, check a tag's PEL and give a second Store on
// the same data that keeps deliveries in the in-flight zset.
func harness(open func(t *testing.T) redis.UniversalClient, embedded bool) tagstest.Harness {
	return tagstest.Harness{
		New: func(t *testing.T) (tags.Storage, tagstest.Clock) {
			rdb := open(t)
			var rnd [6]byte
			_, _ = rand.Read(rnd[:])
			prefix := "tagqconf-" + hex.EncodeToString(rnd[:])
			// Writes wait for a replica wherever the backend has one, as
			// tagqd's default (--ack-replicas auto).
			acks, err := durable.Install(context.Background(), rdb, durable.Config{Replicas: durable.Auto,
				Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			s := newStore(t, rdb, prefix, false, embedded, acks)
			t.Cleanup(func() {
				_ = s.Close()
				acks.Close()
				removePrefix(t, rdb, prefix)
				_ = rdb.Close()
			})
			return s, &testClock{rdb: rdb, prefix: prefix, acks: acks}
		},
		Hooks: func(t *testing.T, s tags.Storage, c tagstest.Clock) tagstest.Hooks {
			clock := c.(*testClock)
			twin := newStore(t, clock.rdb, clock.prefix, true, embedded, clock.acks)
			t.Cleanup(func() { _ = twin.Close() })
			return tagstest.Hooks{
				Maintainer: maintainer{unwrap(s)},
				Inspector:  inspector{rdb: clock.rdb, prefix: clock.prefix},
				Twin:       twin,
			}
		},
	}
}

func newStore(t *testing.T, rdb redis.UniversalClient, prefix string, inFlightZset, embedded bool, acks *durable.Acks) *redisstore.Store {
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: rdb, Prefix: prefix, TestClock: true,
		InFlightZset: inFlightZset, Embedded: embedded, Logger: slog.New(slog.DiscardHandler), Acks: acks})
	require.NoError(t, err)
	return s
}

// testClock moves a queue's test clock: the test_clock_ms field of its
// meta hash (tags/redisstore/keys.go, scripts/lib.lua), from Redis's own time at
// the first move.
type testClock struct {
	rdb    redis.UniversalClient
	prefix string
	acks   *durable.Acks // the stores' (on rdb)
}

func (c *testClock) Advance(t *testing.T, queue string, d time.Duration) {
	t.Helper()
	ms := c.Now(t, queue).UnixMilli()
	// A partitioned queue's partitions are queues of their own, each with
	// its clock: they move together.
	np, _ := c.rdb.HGet(context.Background(), c.meta(queue), "np").Int()
	for k := range max(np, 1) {
		sub := queue
		if k > 0 {
			sub = fmt.Sprintf("%s#%d", queue, k)
		}
		require.NoError(t, c.rdb.HSet(context.Background(), c.meta(sub), "test_clock_ms", ms+d.Milliseconds()).Err())
	}
}

// Now is queue's test clock, or Redis's own time while it has none.
func (c *testClock) Now(t *testing.T, queue string) time.Time {
	t.Helper()
	ctx := context.Background()
	ms, err := c.rdb.HGet(ctx, c.meta(queue), "test_clock_ms").Int64()
	if errors.Is(err, redis.Nil) {
		now, terr := c.rdb.Time(ctx).Result()
		require.NoError(t, terr)
		return now
	}
	require.NoError(t, err)
	return time.UnixMilli(ms)
}

func (c *testClock) meta(queue string) string { return c.prefix + ":{" + queue + "}:m" }

// maintainer runs what redrive's worker runs on a queue: the janitor pass
// (under the janitor lease, as the worker takes it), the dead sweep and a
// move task's run.
type maintainer struct{ s *redisstore.Store }

func (m maintainer) Janitor(ctx context.Context, queue string) error {
	return m.eachPartition(ctx, queue, func(q string) error {
		_, held, err := m.s.TrimQueueLeased(ctx, q, time.Minute)
		if err == nil && held > 0 {
			err = fmt.Errorf("janitor of %s: another owner holds the lease (%v left)", q, held)
		}
		return err
	})
}

func (m maintainer) Sweep(ctx context.Context, queue string) error {
	return m.eachPartition(ctx, queue, func(q string) error {
		_, err := m.s.SweepDead(ctx, q)
		return err
	})
}

// eachPartition runs fn on queue and its partitions, as the background
// worker visits them (the names it walks: QueueNames).
func (m maintainer) eachPartition(ctx context.Context, queue string, fn func(q string) error) error {
	names, err := m.s.QueueNames(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if q, _, _ := strings.Cut(n, "#"); q == queue {
			if err := fn(n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m maintainer) RunMove(ctx context.Context, dlq string, period time.Duration) error {
	_, err := m.s.RunMove(ctx, dlq, period)
	return err
}

// inspector checks how a tag keeps its stream deliveries (see lib.lua and
// the key layout in tags/redisstore/keys.go): its PEL holds exactly pc entries (the
// model's receives always finish, so no read waits for its script), each
// in one batch record, none also in v.
type inspector struct {
	rdb    redis.UniversalClient
	prefix string
}

func (in inspector) CheckTag(ctx context.Context, queue, tag string) (int, error) {
	np, _ := in.rdb.HGet(ctx, in.prefix+":{"+queue+"}:m", "np").Int()
	total := 0
	for k := range max(np, 1) {
		sub := queue
		if k > 0 {
			sub = fmt.Sprintf("%s#%d", queue, k)
		}
		n, err := in.checkTag(ctx, sub, tag)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", sub, err)
		}
		total += n
	}
	return total, nil
}

func (in inspector) checkTag(ctx context.Context, queue, tag string) (int, error) {
	base := in.prefix + ":{" + queue + "}:"
	stream, tk := base+"s", base+"t:"+tag+":"
	pend, err := in.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: tag, Start: "-", End: "+", Count: 10000}).Result()
	if err != nil {
		return 0, fmt.Errorf("XPENDING: %w", err)
	}
	pc, _ := in.rdb.HGet(ctx, tk+"n", "pc").Int()
	if len(pend) != pc {
		return 0, fmt.Errorf("%d entries in its PEL, pc %d", len(pend), pc)
	}
	if len(pend) == 0 {
		return 0, nil
	}
	recs, err := in.rdb.ZRange(ctx, tk+"b", 0, -1).Result()
	if err != nil {
		return 0, fmt.Errorf("batches: %w", err)
	}
	members, err := in.rdb.ZRange(ctx, tk+"v", 0, -1).Result()
	if err != nil {
		return 0, fmt.Errorf("v: %w", err)
	}
	inV := map[string]bool{}
	for _, mem := range members {
		inV[mem[:strings.LastIndex(mem, ":")]] = true
	}
	for _, p := range pend {
		n := 0
		for _, r := range recs {
			f := strings.Fields(r)
			if len(f) == 3 && !streamid.After(f[0], p.ID) && !streamid.After(p.ID, f[1]) {
				n++
			}
		}
		if n != 1 {
			return 0, fmt.Errorf("PEL entry %s is in %d batch records %v", p.ID, n, recs)
		}
		if inV[p.ID] {
			return 0, fmt.Errorf("%s is both in the PEL and in v", p.ID)
		}
	}
	return len(pend), nil
}

// removePrefix deletes the keys under prefix, on every master of a cluster.
func removePrefix(t *testing.T, rdb redis.UniversalClient, prefix string) {
	ctx := context.Background()
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		return iter.Err()
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		err = c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return del(ctx, n)
		})
	case *redis.Client:
		err = del(ctx, c)
	}
	if err != nil {
		t.Errorf("removing %s:*: %v", prefix, err)
	}
}

// partitionedStorage makes every queue it can in n partitions (a
// dead-letter queue and a priority queue have one), so that the whole
// suite runs on partitioned queues.
type partitionedStorage struct {
	tags.Storage
	n int32
}

func (p partitionedStorage) CreateQueue(ctx context.Context, cfg tags.QueueConfig) (*tags.Queue, error) {
	if cfg.Partitions == nil && !cfg.DeadLetterQueue && !cfg.PriorityQueue {
		cfg.Partitions = &p.n
	}
	return p.Storage.CreateQueue(ctx, cfg)
}

func partitionedHarness(h tagstest.Harness, n int32) tagstest.Harness {
	return tagstest.Harness{
		New: func(t *testing.T) (tags.Storage, tagstest.Clock) {
			s, c := h.New(t)
			return partitionedStorage{Storage: s, n: n}, c
		},
		// The unpartitioned harness's hooks (the maintainer, inspector and
		// twin visit every partition), and where redisstore puts messages.
		Hooks: func(t *testing.T, s tags.Storage, c tagstest.Clock) tagstest.Hooks {
			hk := h.Hooks(t, s, c)
			hk.Partitioner = partitioner{}
			return hk
		},
	}
}

// partitioner is redisstore's layout of a partitioned queue
// (tags/redisstore/partition.go): partition k ≥ 1's message ids are its
// stream ids with "@k"; each partition enforces ceil(cap / P) of a cap, a
// byte cap's share at least max_message_bytes.
type partitioner struct{}

func (partitioner) Locate(_, id string) (int, string) {
	sid, k, ok := strings.Cut(id, "@")
	if !ok {
		return 0, id
	}
	n, err := strconv.Atoi(k)
	if err != nil || n < 1 {
		return -1, id
	}
	return n, sid
}

func (partitioner) CapShares(q *tags.Queue) (messages, bytes int64) {
	p := int64(max(q.Partitions, 1))
	share := func(v int64) int64 {
		if v <= 0 {
			return v
		}
		return (v + p - 1) / p
	}
	messages, bytes = share(q.MaxRetainedMessages), share(q.MaxRetainedBytes)
	if bytes > 0 && p > 1 {
		bytes = max(bytes, int64(q.MaxMessageBytes))
	}
	return messages, bytes
}

// unwrap is the Store beneath a (partitioned) storage.
func unwrap(s tags.Storage) *redisstore.Store {
	if p, ok := s.(partitionedStorage); ok {
		return unwrap(p.Storage)
	}
	return s.(*redisstore.Store)
}
