package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/tags"
)

// The storage conformance suite: every test built on eachBackend runs
// against an in-process miniredis and, when TAGQ_TEST_REDIS_URL is set
// (e.g. redis://127.0.0.1:6379/0), against that real redis-server too, and
// when TAGQ_TEST_REDIS_CLUSTER is set (seed host:port list), against that
// Redis Cluster, each on a key prefix of its own that is removed afterwards.

type bundle struct {
	t      *testing.T
	ctx    context.Context
	s      *Store
	rdb    redis.UniversalClient
	prefix string
}

type backend struct {
	name string
	open func(t *testing.T) redis.UniversalClient
}

func backends(t *testing.T) []backend {
	bs := []backend{{name: "miniredis", open: func(t *testing.T) redis.UniversalClient {
		m := miniredis.RunT(t)
		// miniredis runs scripts in gopher-lua: under the race detector on a
		// loaded machine one full script call took over go-redis's default 3 s
		// read timeout (TestSettleTakesBatchesBeyondOneScriptCall in CI).
		c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true, ReadTimeout: 30 * time.Second})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}}}
	if seeds := os.Getenv("TAGQ_TEST_REDIS_CLUSTER"); seeds != "" {
		bs = append(bs, backend{name: "cluster", open: func(t *testing.T) redis.UniversalClient {
			c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(seeds, ","), ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = c.Close() })
			return c
		}})
	}
	redisURL := func(url string) func(t *testing.T) redis.UniversalClient {
		return func(t *testing.T) redis.UniversalClient {
			opt, err := redis.ParseURL(url)
			require.NoError(t, err)
			opt.ContextTimeoutEnabled = true
			c := redis.NewClient(opt)
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
	}
	if url := os.Getenv("TAGQ_TEST_REDIS_URL"); url != "" {
		bs = append(bs, backend{name: "redis", open: redisURL(url)})
	}
	// A master with a replica (.ci/redis-replicated): every acknowledged
	// write waits for the replica (S20).
	if url := os.Getenv("TAGQ_TEST_REDIS_REPLICATED_URL"); url != "" {
		bs = append(bs, backend{name: "replicated", open: redisURL(url)})
	}
	return bs
}

// eachBackend runs fn as a subtest per backend with a fresh Store.
func eachBackend(t *testing.T, fn func(t *testing.T, b *bundle)) {
	t.Helper()
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			fn(t, newBundle(t, be.open(t), be.name == "miniredis"))
		})
	}
}

// eachBackendInTurn is eachBackend one backend at a time, for tests that
// set package state (relayFault).
func eachBackendInTurn(t *testing.T, fn func(t *testing.T, b *bundle)) {
	t.Helper()
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) { fn(t, newBundle(t, be.open(t), be.name == "miniredis")) })
	}
}

// newBundle is a bundle on rdb; embedded says rdb is miniredis, whose
// store runs the embedded store's scripts (Config.Embedded), as tagqd's
// does (other stores a test makes on it run the others: both are right).
func newBundle(t *testing.T, rdb redis.UniversalClient, embedded bool) *bundle {
	t.Helper()
	rdb.AddHook(slotHook{t})
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	prefix := "tagqtest-" + hex.EncodeToString(rnd[:])
	ctx := context.Background()
	// Writes wait for a replica wherever the backend has one (the
	// replicated backend, a cluster with replicas), as tagqd's default.
	acks, err := durable.Install(ctx, rdb, durable.Config{Replicas: durable.Auto, Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(acks.Close)
	s, err := New(ctx, Config{Client: rdb, Prefix: prefix, Logger: testLogger(t), TestClock: true, Embedded: embedded, Acks: acks})
	require.NoError(t, err)
	b := &bundle{t: t, ctx: ctx, s: s, rdb: rdb, prefix: prefix}
	t.Cleanup(func() {
		_ = s.Close()
		for _, k := range b.keys(prefix + ":*") {
			rdb.Del(ctx, k)
		}
	})
	return b
}

// keys lists the keys matching pattern, on every master of a cluster.
func (b *bundle) keys(pattern string) []string {
	var out []string
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			out = append(out, iter.Val())
		}
		return iter.Err()
	}
	var err error
	switch c := b.rdb.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		err = c.ForEachMaster(b.ctx, func(ctx context.Context, n *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return scan(ctx, n)
		})
	case *redis.Client:
		err = scan(b.ctx, c)
	}
	if err != nil {
		b.t.Errorf("listing keys: %v", err)
	}
	return out
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// testLogger sends engine logs to the test's log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, nil))
}

