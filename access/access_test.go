package access

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Every test runs on miniredis and, with TAGQ_TEST_REDIS_URL, on that
// real Redis too, under a random key prefix removed afterwards.

type bundle struct {
	ctx    context.Context
	rdb    redis.UniversalClient
	prefix string
	clock  *clock
	a      *Access
	cmds   *atomic.Int64 // commands sent (hook)
}

// clock is a driven clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// slotHook fails the test when a command touches a key outside the
// {~access} hash tag: every access key must share one cluster slot, so that
// MULTI and the scripts work on Redis Cluster.
type slotHook struct {
	t      *testing.T
	prefix string
}

func (h slotHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h slotHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.check(cmd); return next(ctx, cmd) }
}
func (h slotHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.check(c)
		}
		return next(ctx, cmds)
	}
}

func (h slotHook) check(cmd redis.Cmder) {
	args := cmd.Args()
	var keys []any
	switch strings.ToLower(cmd.Name()) {
	case "multi", "exec", "script", "ping", "hello", "client", "keys", "del", "select", "info":
		return // transaction framing, set-up, and the tests' own clean-up
	case "eval", "evalsha", "eval_ro", "evalsha_ro":
		n, _ := strconv.Atoi(fmt.Sprint(args[2]))
		keys = args[3 : 3+n]
	default:
		keys = args[1:2]
	}
	for _, k := range keys {
		if ks := fmt.Sprint(k); !strings.HasPrefix(ks, h.prefix+":{~access}:") {
			h.t.Errorf("%s touches %q, outside the {~access} slot", cmd.Name(), ks)
		}
	}
}

// countHook counts the commands (a pipeline's too) the client sends.
type countHook struct{ n *atomic.Int64 }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(int64(len(cmds))); return next(ctx, cmds) }
}

func eachBackend(t *testing.T, fn func(t *testing.T, b *bundle)) {
	t.Helper()
	type backend struct {
		name string
		open func(t *testing.T) redis.UniversalClient
	}
	bes := []backend{{"miniredis", func(t *testing.T) redis.UniversalClient {
		m := miniredis.RunT(t)
		return redis.NewClient(&redis.Options{Addr: m.Addr()})
	}}}
	if url := os.Getenv("TAGQ_TEST_REDIS_URL"); url != "" {
		bes = append(bes, backend{"redis", func(t *testing.T) redis.UniversalClient {
			opt, err := redis.ParseURL(url)
			require.NoError(t, err)
			return redis.NewClient(opt)
		}})
	}
	for _, be := range bes {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			rdb := be.open(t)
			var rnd [6]byte
			_, _ = rand.Read(rnd[:])
			b := &bundle{ctx: context.Background(), rdb: rdb, prefix: "tagqaccess-" + hex.EncodeToString(rnd[:]),
				clock: &clock{t: time.Unix(1_700_000_000, 0)}, cmds: &atomic.Int64{}}
			rdb.AddHook(countHook{b.cmds})
			rdb.AddHook(slotHook{t: t, prefix: b.prefix})
			b.a = b.open(t)
			t.Cleanup(func() {
				ks, _ := rdb.Keys(b.ctx, b.prefix+":*").Result()
				for _, k := range ks {
					rdb.Del(b.ctx, k)
				}
				_ = rdb.Close()
			})
			fn(t, b)
		})
	}
}

// open is another process's Access on the same Redis and clock.
func (b *bundle) open(t *testing.T) *Access {
	a, err := New(Config{Client: b.rdb, Prefix: b.prefix, Now: b.clock.Now, DefaultMaxQueues: 3})
	require.NoError(t, err)
	return a
}

func (b *bundle) snap(t *testing.T, a *Access) *Snapshot {
	t.Helper()
	s, err := a.Current(b.ctx)
	require.NoError(t, err)
	return s
}

func reasonOf(err error) string { return tags.ReasonOf(err) }

