package redisstore

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// quotaClock freezes queue q's clock 200 ms into a second to come and
// returns that time in ms: a second then has 800 ms left.
func (b *bundle) quotaClock(q string) int64 {
	b.t.Helper()
	b.advance(q, 0)
	ms, err := b.rdb.HGet(b.ctx, b.s.qkeys(q).meta, "test_clock_ms").Int64()
	require.NoError(b.t, err)
	at := (ms/1000+1)*1000 + 200
	b.setClock(q, at)
	return at
}

// requireQuotaError checks a QUOTA_EXCEEDED error's metadata.
func requireQuotaError(t *testing.T, err error, quota string, limit, retryMs int64) {
	t.Helper()
	requireReason(t, err, tags.ReasonQuotaExceeded)
	e := mustError(t, err)
	require.Equal(t, tags.KindResourceExhausted, e.Kind)
	require.Equal(t, quota, e.Metadata["quota"])
	require.Equal(t, strconv.FormatInt(limit, 10), e.Metadata["limit"])
	require.Equal(t, strconv.FormatInt(retryMs, 10), e.Metadata["retry_after_ms"])
}

func outMsgs(bodies ...string) []tags.OutMessage {
	out := make([]tags.OutMessage, len(bodies))
	for i, s := range bodies {
		out[i] = tags.OutMessage{Body: []byte(s)}
	}
	return out
}

func TestWriteQuotaStoresThePrefixThatFits(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *tags.QueueConfig) { c.WriteQuotaPerSecond = i32(3) })
		at := b.quotaClock("q")

		res, err := b.s.Send(b.ctx, "q", outMsgs("a", "b", "c", "d", "e"))
		require.NoError(t, err)
		for i, r := range res {
			if i < 3 {
				require.NoError(t, r.Err, "entry %d", i)
				continue
			}
			requireQuotaError(t, r.Err, tags.QuotaWrite, 3, 800)
			require.Equal(t, "q", mustError(t, r.Err).Metadata["queue"])
		}
		// The same second: nothing more, an invalid entry still named as such.
		b.setClock("q", at+799)
		res, err = b.s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("f")}, {}})
		require.NoError(t, err)
		requireQuotaError(t, res[0].Err, tags.QuotaWrite, 3, 1)
		requireReason(t, res[1].Err, tags.ReasonInvalidArgumentRange)

		// The next second takes three more.
		b.setClock("q", at+800)
		res, err = b.s.Send(b.ctx, "q", outMsgs("g", "h", "i", "j"))
		require.NoError(t, err)
		require.NoError(t, res[2].Err)
		requireQuotaError(t, res[3].Err, tags.QuotaWrite, 3, 1000)

		require.Equal(t, []string{"a", "b", "c", "g", "h", "i"}, bodies(b.receive("q", "", 10)))
		require.Equal(t, int64(6), b.state("q", "default").ReceivedTotal)

		// Removed: no quota.
		_, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{WriteQuotaPerSecond: i32(0)})
		require.NoError(t, err)
		b.sendMsgs("q", outMsgs("k", "l", "m", "n")...)
	})
}

