package durable_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/internal/redisproc"
)

// needRedis skips without redis-server, unless TAGQ_FAILOVER asked for
// the replication tests (CI), where its absence fails them.
func needRedis(t *testing.T) {
	t.Helper()
	if redisproc.Bin() == "" {
		if os.Getenv("TAGQ_FAILOVER") != "" {
			t.Fatal("TAGQ_FAILOVER is set but there is no redis-server on PATH")
		}
		t.Skip("no redis-server on PATH")
	}
}

type bundle struct {
	master, replica *redisproc.Server
	link            *redisproc.Link
	client          *redis.Client
	acks            *durable.Acks
}

// setup starts a master with a replica behind a link and installs cfg on
// a client of the master.
func setup(t *testing.T, cfg durable.Config) *bundle {
	t.Helper()
	needRedis(t)
	b := &bundle{master: redisproc.Start(t)}
	b.replica, b.link = redisproc.StartReplica(t, b.master)
	b.client = redis.NewClient(&redis.Options{Addr: b.master.Addr(), Protocol: 2, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = b.client.Close() })
	var err error
	b.acks, err = durable.Install(context.Background(), b.client, cfg)
	require.NoError(t, err)
	t.Cleanup(b.acks.Close)
	return b
}

func TestWritesWaitForTheReplica(t *testing.T) {
	t.Parallel()
	b := setup(t, durable.Config{Replicas: 1, Timeout: 300 * time.Millisecond, ProbeInterval: time.Hour})
	ctx := context.Background()
	marked := durable.Mark(ctx)
	require.Equal(t, 1, b.acks.Replicas())

	// A marked write is acknowledged once the replica has it: the replica
	// holds it the moment the call returns.
	require.NoError(t, b.client.Set(marked, "k1", "v1", 0).Err())
	require.Equal(t, "v1", b.replica.Client.Get(ctx, "k1").Val())
	_, err := b.client.Pipelined(marked, func(p redis.Pipeliner) error {
		p.Set(marked, "k2", "v2", 0)
		p.Get(marked, "k1")
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, "v2", b.replica.Client.Get(ctx, "k2").Val())

	// With the link frozen, the replica never confirms: the write is
	// refused as maybe stored (Sent), after the timeout.
	b.link.Freeze()
	start := time.Now()
	err = b.client.Set(marked, "k3", "v3", 0).Err()
	de, ok := durable.AsError(err)
	require.True(t, ok, "got %v, want a *durable.Error", err)
	require.True(t, de.Sent)
	require.Equal(t, 0, de.Acked)
	require.Equal(t, 1, de.Wanted)
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "the write waited for its replica")
	require.Equal(t, "v3", b.master.Client.Get(ctx, "k3").Val(), "the master has it: Sent means it may be stored")

	// The master is short of replicas now: marked writes fail at once,
	// unsent, and a pipeline's writes all get the error.
	cmds, err := b.client.Pipelined(marked, func(p redis.Pipeliner) error {
		p.Set(marked, "k4", "v4", 0)
		p.Incr(marked, "n")
		return nil
	})
	de, ok = durable.AsError(err)
	require.True(t, ok, "got %v", err)
	require.False(t, de.Sent)
	for _, c := range cmds {
		_, ok := durable.AsError(c.Err())
		require.True(t, ok, "%s: got %v", c.Name(), c.Err())
	}
	require.Zero(t, b.master.Client.Exists(ctx, "k4", "n").Val(), "a refused write is not sent")

	// Reads, and writes under an unmarked context, pass.
	require.Equal(t, "v1", b.client.Get(marked, "k1").Val())
	require.NoError(t, b.client.Set(ctx, "k5", "v5", 0).Err())
	require.Equal(t, "v5", b.master.Client.Get(ctx, "k5").Val())
}

func TestAShortMasterWritesAgainOnceItHasReplicas(t *testing.T) {
	t.Parallel()
	b := setup(t, durable.Config{Replicas: 1, Timeout: 200 * time.Millisecond, ProbeInterval: 20 * time.Millisecond})
	ctx := context.Background()
	marked := durable.Mark(ctx)
	b.link.Freeze()
	_, ok := durable.AsError(b.client.Set(marked, "a", "1", 0).Err())
	require.True(t, ok)
	// The frozen replica stays connected but stops confirming: the probe
	// does not count it. A second replica, in sync, brings writes back.
	second := redisproc.Start(t, "--replicaof", "127.0.0.1", b.master.Addr()[len("127.0.0.1:"):])
	require.NoError(t, b.master.WaitInSync(ctx, 1, 20*time.Second))
	require.Eventually(t, func() bool { return b.client.Set(marked, "b", "2", 0).Err() == nil },
		10*time.Second, 20*time.Millisecond)
	require.Equal(t, "2", second.Client.Get(ctx, "b").Val())
}

func TestTransactionsWaitOnTheirOwnConnection(t *testing.T) {
	t.Parallel()
	b := setup(t, durable.Config{Replicas: 1, Timeout: 300 * time.Millisecond, ProbeInterval: time.Hour})
	ctx := durable.Mark(context.Background())
	conn, err := b.acks.Conn(ctx, "q")
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "q", "1", 0)
		p.Incr(ctx, "qn")
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, b.acks.Wait(ctx, conn, "q"))
	require.Equal(t, "1", b.replica.Client.Get(context.Background(), "q").Val())
	require.NoError(t, b.acks.Refuse(ctx, "q"))

	b.link.Freeze()
	_, err = conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "qn")
		return nil
	})
	require.NoError(t, err, "the transaction itself carries no WAIT")
	de, ok := durable.AsError(b.acks.Wait(ctx, conn, "q"))
	require.True(t, ok)
	require.True(t, de.Sent)
	_, ok = durable.AsError(b.acks.Refuse(ctx, "q"))
	require.True(t, ok, "the master is short now: the next transaction is refused")
}

func TestAutoWaitsOnceAMasterHasAReplica(t *testing.T) {
	t.Parallel()
	needRedis(t)
	master := redisproc.Start(t)
	c := redis.NewClient(&redis.Options{Addr: master.Addr(), Protocol: 2})
	t.Cleanup(func() { _ = c.Close() })
	acks, err := durable.Install(context.Background(), c, durable.Config{Replicas: durable.Auto, AutoCheck: 20 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(acks.Close)
	require.Equal(t, 0, acks.Replicas(), "a lone master: nothing to wait for")
	require.NoError(t, c.Set(durable.Mark(context.Background()), "k", "v", 0).Err())

	redisproc.StartReplica(t, master)
	require.Eventually(t, func() bool { return acks.Replicas() == 1 }, 10*time.Second, 10*time.Millisecond)
}

func TestAutoStartsAtOneWithAReplica(t *testing.T) {
	t.Parallel()
	b := setup(t, durable.Config{Replicas: durable.Auto})
	require.Equal(t, 1, b.acks.Replicas())
}

func TestOffInstallsNothing(t *testing.T) {
	t.Parallel()
	acks, err := durable.Install(context.Background(), redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), durable.Config{})
	require.NoError(t, err)
	require.Nil(t, acks)
	require.Equal(t, 0, acks.Replicas())
	require.NoError(t, acks.Wait(context.Background(), nil, "k"), "a nil Acks waits for nothing")
	acks.Close()
}