func TestKeys(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		_, err := b.a.CreatePrincipal(b.ctx, Principal{Name: "alice"})
		require.NoError(t, err)
		_, err = b.a.CreatePrincipal(b.ctx, Principal{Name: "alice"})
		require.Equal(t, ReasonPrincipalAlreadyExists, reasonOf(err))
		_, _, err = b.a.IssueKey(b.ctx, "nobody")
		require.Equal(t, ReasonPrincipalNotFound, reasonOf(err))

		k, token, err := b.a.IssueKey(b.ctx, "alice")
		require.NoError(t, err)
		require.Regexp(t, `^tagq_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$`, token)
		require.Contains(t, token, k.ID)

		// Redis holds the key id and the hash, never the secret.
		all, err := b.rdb.HGetAll(b.ctx, newKeys(b.prefix).apiKeys).Result()
		require.NoError(t, err)
		_, secret, _ := parseToken(token)
		for _, v := range all {
			require.NotContains(t, v, secret)
		}

		s := b.snap(t, b.a)
		require.Equal(t, "alice", s.Authenticate(token).Name)
		wrong := token[:len(token)-1] + map[bool]string{true: "A", false: "B"}[token[len(token)-1] != 'A']
		require.Nil(t, s.Authenticate(wrong), "a wrong secret")
		require.Nil(t, s.Authenticate("tagq_0123456789abcdef_"+secret), "another key id")
		require.Nil(t, s.Authenticate(""), "no key")
		require.Nil(t, s.Authenticate("not a key at all, and no bootstrap key is set"))

		_, err = b.a.ListKeys(b.ctx, "nobody")
		require.Equal(t, ReasonPrincipalNotFound, reasonOf(err))
		_, _, err = b.a.GetPrincipal(b.ctx, "nobody")
		require.Equal(t, ReasonPrincipalNotFound, reasonOf(err))
		keys, err := b.a.ListKeys(b.ctx, "alice")
		require.NoError(t, err)
		require.Len(t, keys, 1)
		require.Equal(t, k.ID, keys[0].ID)

		require.Equal(t, ReasonKeyNotFound, reasonOf(b.a.RevokeKey(b.ctx, "bob", k.ID)), "only its principal's key")
		require.NoError(t, b.a.RevokeKey(b.ctx, "alice", k.ID))
		require.Nil(t, b.snap(t, b.a).Authenticate(token), "revoked here: refused at once")
		require.Equal(t, ReasonKeyNotFound, reasonOf(b.a.RevokeKey(b.ctx, "alice", k.ID)))
	})
}

// A change made through another process takes effect here within
// RefreshInterval, and until then no call costs a Redis command.
func TestCacheRefresh(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		_, err := b.a.CreatePrincipal(b.ctx, Principal{Name: "alice"})
		require.NoError(t, err)
		k, token, err := b.a.IssueKey(b.ctx, "alice")
		require.NoError(t, err)
		other := b.open(t) // another tagqd
		require.NotNil(t, b.snap(t, other).Authenticate(token))

		before := b.cmds.Load()
		for range 1000 {
			require.NotNil(t, b.snap(t, other).Authenticate(token))
		}
		require.Equal(t, before, b.cmds.Load(), "cached calls send no Redis command")

		b.clock.Add(DefaultRefreshInterval)
		require.NotNil(t, b.snap(t, other).Authenticate(token))
		require.Equal(t, before+1, b.cmds.Load(), "an unchanged refresh is one GET")

		require.NoError(t, b.a.RevokeKey(b.ctx, "alice", k.ID))
		b.clock.Add(DefaultRefreshInterval - time.Millisecond)
		require.NotNil(t, b.snap(t, other).Authenticate(token), "within the interval the other process still has the key")
		b.clock.Add(time.Millisecond)
		require.Nil(t, b.snap(t, other).Authenticate(token), "revoked elsewhere: refused once the interval passed")
	})
}

// With Redis unreachable, cached data serves for at most two intervals.
func TestCacheFailsClosed(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	a, err := New(Config{Client: rdb, Now: c.Now})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, a.Bootstrap(ctx, "an operator's bootstrap key of 32+ characters"))
	s, err := a.Current(ctx)
	require.NoError(t, err)
	require.NotNil(t, s.Authenticate("an operator's bootstrap key of 32+ characters"))

	m.Close()
	c.Add(DefaultRefreshInterval)
	_, err = a.Current(ctx)
	require.NoError(t, err, "within two intervals the cached data serves")
	c.Add(DefaultRefreshInterval)
	_, err = a.Current(ctx)
	require.Equal(t, tags.ReasonBackendUnavailable, reasonOf(err))
}