func TestReadQuotaPerTag(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *tags.QueueConfig) { c.ReadQuotaPerSecond = i32(2) })
		b.tag("q", "free", func(c *tags.TagConfig) { c.ReadQuotaPerSecond = i32(0) })
		b.tag("q", "slow", func(c *tags.TagConfig) { c.ReadQuotaPerSecond = i32(1) })
		at := b.quotaClock("q")
		b.send("q", "a", "b", "c", "d", "e")

		// The queue's quota: two a second, for each tag on its own.
		require.Equal(t, []string{"a", "b"}, bodies(b.receive("q", "", 10)))
		_, err := b.s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 10, WaitSeconds: i32(5)})
		requireQuotaError(t, err, tags.QuotaRead, 2, 800)
		require.Equal(t, "default", mustError(t, err).Metadata["tag"])
		// A tag's own quota, and a tag with none.
		require.Equal(t, []string{"a"}, bodies(b.receive("q", "slow", 10)))
		require.Len(t, b.receive("q", "free", 10), 5)
		require.Len(t, b.receive("q", "free", 10), 0)

		// Redeliveries count too; the next second takes two more.
		b.setClock("q", at+800)
		got := b.receive("q", "", 1, func(o *tags.ReceiveOptions) { o.VisibilitySeconds = i32(0) })
		require.Equal(t, []string{"c"}, bodies(got))
		require.Equal(t, []string{"c"}, bodies(b.receive("q", "", 10)))
		_, err = b.s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
		requireQuotaError(t, err, tags.QuotaRead, 2, 1000)

		st := b.state("q", "default")
		require.Equal(t, int64(4), st.ReceivedTotal)
		require.Equal(t, int64(3), st.InFlight) // a, b and c
		require.Equal(t, int64(2), st.Available)

		tg, err := b.s.GetTag(b.ctx, "q", "slow")
		require.NoError(t, err)
		require.Equal(t, int32(1), *tg.ReadQuotaPerSecond)
		tg, err = b.s.GetTag(b.ctx, "q", "default")
		require.NoError(t, err)
		require.Nil(t, tg.ReadQuotaPerSecond)
		qi, err := b.s.GetQueue(b.ctx, "q")
		require.NoError(t, err)
		require.Equal(t, int32(2), qi.ReadQuotaPerSecond)
		require.Zero(t, qi.WriteQuotaPerSecond)
	})
}

// Two Stores on one Redis are two tagqd replicas: the quota is one count
// in Redis, so together they store and hand out exactly the quota.
func TestQuotaIsSharedExactlyAcrossReplicas(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		other, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t), TestClock: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = other.Close() })
		b.queue("q", func(c *tags.QueueConfig) {
			c.WriteQuotaPerSecond = i32(5)
			c.ReadQuotaPerSecond = i32(4)
		})
		at := b.quotaClock("q")
		replicas := []*Store{b.s, other}
		stored, received := 0, 0
		for second := range int64(3) {
			b.setClock("q", at+1000*second)
			for i := range 8 {
				res, err := replicas[i%2].Send(b.ctx, "q", outMsgs("m"))
				require.NoError(t, err)
				if res[0].Err == nil {
					stored++
				} else {
					requireReason(t, res[0].Err, tags.ReasonQuotaExceeded)
				}
			}
			for i := range 8 {
				msgs, err := replicas[i%2].Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
				if err != nil {
					requireReason(t, err, tags.ReasonQuotaExceeded)
				}
				received += len(msgs)
			}
			require.Equal(t, 5*int(second+1), stored, "second %d", second)
			require.Equal(t, 4*int(second+1), received, "second %d", second)
		}
		// Concurrent sends from both, within one second: still exactly 5.
		b.setClock("q", at+5000)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := replicas[i%2].Send(b.ctx, "q", outMsgs("x", "y"))
				require.NoError(t, err)
				mu.Lock()
				defer mu.Unlock()
				for _, r := range res {
					if r.Err == nil {
						ok++
					}
				}
			}()
		}
		wg.Wait()
		require.Equal(t, 5, ok)
	})
}

// A Consume stream's reader waits out a spent read quota and goes on in
// the next second.
func TestReaderWaitsForTheNextSecond(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *tags.QueueConfig) { c.ReadQuotaPerSecond = i32(2) })
		at := b.quotaClock("q")
		b.send("q", "a", "b", "c")
		r, err := b.s.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r.Close()
		got, err := r.Receive(b.ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b"}, bodies(got))

		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		done := make(chan []tags.Message, 1)
		go func() {
			msgs, err := r.Receive(ctx, 10)
			if err != nil {
				t.Errorf("receive: %v", err)
			}
			done <- msgs
		}()
		// Still the same second: nothing comes (the reader polls the test
		// clock every quotaPoll; a few of them pass here).
		select {
		case msgs := <-done:
			t.Fatalf("received %v while the quota was spent", bodies(msgs))
		case <-time.After(5 * quotaPoll):
		}
		b.setClock("q", at+800)
		select {
		case msgs := <-done:
			require.Equal(t, []string{"c"}, bodies(msgs))
		case <-ctx.Done():
			t.Fatal("the reader did not go on in the next second")
		}
	})
}

