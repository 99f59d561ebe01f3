package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// fakeMemory is an injected INFO memory reading.
type fakeMemory struct {
	mu       sync.Mutex
	readings []MemoryReading
	err      error
}

func (f *fakeMemory) set(rs ...MemoryReading) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.readings = rs
}

func (f *fakeMemory) read(context.Context) ([]MemoryReading, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]MemoryReading(nil), f.readings...), f.err
}

// While Redis is at the memory threshold, sends are refused with
// STORAGE_FULL, whole batches and nothing stored; receives, deletes and
// dead-lettering go on, since they free memory. Below it, sends resume.
func TestMemoryWatchRefusesSendsNearTheLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		mem := &fakeMemory{}
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t),
			TestClock: true, MemoryReader: mem.read, MemoryLimitBytes: 1000})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		ordersWithDLQ(b)
		b.send("orders", "before")

		for _, c := range []struct {
			name    string
			reading MemoryReading
			full    bool
		}{
			{"under 90% of maxmemory", MemoryReading{Used: 899, Max: 1000}, false},
			{"at 90% of maxmemory", MemoryReading{Used: 900, Max: 1000}, true},
			{"no maxmemory, under the absolute limit", MemoryReading{Used: 999}, false},
			{"no maxmemory, at the absolute limit", MemoryReading{Used: 1000}, true},
		} {
			mem.set(c.reading)
			require.NoError(t, s.CheckMemory(b.ctx))
			res, err := s.Send(b.ctx, "orders", []tags.OutMessage{{Body: []byte("x")}, {Body: []byte("y")}})
			if !c.full {
				require.NoError(t, err, c.name)
				require.NoError(t, res[0].Err)
				continue
			}
			requireReason(t, err, tags.ReasonStorageFull)
			e := mustError(t, err)
			require.Equal(t, tags.KindResourceExhausted, e.Kind, c.name)
			require.Equal(t, "orders", e.Metadata["queue"])
			require.Nil(t, res)
		}
		require.EqualValues(t, 5, b.state("orders", "billing").Available, "1 before, and 2 from each send under the limit")

		// Full: the rest of the engine works.
		mem.set(MemoryReading{Used: 950, Max: 1000})
		require.NoError(t, s.CheckMemory(b.ctx))
		got, err := s.Receive(b.ctx, "orders", "billing", tags.ReceiveOptions{MaxMessages: 2, WaitSeconds: i32(0)})
		require.NoError(t, err)
		require.Len(t, got, 2)
		errs, err := s.Delete(b.ctx, "orders", []string{got[0].ReceiptHandle})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		errs, err = s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: got[1].ReceiptHandle}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		require.Equal(t, tags.TagState{Available: 3, ReceivedTotal: 2, DeletedTotal: 1, DeadTotal: 1}, b.state("orders", "billing"))
		require.EqualValues(t, 1, b.state("orders-dlq", "default").Available, "dead-lettered into the DLQ while full")
		require.NoError(t, s.RunJanitor(b.ctx))

		// A failed reading keeps the last verdict; a good one lifts it.
		mem.set(MemoryReading{Used: 10, Max: 1000})
		mem.err = errors.New("connection refused")
		require.Error(t, s.CheckMemory(b.ctx))
		_, err = s.Send(b.ctx, "orders", []tags.OutMessage{{Body: []byte("still full")}})
		requireReason(t, err, tags.ReasonStorageFull)
		mem.err = nil
		require.NoError(t, s.CheckMemory(b.ctx))
		res, err := s.Send(b.ctx, "orders", []tags.OutMessage{{Body: []byte("after")}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	})
}

// A master with no maxmemory and no absolute limit is not watched, and a
// negative ratio turns the watch off.
func TestMemoryWatchOffWithoutALimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		mem := &fakeMemory{}
		mem.set(MemoryReading{Used: 1 << 40})
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true, MemoryReader: mem.read})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		require.NoError(t, s.CheckMemory(b.ctx))
		b.queue("q")
		_, err = s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("x")}})
		require.NoError(t, err)

		mem.set(MemoryReading{Used: 1 << 40, Max: 1 << 30})
		off, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true,
			MemoryReader: mem.read, MemoryLimitRatio: -1})
		require.NoError(t, err)
		t.Cleanup(func() { _ = off.Close() })
		require.NoError(t, off.CheckMemory(b.ctx))
		_, err = off.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("x")}})
		require.NoError(t, err)
		require.NoError(t, s.CheckMemory(b.ctx))
		_, err = s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("x")}})
		requireReason(t, err, tags.ReasonStorageFull)
	})
}

// The real reading: INFO memory of the Redis under test (miniredis has
// none: the watch reports that and stays off).
func TestMemoryWatchReadsINFO(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		rs, err := readRedisMemory(b.rdb)(b.ctx)
		if err != nil {
			require.ErrorIs(t, err, errNoMemoryInfo)
			return
		}
		require.NotEmpty(t, rs)
		for _, r := range rs {
			require.Positive(t, r.Used)
			require.GreaterOrEqual(t, r.Max, int64(0))
		}
	})
}

// On a cluster, a master at its threshold refuses sends to the queues it
// holds only; queues on the other masters take sends.
func TestMemoryWatchRefusesOnlyTheFullMasterOfACluster(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		cc, ok := b.rdb.(*redis.ClusterClient)
		if !ok {
			t.Skip("a cluster only (TAGQ_TEST_REDIS_CLUSTER)")
		}
		mem := &fakeMemory{}
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t),
			TestClock: true, MemoryReader: mem.read})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		master := func(q string) string {
			n, err := cc.MasterForKey(b.ctx, s.qkeys(q).meta)
			require.NoError(t, err)
			return n.Options().Addr
		}
		full, other := "q0", ""
		for i := 1; i < 100 && other == ""; i++ {
			if q := fmt.Sprintf("q%d", i); master(q) != master(full) {
				other = q
			}
		}
		require.NotEmpty(t, other, "no two queues on different masters")
		b.queue(full)
		b.queue(other)
		mem.set(MemoryReading{Node: master(full), Used: 95, Max: 100}, MemoryReading{Node: master(other), Used: 10, Max: 100})
		require.NoError(t, s.CheckMemory(b.ctx))
		_, err = s.Send(b.ctx, full, []tags.OutMessage{{Body: []byte("x")}})
		requireReason(t, err, tags.ReasonStorageFull)
		res, err := s.Send(b.ctx, other, []tags.OutMessage{{Body: []byte("x")}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	})
}

// The background watch (Start) reads every MemoryCheckInterval: a reading
// over the threshold refuses sends from the next tick, and one under it
// takes them again. Time is the synctest bubble's.
func TestMemoryWatchReadsOnItsInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := syncBundle(t)
		mem := &fakeMemory{}
		mem.set(MemoryReading{Used: 10, Max: 100})
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t),
			MemoryReader: mem.read, MemoryCheckInterval: 5 * time.Second})
		require.NoError(t, err)
		s.Start()
		t.Cleanup(func() { _ = s.Close() })
		b.queue("q")
		send := func() error {
			_, err := s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("x")}})
			return err
		}
		synctest.Wait()
		require.NoError(t, send())
		mem.set(MemoryReading{Used: 95, Max: 100})
		time.Sleep(4 * time.Second) // the bubble's clock
		synctest.Wait()
		require.NoError(t, send(), "not read again before the interval")
		time.Sleep(time.Second)
		synctest.Wait()
		requireReason(t, send(), tags.ReasonStorageFull)
		mem.set(MemoryReading{Used: 50, Max: 100})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.NoError(t, send())
	})
}