// What each EMQ level allows (docs.api.xiaomi.com/emq QueuePermission).
func TestLevels(t *testing.T) {
	want := map[Permission]Action{
		None:        0,
		Send:        ActSend,
		Receive:     ActReceive,
		SendReceive: ActSend | ActReceive,
		Handle:      ActReceive | ActHandle,
		SendHandle:  ActSend | ActReceive | ActHandle,
		GetInfo:     ActInfo,
		UseQueue:    ActSend | ActReceive | ActHandle | ActInfo,
		AdminQueue:  ActSend | ActReceive | ActHandle | ActInfo | ActPeek | ActDeletePeek | ActAdmin,
		Peek:        ActPeek,
		DeletePeek:  ActPeek | ActDeletePeek,
		FullControl: ActSend | ActReceive | ActHandle | ActInfo | ActPeek | ActDeletePeek | ActAdmin | ActGrant,
	}
	require.Len(t, Levels, len(want))
	for _, p := range Levels {
		for bit := Action(1); bit <= ActGrant; bit <<= 1 {
			require.Equal(t, want[p]&bit != 0, p.Allows(bit), "%s allows %s", p, bit)
		}
	}
	require.Equal(t, Send, Needed(ActSend))
	require.Equal(t, Handle, Needed(ActHandle))
	require.Equal(t, GetInfo, Needed(ActInfo))
	require.Equal(t, Peek, Needed(ActPeek))
	require.Equal(t, DeletePeek, Needed(ActDeletePeek))
	require.Equal(t, AdminQueue, Needed(ActAdmin))
	require.Equal(t, FullControl, Needed(ActGrant))
	p, ok := ParsePermission("permission_send_handle")
	require.True(t, ok)
	require.Equal(t, SendHandle, p)
	_, ok = ParsePermission("WRITE")
	require.False(t, ok)
}

func TestGrants(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		_, err := b.a.CreatePrincipal(b.ctx, Principal{Name: "bob"})
		require.NoError(t, err)
		for _, g := range []Grant{
			{Principal: "bob", Queue: "orders-*", Permission: SendReceive},
			{Principal: "bob", Queue: "orders-eu-*", Permission: GetInfo},
			{Principal: "bob", Queue: "orders-secret", Permission: None},
			{Principal: "bob", Queue: "jobs", Permission: Handle, Tags: []string{"billing"}},
		} {
			require.NoError(t, b.a.SetGrant(b.ctx, g))
		}
		require.Equal(t, ReasonPrincipalNotFound, reasonOf(b.a.SetGrant(b.ctx, Grant{Principal: "eve", Queue: "x", Permission: Send})))
		require.Equal(t, tags.ReasonInvalidName, reasonOf(b.a.SetGrant(b.ctx, Grant{Principal: "bob", Queue: "a*b", Permission: Send})))
		require.Equal(t, ReasonInvalidPermission, reasonOf(b.a.SetGrant(b.ctx, Grant{Principal: "bob", Queue: "x", Permission: "WRITE"})))

		s := b.snap(t, b.a)
		bob := s.Principal("bob")
		for _, c := range []struct {
			queue string
			act   Action
			tag   string
			want  bool
		}{
			{"orders-us", ActSend, "", true},
			{"orders-us", ActReceive, "any", true},
			{"orders-us", ActHandle, "", false},
			{"orders-eu-1", ActSend, "", false}, // the longer prefix wins
			{"orders-eu-1", ActInfo, "", true},
			{"orders-secret", ActSend, "", false}, // an exact name wins over prefixes
			{"order", ActSend, "", false},
			{"jobs", ActReceive, "billing", true},
			{"jobs", ActHandle, "billing", true},
			{"jobs", ActReceive, "audit", false},
			{"jobs", ActReceive, "", false}, // the default tag must be named
			{"jobs", ActSend, "", false},
		} {
			require.Equal(t, c.want, s.Allowed(bob, c.queue, c.act, c.tag), "%s on %s tag %q", c.act, c.queue, c.tag)
		}
		perm, _, from := s.Effective(bob, "orders-eu-1")
		require.Equal(t, GetInfo, perm)
		require.Equal(t, "orders-eu-*", from)

		gs, err := b.a.ListGrants(b.ctx, "bob", "")
		require.NoError(t, err)
		require.Len(t, gs, 4)
		require.NoError(t, b.a.RevokeGrant(b.ctx, "bob", "orders-eu-*"))
		require.Equal(t, ReasonPermissionNotFound, reasonOf(b.a.RevokeGrant(b.ctx, "bob", "orders-eu-*")))
		require.True(t, b.snap(t, b.a).Allowed(bob, "orders-eu-1", ActSend, ""), "back to orders-*")
	})
}