func TestQuotaAttributesAreChecked(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		for _, c := range []struct {
			cfg   tags.QueueConfig
			field string
		}{
			{tags.QueueConfig{Name: "a", WriteQuotaPerSecond: i32(-1)}, "write_quota_per_second"},
			{tags.QueueConfig{Name: "a", ReadQuotaPerSecond: i32(tags.MaxQuotaPerSecond + 1)}, "read_quota_per_second"},
		} {
			_, err := b.s.CreateQueue(b.ctx, c.cfg)
			requireReason(t, err, tags.ReasonInvalidArgumentRange)
			require.Equal(t, c.field, mustError(t, err).Field)
		}
		b.queue("q")
		_, err := b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{ReadQuotaPerSecond: i32(-5)})
		requireReason(t, err, tags.ReasonInvalidArgumentRange)
		_, err = b.s.CreateTag(b.ctx, "q", tags.TagConfig{Name: "t", ReadQuotaPerSecond: i32(-1)})
		requireReason(t, err, tags.ReasonInvalidArgumentRange)
		require.Equal(t, "read_quota_per_second", mustError(t, err).Field)

		q, err := b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{WriteQuotaPerSecond: i32(100), ReadQuotaPerSecond: i32(50)})
		require.NoError(t, err)
		require.Equal(t, int32(100), q.WriteQuotaPerSecond)
		require.Equal(t, int32(50), q.ReadQuotaPerSecond)
	})
}

// The fast send path (plain XADDs, then sendpost.lua) takes back what is
// over the write quota. On miniredis, whose TIME the test sets, the next
// second is driven too; on Redis one batch is all that is sure to fall in
// one second.
func TestWriteQuotaOnTheFastPath(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		prod := prodStore(t, b)
		b.queue("q", func(c *tags.QueueConfig) { c.WriteQuotaPerSecond = i32(3) })
		res, err := prod.Send(b.ctx, "q", outMsgs("a", "b", "c", "d", "e"))
		require.NoError(t, err)
		for i, r := range res {
			if i < 3 {
				require.NoError(t, r.Err)
			} else {
				requireReason(t, r.Err, tags.ReasonQuotaExceeded)
				require.Equal(t, tags.QuotaWrite, mustError(t, r.Err).Metadata["quota"])
			}
		}
		b.requireSizes("q", 3)
		require.Equal(t, []string{"a", "b", "c"}, bodies(b.receive("q", "", 10)))
	})
}

func TestWriteQuotaFastPathNextSecondOnMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	b := newBundle(t, rdb, true)
	prod := prodStore(t, b)
	b.queue("q", func(c *tags.QueueConfig) { c.WriteQuotaPerSecond = i32(2) })
	start := time.Date(2030, 1, 1, 0, 0, 0, 300e6, time.UTC)
	m.SetTime(start)

	res, err := prod.Send(b.ctx, "q", outMsgs("a", "b", "c"))
	require.NoError(t, err)
	require.NoError(t, res[1].Err)
	requireQuotaError(t, res[2].Err, tags.QuotaWrite, 2, 700)
	// Known spent in this process: refused without a round trip.
	_, _, spentNow := prod.spentFor(writeQuotaKey("q"))
	require.True(t, spentNow)
	calls := m.CommandCount()
	res, err = prod.Send(b.ctx, "q", outMsgs("d"))
	require.NoError(t, err)
	requireReason(t, res[0].Err, tags.ReasonQuotaExceeded)
	require.Equal(t, calls, m.CommandCount(), "no command for a send refused from the cache")

	// The next second of Redis's clock (the process forgets what it knew:
	// its own clock is not the one the test drives).
	m.SetTime(start.Add(time.Second))
	prod.spentQuotas.Clear()
	res, err = prod.Send(b.ctx, "q", outMsgs("e", "f", "g"))
	require.NoError(t, err)
	require.NoError(t, res[1].Err)
	requireReason(t, res[2].Err, tags.ReasonQuotaExceeded)
	require.Equal(t, []string{"a", "b", "e", "f"}, bodies(b.receive("q", "", 10)))
}
