package redisstore

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// ratesTick0 is a tick after the queue clock of anything a test made
// (ticks are driven: SampleRates takes the time it is given).
func ratesTick0() time.Time {
	return time.Now().Truncate(tags.RatesResolution).Add(time.Minute)
}

// ratesTickBefore is a tick after ratesTick0 whose next tick is queue
// q's own of the minute (an idle queue, as a queue is until its counters
// move, is visited at its own tick).
func ratesTickBefore(q string) time.Time {
	t := ratesTick0()
	for ratesTickIndex(t.Add(tags.RatesResolution).UnixMilli())%ratesIdleEvery != ratesSlot(q) {
		t = t.Add(tags.RatesResolution)
	}
	return t
}

func sample(t *testing.T, b *bundle, s *Store, at time.Time) bool {
	t.Helper()
	ok, err := s.SampleRates(b.ctx, at)
	require.NoError(t, err)
	return ok
}

func rates(t *testing.T, b *bundle, q, tag string, at time.Time, window time.Duration) *tags.Rates {
	t.Helper()
	r, err := b.s.queueRates(b.ctx, q, tag, window, at)
	require.NoError(t, err)
	return r
}

// pointAt is the point of series ending at at.
func pointAt(t *testing.T, series []tags.RatePoint, at time.Time) tags.RatePoint {
	t.Helper()
	for _, p := range series {
		if p.Time.Equal(at) {
			return p
		}
	}
	t.Fatalf("no point at %v", at)
	return tags.RatePoint{}
}

func tagSeries(t *testing.T, r *tags.Rates, tag string) []tags.RatePoint {
	t.Helper()
	for _, tr := range r.Tags {
		if tr.Tag == tag {
			return tr.Points
		}
	}
	t.Fatalf("no series for tag %q", tag)
	return nil
}

func requireNoNegative(t *testing.T, r *tags.Rates) {
	t.Helper()
	all := append([]tags.RatePoint{}, r.Queue...)
	for _, tr := range r.Tags {
		all = append(all, tr.Points...)
	}
	for _, p := range all {
		require.GreaterOrEqual(t, p.In, 0.0, "%+v", p)
		require.GreaterOrEqual(t, p.Received, 0.0, "%+v", p)
		require.GreaterOrEqual(t, p.Deleted, 0.0, "%+v", p)
		require.GreaterOrEqual(t, p.Dead, 0.0, "%+v", p)
	}
}

func TestRates_DifferencesOverEachIntervalAndGaps(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", func(c *tags.QueueConfig) {
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 5}
		})
		b.tag("q", "audit")
		t0 := ratesTickBefore("q")
		require.True(t, sample(t, b, b.s, t0), "the first sample takes the lease and records the counters")

		bodies := make([]string, 20)
		for i := range bodies {
			bodies[i] = fmt.Sprint("m", i)
		}
		b.send("q", bodies...)
		got := b.receive("q", "default", 10)
		require.Len(t, got, 10)
		b.del("q", got[:5]...)
		errs, err := b.s.DeadLetter(b.ctx, "q", []tags.DeadRequest{{ReceiptHandle: got[5].ReceiptHandle}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		t1 := t0.Add(10 * time.Second)
		require.True(t, sample(t, b, b.s, t1))
		require.False(t, sample(t, b, b.s, t1), "a tick is sampled once")

		r := rates(t, b, "q", "", t1.Add(3*time.Second), time.Minute)
		require.Equal(t, tags.RatesResolution, r.Resolution)
		require.Len(t, r.Queue, 6, "a minute of 10 s points")
		require.True(t, r.Queue[5].Time.Equal(t1), "the last point ends at the last tick")
		require.Equal(t, tags.RatePoint{Time: t1.UTC(), In: 2, Received: 1, Deleted: 0.5, Dead: 0.1}, r.Queue[5])
		require.Equal(t, tags.RatePoint{Time: t1.UTC(), In: 2, Received: 1, Deleted: 0.5, Dead: 0.1}, pointAt(t, tagSeries(t, r, "default"), t1))
		require.Equal(t, tags.RatePoint{Time: t1.UTC(), In: 2}, pointAt(t, tagSeries(t, r, "audit"), t1))
		require.Equal(t, tags.RatePoint{Time: t0.UTC()}, pointAt(t, r.Queue, t0), "before: nothing moved")

		// Idle ticks write nothing; a gap is a zero rate.
		n, err := b.rdb.LLen(b.ctx, b.s.qkeys("q").rates).Result()
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		for i := 2; i <= 4; i++ {
			require.True(t, sample(t, b, b.s, t0.Add(time.Duration(i)*10*time.Second)))
		}
		n, err = b.rdb.LLen(b.ctx, b.s.qkeys("q").rates).Result()
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "idle queues get no writes")
		b.send("q", bodies[:10]...)
		t5 := t0.Add(50 * time.Second)
		require.True(t, sample(t, b, b.s, t5))
		r = rates(t, b, "q", "", t5, time.Minute)
		require.Equal(t, 1.0, pointAt(t, r.Queue, t5).In, "only the interval it happened in")
		require.Equal(t, 0.0, pointAt(t, r.Queue, t5.Add(-10*time.Second)).In)

		// Ticks nobody sampled: the next sample is spread over them.
		b.send("q", bodies...)
		t9 := t5.Add(40 * time.Second)
		require.True(t, sample(t, b, b.s, t9))
		r = rates(t, b, "q", "default", t9, time.Minute)
		require.Len(t, r.Tags, 1, "one tag asked for")
		for i := 0; i < 4; i++ {
			at := t9.Add(-time.Duration(i) * 10 * time.Second)
			require.Equal(t, 0.5, pointAt(t, r.Queue, at).In, at)
			require.Equal(t, 0.5, pointAt(t, r.Tags[0].Points, at).In, at)
		}
		requireNoNegative(t, r)
	})
}

