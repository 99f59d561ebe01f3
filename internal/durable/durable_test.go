package durable_test

import (
	"context"
	"os"
	"strings"
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

// setup starts a master (with args) and a replica behind a link, and
// installs cfg on a client of the master made with opt.
func setup(t *testing.T, cfg durable.Config, opt redis.Options, args ...string) *bundle {
	t.Helper()
	needRedis(t)
	b := &bundle{master: redisproc.Start(t, args...)}
	b.replica, b.link = redisproc.StartReplica(t, b.master)
	opt.Addr, opt.Protocol, opt.ContextTimeoutEnabled = b.master.Addr(), 2, true
	b.client = redis.NewClient(&opt)
	t.Cleanup(func() { _ = b.client.Close() })
	var err error
	b.acks, err = durable.Install(context.Background(), b.client, cfg)
	require.NoError(t, err)
	t.Cleanup(b.acks.Close)
	return b
}

// refusedUnsent asserts err is a *durable.Error for a write not sent.
func refusedUnsent(t *testing.T, err error) {
	t.Helper()
	de, ok := durable.AsError(err)
	require.True(t, ok, "got %v, want a *durable.Error", err)
	require.False(t, de.Sent, "got %v, want a write refused unsent", err)
}

// timedOut asserts err is a *durable.Error for a write sent whose
// replicas did not confirm.
func timedOut(t *testing.T, err error) {
	t.Helper()
	de, ok := durable.AsError(err)
	require.True(t, ok, "got %v, want a *durable.Error", err)
	require.True(t, de.Sent, "got %v, want a write sent", err)
	require.Equal(t, 0, de.Acked)
	require.Equal(t, 1, de.Wanted)
}

func TestWritesWaitForTheReplica(t *testing.T) {
	t.Parallel()
	b := setup(t, durable.Config{Replicas: 1, Timeout: time.Second, ProbeInterval: time.Hour}, redis.Options{})
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
	timedOut(t, b.client.Set(marked, "k3", "v3", 0).Err())
	require.GreaterOrEqual(t, time.Since(start), time.Second, "the write waited for its replica")
	require.Equal(t, "v3", b.master.Client.Get(ctx, "k3").Val(), "the master has it: Sent means it may be stored")

	// The master is short of replicas now: marked writes fail at once,
	// unsent, and a pipeline's writes all get the error.
	cmds, err := b.client.Pipelined(marked, func(p redis.Pipeliner) error {
		p.Set(marked, "k4", "v4", 0)
		p.Incr(marked, "n")
		return nil
	})
	refusedUnsent(t, err)
	for _, c := range cmds {
		refusedUnsent(t, c.Err())
	}
	require.Zero(t, b.master.Client.Exists(ctx, "k4", "n").Val(), "a refused write is not sent")

	// Reads, and writes under an unmarked context, pass.
	require.Equal(t, "v1", b.client.Get(marked, "k1").Val())
	require.NoError(t, b.client.Set(ctx, "k5", "v5", 0).Err())
	require.Equal(t, "v5", b.master.Client.Get(ctx, "k5").Val())
}

func TestAFrozenReplicaKeepsTheMasterShortAndAFreshOneClearsIt(t *testing.T) {
	t.Parallel()
	b := setup(t, durable.Config{Replicas: 1, Timeout: time.Second, ProbeInterval: 10 * time.Millisecond}, redis.Options{})
	ctx := context.Background()
	marked := durable.Mark(ctx)
	b.link.Freeze()
	timedOut(t, b.client.Set(marked, "a", "1", 0).Err())
	// The frozen replica stays connected and online in INFO, but never
	// acknowledges the failed write: however often the probe looks, the
	// master stays short. (A bounded wait for something that must not
	// happen: a slow machine probes less, which cannot fail the test.)
	time.Sleep(300 * time.Millisecond)
	refusedUnsent(t, b.client.Set(marked, "b", "2", 0).Err())

	// A second replica, in sync, brings writes back.
	second := redisproc.Start(t, "--replicaof", "127.0.0.1", strings.TrimPrefix(b.master.Addr(), "127.0.0.1:"))
	require.NoError(t, b.master.WaitInSync(ctx, 1, 20*time.Second))
	require.Eventually(t, func() bool { return b.client.Set(marked, "c", "3", 0).Err() == nil },
		10*time.Second, 10*time.Millisecond)
	require.Equal(t, "3", second.Client.Get(ctx, "c").Val())
}

func TestAShortMasterThatRestartsIsProbedAfresh(t *testing.T) {
	t.Parallel()
	b := setup(t, durable.Config{Replicas: 1, Timeout: time.Second, ProbeInterval: 10 * time.Millisecond}, redis.Options{},
		"--appendonly", "yes")
	ctx := context.Background()
	marked := durable.Mark(ctx)
	big := strings.Repeat("x", 100_000)
	for _, k := range []string{"b1", "b2", "b3"} {
		require.NoError(t, b.client.Set(marked, k, big, 0).Err())
	}
	b.link.Freeze()
	timedOut(t, b.client.Set(marked, "a", "1", 0).Err())
	// The master restarts from its AOF with a new replication id and an
	// offset of 0, far below the one the probe noted; a replica syncs
	// with it. Writes go on.
	b.master.Restart()
	redisproc.Start(t, "--replicaof", "127.0.0.1", strings.TrimPrefix(b.master.Addr(), "127.0.0.1:"))
	require.NoError(t, b.master.WaitInSync(ctx, 1, 20*time.Second))
	require.Eventually(t, func() bool { return b.client.Set(marked, "c", "3", 0).Err() == nil },
		10*time.Second, 10*time.Millisecond)
}

func TestAPipelineWhoseWaitOutlivesTheReadTimeoutRunsOnce(t *testing.T) {
	t.Parallel()
	// The WAIT's timeout is longer than the client's read timeout: the
	// round trip times out. go-redis retries a pipeline that timed out,
	// writes and all, unless a command in it says no retry: the WAIT does.
	b := setup(t, durable.Config{Replicas: 1, Timeout: 3 * time.Second, ProbeInterval: time.Hour},
		redis.Options{ReadTimeout: 300 * time.Millisecond, MaxRetries: 3})
	ctx := context.Background()
	marked := durable.Mark(ctx)
	b.link.Freeze()
	err := b.client.Incr(marked, "n").Err()
	de, ok := durable.AsError(err)
	require.True(t, ok, "got %v", err)
	require.True(t, de.Sent)
	require.Equal(t, "1", b.master.Client.Get(ctx, "n").Val(), "the INCR ran once, not once per retry")
	// A WAIT that timed out on the read marks the master short too.
	refusedUnsent(t, b.client.Incr(marked, "n").Err())
}

func TestExecTxCarriesItsWaitInOneRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t, durable.Config{Replicas: 1, Timeout: time.Second, ProbeInterval: time.Hour}, redis.Options{})
	ctx := durable.Mark(context.Background())
	script := redis.NewScript(`redis.call('incr', KEYS[1]); return {redis.call('get', KEYS[1]), 7}`)
	require.NoError(t, script.Load(ctx, b.client).Err())

	tx := &durable.Tx{}
	set := redis.NewStatusCmd(ctx, "set", "q", "v")
	_ = tx.Process(ctx, set)
	add := redis.NewStringCmd(ctx, "xadd", "s", "*", "f", "1")
	_ = tx.Process(ctx, add)
	incr := redis.NewIntCmd(ctx, "incr", "n")
	_ = tx.Process(ctx, incr)
	run := script.EvalSha(ctx, tx, []string{"m"})
	bad := redis.NewIntCmd(ctx, "incr", "q") // not an integer: its own error
	_ = tx.Process(ctx, bad)
	require.NoError(t, b.acks.ExecTx(ctx, "q", tx.Cmds()))
	require.Equal(t, "OK", set.Val())
	require.NoError(t, add.Err())
	require.Contains(t, add.Val(), "-")
	require.Equal(t, int64(1), incr.Val())
	require.Equal(t, []any{"1", int64(7)}, run.Val())
	require.ErrorContains(t, bad.Err(), "not an integer")
	require.Equal(t, int64(1), b.replica.Client.XLen(context.Background(), "s").Val(), "the replica has it on return")

	b.link.Freeze()
	tx = &durable.Tx{}
	incr = redis.NewIntCmd(ctx, "incr", "n")
	_ = tx.Process(ctx, incr)
	timedOut(t, b.acks.ExecTx(ctx, "q", tx.Cmds()))
	timedOut(t, incr.Err())
	tx = &durable.Tx{}
	incr = redis.NewIntCmd(ctx, "incr", "n")
	_ = tx.Process(ctx, incr)
	refusedUnsent(t, b.acks.ExecTx(ctx, "q", tx.Cmds()))
	refusedUnsent(t, incr.Err())
	require.Equal(t, "2", b.master.Client.Get(context.Background(), "n").Val(), "the refused transaction was not sent")
}

func TestTxPipelinedWaitsAfterItsTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t, durable.Config{Replicas: 1, Timeout: time.Second, ProbeInterval: time.Hour}, redis.Options{})
	ctx := durable.Mark(context.Background())
	var incr *redis.IntCmd
	_, err := b.acks.TxPipelined(ctx, "q", func(p redis.Pipeliner) error {
		p.Set(ctx, "q", "1", 0)
		incr = p.Incr(ctx, "qn")
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, int64(1), incr.Val())
	require.Equal(t, "1", b.replica.Client.Get(context.Background(), "qn").Val())

	b.link.Freeze()
	_, err = b.acks.TxPipelined(ctx, "q", func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, "qn")
		return nil
	})
	timedOut(t, err)
	timedOut(t, incr.Err())
	_, err = b.acks.TxPipelined(ctx, "q", func(p redis.Pipeliner) error { p.Incr(ctx, "qn"); return nil })
	refusedUnsent(t, err)
}

// A planned failover (CLUSTER FAILOVER on a replica) moves a slot's
// master while the client's map still names the old one: ExecTx follows
// the MOVED the old master answers, and TxPipelined too.
func TestTransactionsFollowAFailoverOnACluster(t *testing.T) {
	t.Parallel()
	needRedis(t)
	c := redisproc.StartCluster(t, 3)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Seeds(), Protocol: 2, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cc.Close() })
	ctx := durable.Mark(context.Background())
	acks, err := durable.Install(ctx, cc, durable.Config{Replicas: 1, Timeout: 2 * time.Second, ProbeInterval: time.Hour})
	require.NoError(t, err)
	t.Cleanup(acks.Close)
	exec := func() error {
		tx := &durable.Tx{}
		incr := redis.NewIntCmd(ctx, "incr", "{q}n")
		_ = tx.Process(ctx, incr)
		if err := acks.ExecTx(ctx, "{q}n", tx.Cmds()); err != nil {
			return err
		}
		return incr.Err()
	}
	require.NoError(t, exec())
	i := c.MasterOf(t, "{q}n")
	c.PlannedFailover(t, i)
	// The old master becomes a replica of the new one: the next write
	// waits for it.
	require.NoError(t, exec())
	_, err = acks.TxPipelined(ctx, "{q}n", func(p redis.Pipeliner) error { p.Incr(ctx, "{q}n"); return nil })
	require.NoError(t, err)
	require.Equal(t, "3", c.Replicas[i].Client.Get(context.Background(), "{q}n").Val())
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
	b := setup(t, durable.Config{Replicas: durable.Auto}, redis.Options{})
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