func TestOwnersAndQuota(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		p, err := b.a.CreatePrincipal(b.ctx, Principal{Name: "carol", MaxQueues: ptr(int32(2))})
		require.NoError(t, err)
		for _, q := range []string{"c1", "c2"} {
			added, err := b.a.ReserveQueue(b.ctx, p, q)
			require.NoError(t, err)
			require.True(t, added)
			require.NoError(t, b.a.QueueCreated(b.ctx, p, q))
		}
		_, err = b.a.ReserveQueue(b.ctx, p, "c3")
		e, ok := tags.AsError(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, ReasonQuotaExceeded, e.Reason)
		require.Equal(t, tags.KindResourceExhausted, e.Kind)
		require.Equal(t, "2", e.Metadata["limit"])

		s := b.snap(t, b.a)
		require.True(t, s.Allowed(p, "c1", ActGrant, ""), "the creator has FULL_CONTROL")
		perm, _, from := s.Effective(p, "c1")
		require.Equal(t, FullControl, perm)
		require.Equal(t, "owner", from)

		require.NoError(t, b.a.QueueDeleted(b.ctx, "c1"))
		require.False(t, b.snap(t, b.a).Allowed(p, "c1", ActSend, ""), "a deleted queue has no owner")
		added, err := b.a.ReserveQueue(b.ctx, p, "c3")
		require.NoError(t, err, "the deleted queue no longer counts")
		require.True(t, added)
		require.NoError(t, b.a.ReleaseQueue(b.ctx, p, "c3"))
		_, n, err := b.a.GetPrincipal(b.ctx, "carol")
		require.NoError(t, err)
		require.EqualValues(t, 1, n)

		// Without max_queues, the default (3 here).
		d, err := b.a.CreatePrincipal(b.ctx, Principal{Name: "dave"})
		require.NoError(t, err)
		for i := range 3 {
			_, err := b.a.ReserveQueue(b.ctx, d, "d"+string(rune('0'+i)))
			require.NoError(t, err)
		}
		_, err = b.a.ReserveQueue(b.ctx, d, "d9")
		require.Equal(t, ReasonQuotaExceeded, reasonOf(err))
		// Zero: may create none.
		z, err := b.a.CreatePrincipal(b.ctx, Principal{Name: "zed", MaxQueues: ptr(int32(0))})
		require.NoError(t, err)
		_, err = b.a.ReserveQueue(b.ctx, z, "z")
		require.Equal(t, ReasonQuotaExceeded, reasonOf(err))
	})
}

func ptr[T any](v T) *T { return &v }

func TestDeletePrincipal(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		p, err := b.a.CreatePrincipal(b.ctx, Principal{Name: "erin", CertNames: []string{"erin.example"}})
		require.NoError(t, err)
		_, token, err := b.a.IssueKey(b.ctx, "erin")
		require.NoError(t, err)
		require.NoError(t, b.a.SetGrant(b.ctx, Grant{Principal: "erin", Queue: "*", Permission: FullControl}))
		_, err = b.a.CreatePrincipal(b.ctx, Principal{Name: "erin2"})
		require.NoError(t, err)
		require.NoError(t, b.a.SetGrant(b.ctx, Grant{Principal: "erin2", Queue: "*", Permission: Send}))
		_, err = b.a.ReserveQueue(b.ctx, p, "eq")
		require.NoError(t, err)
		require.NoError(t, b.a.QueueCreated(b.ctx, p, "eq"))
		s := b.snap(t, b.a)
		require.Equal(t, "erin", s.AuthenticateCert([]string{"other", "erin.example"}).Name)

		require.NoError(t, b.a.DeletePrincipal(b.ctx, "erin"))
		require.Equal(t, ReasonPrincipalNotFound, reasonOf(b.a.DeletePrincipal(b.ctx, "erin")))
		s = b.snap(t, b.a)
		require.Nil(t, s.Authenticate(token))
		require.Nil(t, s.AuthenticateCert([]string{"erin.example"}))
		gs, err := b.a.ListGrants(b.ctx, "", "")
		require.NoError(t, err)
		require.Len(t, gs, 1, "erin2's grant (its name starts with erin) stays")
		require.Equal(t, "erin2", gs[0].Principal)
		require.Empty(t, b.rdb.HGetAll(b.ctx, newKeys(b.prefix).owners).Val())
		require.Zero(t, b.rdb.Exists(b.ctx, newKeys(b.prefix).created("erin")).Val())
	})
}

func TestBootstrap(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		require.Error(t, b.a.Bootstrap(b.ctx, "short"))
		first := "first bootstrap key, 32 characters or more"
		require.NoError(t, b.a.Bootstrap(b.ctx, first))
		s := b.snap(t, b.a)
		admin := s.Authenticate(first)
		require.NotNil(t, admin)
		require.True(t, admin.Admin)
		require.True(t, s.Allowed(admin, "any-queue", ActGrant, ""))

		// Another start with another key replaces it; issued keys stay.
		_, issued, err := b.a.IssueKey(b.ctx, AdminPrincipal)
		require.NoError(t, err)
		second := "second bootstrap key, 32 characters or more"
		require.NoError(t, b.a.Bootstrap(b.ctx, second))
		s = b.snap(t, b.a)
		require.Nil(t, s.Authenticate(first))
		require.NotNil(t, s.Authenticate(second))
		require.NotNil(t, s.Authenticate(issued))
	})
}