// advance freezes queue q's clock (see test_clock_ms in lib.lua) and moves
// it forward by d; the first call starts from Redis's own time.
func (b *bundle) advance(q string, d time.Duration) {
	b.t.Helper()
	meta := b.s.qkeys(q).meta
	ms, err := b.rdb.HGet(b.ctx, meta, "test_clock_ms").Int64()
	if isNil(err) {
		tm, terr := b.rdb.Time(b.ctx).Result()
		require.NoError(b.t, terr)
		ms, err = tm.UnixMilli(), nil
	}
	require.NoError(b.t, err)
	b.setClock(q, ms+d.Milliseconds())
}

// setClock freezes queue q's clock at ms.
func (b *bundle) setClock(q string, ms int64) {
	b.t.Helper()
	require.NoError(b.t, b.rdb.HSet(b.ctx, b.s.qkeys(q).meta, "test_clock_ms", ms).Err())
}

func (b *bundle) queue(name string, cfg ...func(*tags.QueueConfig)) *tags.Queue {
	b.t.Helper()
	c := tags.QueueConfig{Name: name}
	for _, f := range cfg {
		f(&c)
	}
	q, err := b.s.CreateQueue(b.ctx, c)
	require.NoError(b.t, err)
	return q
}

func (b *bundle) tag(q, name string, cfg ...func(*tags.TagConfig)) *tags.Tag {
	b.t.Helper()
	c := tags.TagConfig{Name: name}
	for _, f := range cfg {
		f(&c)
	}
	tg, err := b.s.CreateTag(b.ctx, q, c)
	require.NoError(b.t, err)
	return tg
}

func (b *bundle) send(q string, bodies ...string) []string {
	b.t.Helper()
	msgs := make([]tags.OutMessage, len(bodies))
	for i, body := range bodies {
		msgs[i] = tags.OutMessage{Body: []byte(body)}
	}
	return b.sendMsgs(q, msgs...)
}

func (b *bundle) sendMsgs(q string, msgs ...tags.OutMessage) []string {
	b.t.Helper()
	res, err := b.s.Send(b.ctx, q, msgs)
	require.NoError(b.t, err)
	ids := make([]string, len(res))
	for i, r := range res {
		require.NoError(b.t, r.Err)
		ids[i] = r.ID
	}
	return ids
}

func (b *bundle) receive(q, tag string, max int, opts ...func(*tags.ReceiveOptions)) []tags.Message {
	b.t.Helper()
	o := tags.ReceiveOptions{MaxMessages: max, WaitSeconds: i32(0)}
	for _, f := range opts {
		f(&o)
	}
	msgs, err := b.s.Receive(b.ctx, q, tag, o)
	require.NoError(b.t, err)
	return msgs
}

func (b *bundle) del(q string, msgs ...tags.Message) {
	b.t.Helper()
	hs := make([]string, len(msgs))
	for i, m := range msgs {
		hs[i] = m.ReceiptHandle
	}
	errs, err := b.s.Delete(b.ctx, q, hs)
	require.NoError(b.t, err)
	for _, e := range errs {
		require.NoError(b.t, e)
	}
}

func (b *bundle) state(q, tag string) tags.TagState {
	b.t.Helper()
	tg, err := b.s.GetTag(b.ctx, q, tag)
	require.NoError(b.t, err)
	st := tg.State
	st.OldestAvailableAge = 0
	return st
}

func bodies(msgs []tags.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Body)
	}
	return out
}

func requireReason(t *testing.T, err error, reason string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, reason, tags.ReasonOf(err), "error: %v", err)
}