func TestRates_ResetsNeverGoNegative(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.tag("q", "f", func(c *tags.TagConfig) {
			c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "k"}}}
		})
		send := func(n int) {
			for i := 0; i < n; i++ {
				b.sendMsgs("q", tags.OutMessage{Body: []byte("x"), Attributes: map[string]tags.Attribute{"k": {String: "v"}}})
			}
		}
		t0 := ratesTickBefore("q")
		sample(t, b, b.s, t0)
		send(30)
		b.del("q", b.receive("q", "default", 10)...)
		sample(t, b, b.s, t0.Add(10*time.Second))

		// The tag made anew counts from 0; a purge resets the filtered
		// tag's admissions; the queue made anew starts a new series.
		require.NoError(t, b.s.DeleteTag(b.ctx, "q", "default"))
		b.tag("q", "default")
		_, err := b.s.PurgeQueue(b.ctx, "q")
		require.NoError(t, err)
		send(3)
		b.del("q", b.receive("q", "default", 2)...)
		t2 := t0.Add(20 * time.Second)
		sample(t, b, b.s, t2)
		r := rates(t, b, "q", "", t2, time.Minute)
		requireNoNegative(t, r)
		require.Equal(t, 0.2, pointAt(t, tagSeries(t, r, "default"), t2).Deleted, "counted from the new tag's 0")
		require.Equal(t, 0.3, pointAt(t, tagSeries(t, r, "f"), t2).In, "counted from the purge's 0")

		require.NotEmpty(t, b.keys(b.prefix+":{q}:r*"), "the pattern finds the series")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q", true))
		require.Empty(t, b.keys(b.prefix+":{q}:r*"), "the series goes with the queue")
		_, err = b.s.queueRates(b.ctx, "q", "", time.Hour, t2)
		requireReason(t, err, tags.ReasonQueueNotFound)
		b.queue("q")
		send(2)
		t3 := t2.Add(10 * time.Second)
		sample(t, b, b.s, t3)
		send(1)
		t4 := t3.Add(10 * time.Second)
		sample(t, b, b.s, t4)
		r = rates(t, b, "q", "", t4, time.Minute)
		requireNoNegative(t, r)
		require.Equal(t, 0.1, pointAt(t, r.Queue, t4).In)
		require.Equal(t, 0.0, pointAt(t, r.Queue, t2).In, "the old queue's series went with it")
	})
}

func TestRates_SeriesIsBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		t0 := ratesTickBefore("q")
		sample(t, b, b.s, t0)
		n := ratesSamples + 15
		for i := 1; i <= n; i++ {
			b.send("q", "m")
			sample(t, b, b.s, t0.Add(time.Duration(i)*tags.RatesResolution))
		}
		l, err := b.rdb.LLen(b.ctx, b.s.qkeys("q").rates).Result()
		require.NoError(t, err)
		require.EqualValues(t, ratesSamples, l)
		ttl, err := b.rdb.PTTL(b.ctx, b.s.qkeys("q").rates).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, time.Hour, "kept an hour past its last sample")
		require.LessOrEqual(t, ttl, ratesTTL)
		end := t0.Add(time.Duration(n) * tags.RatesResolution)
		r := rates(t, b, "q", "", end, time.Hour)
		require.Len(t, r.Queue, ratesSamples)
		for _, p := range r.Queue {
			require.Equal(t, 0.1, p.In, p.Time)
		}
	})
}

