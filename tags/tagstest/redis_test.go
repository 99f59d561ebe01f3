package tagstest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/tagstest"
)

// The suite on tags.Store: on an in-process miniredis, and with
// TAGQ_TEST_REDIS_URL / TAGQ_TEST_REDIS_CLUSTER set on that redis-server
// or Redis Cluster too, each test on a key prefix of its own, removed
// afterwards (as the engine's own suite in package tags).
func TestConformance(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		tagstest.Run(t, harness(func(t *testing.T) redis.UniversalClient {
			m := miniredis.RunT(t)
			return redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
		}))
	})
	if url := os.Getenv("TAGQ_TEST_REDIS_URL"); url != "" {
		t.Run("redis", func(t *testing.T) {
			t.Parallel()
			tagstest.Run(t, harness(func(t *testing.T) redis.UniversalClient {
				opt, err := redis.ParseURL(url)
				require.NoError(t, err)
				opt.ContextTimeoutEnabled = true
				return redis.NewClient(opt)
			}))
		})
	}
	if seeds := os.Getenv("TAGQ_TEST_REDIS_CLUSTER"); seeds != "" {
		t.Run("cluster", func(t *testing.T) {
			t.Parallel()
			tagstest.Run(t, harness(func(*testing.T) redis.UniversalClient {
				return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(seeds, ","), ContextTimeoutEnabled: true})
			}))
		})
	}
}

// harness makes a Store per test on a client open gives, with the test
// clock (Config.TestClock) and a fresh key prefix.
func harness(open func(t *testing.T) redis.UniversalClient) tagstest.Harness {
	return tagstest.Harness{New: func(t *testing.T) (tags.Storage, tagstest.Clock) {
		rdb := open(t)
		var rnd [6]byte
		_, _ = rand.Read(rnd[:])
		prefix := "tagqconf-" + hex.EncodeToString(rnd[:])
		ctx := context.Background()
		s, err := tags.New(ctx, tags.Config{Client: rdb, Prefix: prefix, TestClock: true,
			Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = s.Close()
			removePrefix(t, rdb, prefix)
			_ = rdb.Close()
		})
		return s, &testClock{rdb: rdb, prefix: prefix}
	}}
}

// testClock moves a queue's test clock: the test_clock_ms field of its
// meta hash (tags/keys.go, scripts/lib.lua), from Redis's own time at
// the first move.
type testClock struct {
	rdb    redis.UniversalClient
	prefix string
}

func (c *testClock) Advance(t *testing.T, queue string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	meta := c.prefix + ":{" + queue + "}:m"
	ms, err := c.rdb.HGet(ctx, meta, "test_clock_ms").Int64()
	if errors.Is(err, redis.Nil) {
		now, terr := c.rdb.Time(ctx).Result()
		require.NoError(t, terr)
		ms, err = now.UnixMilli(), nil
	}
	require.NoError(t, err)
	require.NoError(t, c.rdb.HSet(ctx, meta, "test_clock_ms", ms+d.Milliseconds()).Err())
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