func TestRates_OneSamplerAtATimeAndTakeover(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		a, other := b.s, otherReplica(t, b)
		b.queue("q")
		t0 := ratesTickBefore("q")
		require.True(t, sample(t, b, a, t0))
		b.send("q", "1", "2", "3")
		require.False(t, sample(t, b, other, t0.Add(10*time.Second)), "the lease is a's")
		n, err := b.rdb.LLen(b.ctx, b.s.qkeys("q").rates).Result()
		require.NoError(t, err)
		require.Zero(t, n, "only the holder writes")
		require.True(t, sample(t, b, a, t0.Add(10*time.Second)))
		// a stops sampling: its lease runs out and other continues the series.
		b.send("q", "4", "5", "6")
		require.False(t, sample(t, b, other, t0.Add(30*time.Second)), "not yet expired")
		t4 := t0.Add(40 * time.Second)
		require.True(t, sample(t, b, other, t4))
		require.False(t, sample(t, b, a, t0.Add(50*time.Second)), "now other's")
		r := rates(t, b, "q", "", t4, time.Minute)
		require.Equal(t, 0.3, pointAt(t, r.Queue, t0.Add(10*time.Second)).In)
		for _, at := range []time.Time{t0.Add(20 * time.Second), t0.Add(30 * time.Second), t4} {
			require.Equal(t, 0.1, pointAt(t, r.Queue, at).In, "spread since a's last tick")
		}
		// A clean stop gives the lease up at once.
		require.NoError(t, other.Close())
		require.True(t, sample(t, b, a, t0.Add(50*time.Second)))
	})
}

func TestRates_BadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		_, err := b.s.QueueRates(b.ctx, "nope", "", time.Hour)
		requireReason(t, err, tags.ReasonQueueNotFound)
		_, err = b.s.QueueRates(b.ctx, "q", "nope", time.Hour)
		requireReason(t, err, tags.ReasonTagNotFound)
		for _, w := range []time.Duration{0, time.Second, 2 * time.Hour, 90*time.Second + time.Millisecond} {
			_, err = b.s.QueueRates(b.ctx, "q", "", w)
			requireReason(t, err, tags.ReasonInvalidArgumentRange)
			var e *tags.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "window_seconds", e.Field)
		}
		_, err = b.s.QueueRates(b.ctx, "q{", "", time.Hour)
		requireReason(t, err, tags.ReasonInvalidName)
		r, err := b.s.QueueRates(b.ctx, "q", "", time.Hour)
		require.NoError(t, err)
		require.Len(t, r.Queue, 360)
		require.Len(t, r.Tags, 1)
	})
}

// The sampling loop on two started stores, on a fake clock (synctest):
// both wake on every tick, one holds the lease and samples; when it
// stops, the other continues the series at its next tick.
func TestRates_LoopOneSamplerThenTheOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := syncBundle(t)
		stores := []*Store{b.s, otherReplica(t, b)}
		stores[0].Start()
		stores[1].Start()
		// A queue whose own tick of the minute is the second tick (20 s):
		// idle until then (its counters never moved).
		q := "q"
		for i := 0; ratesSlot(q) != ratesTickIndex(time.Now().Truncate(tags.RatesResolution).Add(2*tags.RatesResolution).UnixMilli())%ratesIdleEvery; i++ {
			q = fmt.Sprint("q", i)
		}
		b.queue(q)
		time.Sleep(tags.RatesResolution + time.Second) // the tick at 10 s recorded q's counters
		b.send(q, "1", "2", "3", "4", "5", "6", "7", "8", "9", "10")
		time.Sleep(tags.RatesResolution)
		holder, err := b.rdb.HGet(b.ctx, b.s.ratesKey(), "o").Result()
		require.NoError(t, err)
		if holder != stores[0].owner {
			stores[0], stores[1] = stores[1], stores[0]
		}
		h, o := stores[0], stores[1]
		require.Equal(t, h.owner, holder)
		r, err := o.QueueRates(b.ctx, q, "", time.Minute)
		require.NoError(t, err)
		require.Equal(t, 1.0, r.Queue[len(r.Queue)-1].In, "%+v", r.Queue)
		n, err := b.rdb.LLen(b.ctx, b.s.qkeys(q).rates).Result()
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "one sample for the tick, not one per store")

		require.NoError(t, h.Close())
		b.send(q, "1", "2", "3", "4", "5")
		time.Sleep(tags.RatesResolution)
		holder, err = b.rdb.HGet(b.ctx, b.s.ratesKey(), "o").Result()
		require.NoError(t, err)
		require.Equal(t, o.owner, holder, "the other took over at its next tick")
		r, err = o.QueueRates(b.ctx, q, "", time.Minute)
		require.NoError(t, err)
		require.Equal(t, 0.5, r.Queue[len(r.Queue)-1].In, "%+v", r.Queue)
		require.Equal(t, 1.0, r.Queue[len(r.Queue)-2].In)
		require.NoError(t, o.Close())
	})
}

// Idle queues are visited once a minute, each at its own tick; one that
// moves again shows at its visit, spread over the minute, and is visited
// every tick from then on.
func TestRates_IdleQueuesVisitedOnceAMinute(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		const n = 24
		for i := 0; i < n; i++ {
			b.queue(fmt.Sprint("q", i))
		}
		t0 := ratesTick0()
		at := func(i int) time.Time { return t0.Add(time.Duration(i) * tags.RatesResolution) }
		require.True(t, sample(t, b, b.s, at(0)))
		require.Equal(t, n, b.s.ratesMemo.visits, "the first tick visits every queue")
		total := 0
		for i := 1; i <= ratesIdleEvery; i++ {
			require.True(t, sample(t, b, b.s, at(i)))
			want := 0
			for q := 0; q < n; q++ {
				if ratesSlot(fmt.Sprint("q", q)) == ratesTickIndex(at(i).UnixMilli())%ratesIdleEvery {
					want++
				}
			}
			require.Equal(t, want, b.s.ratesMemo.visits, "tick %d visits the idle queues of its slot", i)
			total += b.s.ratesMemo.visits
		}
		require.Equal(t, n, total, "each idle queue once in the minute")

		// q0 moves: seen at its own tick, spread since its visit before.
		b.send("q0", "1", "2", "3", "4", "5", "6")
		slot := ratesSlot("q0")
		i := ratesIdleEvery + 1
		for ratesTickIndex(at(i).UnixMilli())%ratesIdleEvery != slot {
			require.True(t, sample(t, b, b.s, at(i)))
			i++
		}
		require.True(t, sample(t, b, b.s, at(i)))
		r := rates(t, b, "q0", "", at(i), 2*time.Minute)
		for j := 0; j < ratesIdleEvery; j++ {
			require.Equal(t, 0.1, pointAt(t, r.Queue, at(i-j)).In, "spread over the minute: %+v", r.Queue)
		}
		require.Equal(t, 0.0, pointAt(t, r.Queue, at(i-ratesIdleEvery)).In)
		// Visited every tick again.
		b.send("q0", "1")
		require.True(t, sample(t, b, b.s, at(i+1)))
		r = rates(t, b, "q0", "", at(i+1), time.Minute)
		require.Equal(t, 0.1, pointAt(t, r.Queue, at(i+1)).In)
	})
}

func TestRates_SlotTick(t *testing.T) {
	res := tags.RatesResolution.Milliseconds()
	for slot := int64(0); slot < ratesIdleEvery; slot++ {
		for idx := int64(100); idx < 112; idx++ {
			got := ratesSlotTick(idx*res, slot)
			require.Equal(t, slot, ratesTickIndex(got)%ratesIdleEvery)
			require.LessOrEqual(t, got, idx*res)
			require.Greater(t, got, (idx-ratesIdleEvery)*res)
		}
	}
	require.Zero(t, ratesSlotTick(0, 3))
}

// A partitioned queue's rates add up its partitions' (each sampled in its
// own slot, on the same ticks); its series go with it.
func TestRates_PartitionedQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("p", func(c *tags.QueueConfig) { c.Partitions = i32(3) })
		t0 := ratesTickBefore("p")
		require.True(t, sample(t, b, b.s, t0))
		for i := 0; i < 30; i++ {
			b.send("p", fmt.Sprint("m", i))
		}
		var got []tags.Message
		for len(got) < 10 {
			got = append(got, b.receive("p", "default", 10-len(got))...)
		}
		b.del("p", got...)
		t1 := t0.Add(tags.RatesResolution)
		require.True(t, sample(t, b, b.s, t1))
		r := rates(t, b, "p", "", t1, time.Minute)
		require.Equal(t, tags.RatePoint{Time: t1.UTC(), In: 3, Received: 1, Deleted: 1}, pointAt(t, r.Queue, t1))
		require.Equal(t, tags.RatePoint{Time: t1.UTC(), In: 3, Received: 1, Deleted: 1}, pointAt(t, tagSeries(t, r, "default"), t1))
		written := 0
		for k := 0; k < 3; k++ {
			n, err := b.rdb.LLen(b.ctx, b.s.qkeys(partName("p", k)).rates).Result()
			require.NoError(t, err)
			written += int(n)
		}
		require.Greater(t, written, 1, "the partitions keep their own series")
		require.NotEmpty(t, b.keys(b.prefix+":{p}:r*"), "the pattern finds the series")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "p", true))
		for k := 0; k < 3; k++ {
			require.Empty(t, b.keys(b.prefix+":{"+partName("p", k)+"}:r*"))
		}
	})
}
