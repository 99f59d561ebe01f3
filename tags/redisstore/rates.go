package redisstore

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/tags"
)

// Rates over time (tags.RateStorage). One process at a time, whichever
// holds the rates lease (in <prefix>:rates, renewed every tick, passed on
// within ratesLeaseTTL when its holder dies, at once when it stops),
// samples the queues' counters every tags.RatesResolution, on ticks
// aligned to it on Redis's clock: one script per queue visited
// (scripts/rates.lua), pipelined 200 queues a round trip; a queue idle for
// a minute is visited once a minute (see ratesIdleEvery). A queue whose
// counters moved gets a sample, the differences since the last, pushed
// onto its series (<prefix>:{Q}:r, a list capped at ratesSamples,
// expiring an hour after its last push); an idle queue gets no write. The
// last counters stay in <prefix>:{Q}:rs, so a replica taking the lease
// over continues the series; a sample covers the time since the queue's
// previous visit (its rate is its mean over it). Both keys are the
// queue's, in its slot, deleted with it.
//
// Memory (Redis 7.0, MEMORY USAGE): an idle queue with two tags costs its
// rs hash, 200-350 bytes; a busy one adds at most ratesSamples samples of
// about 20 bytes plus 10 and its name per tag that moved (two tags
// "default" and "audit": 55 bytes a sample, 20 KB a queue busy all hour).
//
// Cost: see README, "Rates over time", for W6's figures.

const (
	ratesSamples  = int(tags.MaxRatesWindow / tags.RatesResolution)
	ratesLeaseTTL = 3 * tags.RatesResolution
	ratesTTL      = tags.MaxRatesWindow + 2*tags.RatesResolution
	ratesBatch    = 200
)

func (s *Store) ratesKey() string { return s.prefix + ":rates" }

// ratesLoop samples on every tick while this process holds the lease.
func (s *Store) ratesLoop() {
	defer s.done.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.stop
		cancel()
	}()
	res := tags.RatesResolution
	var failing bool
	var skew time.Duration // Redis's clock minus this one's, as last read
	for {
		// Just past the next tick on Redis's clock, which decides the tick.
		wait := res - time.Duration(time.Now().Add(skew).UnixNano())%res + 100*time.Millisecond
		select {
		case <-s.stop:
			return // Close gives the lease up
		case <-time.After(wait):
		}
		now, err := s.rdb.Time(ctx).Result()
		if err == nil {
			skew = time.Until(now)
			_, err = s.SampleRates(ctx, now)
		}
		if err != nil && ctx.Err() == nil && !failing {
			s.log.Warn("rates over time: sampling failed (retried every tick; a gap is spread over the next sample)", "err", err)
		}
		failing = err != nil
	}
}

// SampleRates takes the tick of now (Redis's clock: the loop reads TIME;
// tests drive it), now truncated to the resolution, when this process
// holds, or can take, the rates lease, and says whether it did. A tick
// already sampled is not sampled again.
func (s *Store) SampleRates(ctx context.Context, now time.Time) (bool, error) {
	res := tags.RatesResolution
	tick := now.Truncate(res).UnixMilli()
	held, err := scriptRatesLease.Run(ctx, s.rdb, []string{s.ratesKey()}, s.owner, ratesLeaseTTL.Milliseconds(), now.UnixMilli()).Int64()
	if err != nil {
		return false, mapErr(err, "", "")
	}
	if held < 0 {
		return false, nil // another process samples
	}
	s.ratesHeld.Store(true)
	prev := held // the last tick sampled in full (0: none)
	if prev >= tick {
		return false, nil
	}
	m := &s.ratesMemo
	m.mu.Lock()
	defer m.mu.Unlock()
	all := m.visited == nil || m.last != prev
	if all {
		// Another process sampled the last tick (or none did): what this
		// one remembers is stale. Visit every queue once.
		m.visited, m.moved = map[string]int64{}, map[string]int64{}
	}
	m.visits = 0
	start := "-"
	for {
		names, err := s.rdb.ZRangeByLex(ctx, s.indexKey(), &redis.ZRangeBy{Min: start, Max: "+", Count: ratesBatch}).Result()
		if err != nil {
			return false, mapErr(err, "", "")
		}
		var visit []string
		var since []int64
		for _, q := range names {
			slot := ratesSlot(q)
			if !all && tick-m.moved[q] > ratesActive.Milliseconds() && ratesTickIndex(tick)%ratesIdleEvery != slot {
				continue // idle: visited at its own tick of the minute
			}
			// Its previous visit: by this process (remembered), else at
			// the latest of its own ticks (every process visits every
			// queue then): at worst earlier than it was, so a sample is
			// spread over more time than it took, never less.
			last := max(m.visited[q], ratesSlotTick(prev, slot))
			visit = append(visit, q)
			since = append(since, last)
		}
		if err := s.sampleQueues(ctx, visit, since, tick); err != nil {
			return false, err
		}
		if len(names) < ratesBatch {
			break
		}
		start = "(" + names[len(names)-1]
	}
	if err := s.rdb.HSet(ctx, s.ratesKey(), "t", tick).Err(); err != nil {
		return false, mapErr(err, "", "")
	}
	m.last = tick
	if ratesTickIndex(tick)%ratesIdleEvery == 0 { // forget queues idle for a minute (and deleted ones)
		for q, v := range m.visited {
			if tick-v > ratesActive.Milliseconds() {
				delete(m.visited, q)
				delete(m.moved, q)
			}
		}
	}
	return true, nil
}

// Idle queues: a queue whose counters have not moved for ratesActive is
// visited once every ratesIdleEvery ticks (a minute), at its own tick of
// the minute (ratesSlot), rather than every tick: 5,000 idle queues cost
// 83 script calls a second, not 500. A change in an idle queue shows at
// its next visit, spread over the minute since the one before; from then
// on the queue is visited every tick again.
const (
	ratesIdleEvery = 6
	ratesActive    = ratesIdleEvery * tags.RatesResolution
)

// ratesMemo is what the sampler remembers between its ticks.
type ratesMemo struct {
	mu      sync.Mutex
	last    int64            // the last tick this process sampled in full
	visited map[string]int64 // queue -> the last tick it was visited
	moved   map[string]int64 // queue -> the last tick its counters moved
	visits  int              // queues the last tick visited (tests)
}

var errRatesReply = errors.New("redisstore: the rates script answered other than {partitions, wrote}")

// ratesSlot is queue q's tick of the minute.
func ratesSlot(q string) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(q))
	return int64(h.Sum32() % ratesIdleEvery)
}

func ratesTickIndex(tick int64) int64 { return tick / tags.RatesResolution.Milliseconds() }

// ratesSlotTick is the latest tick at or before prev that is slot's (0
// when prev is 0).
func ratesSlotTick(prev, slot int64) int64 {
	if prev <= 0 {
		return 0
	}
	i := ratesTickIndex(prev)
	i -= ((i-slot)%ratesIdleEvery + ratesIdleEvery) % ratesIdleEvery
	return i * tags.RatesResolution.Milliseconds()
}

// leaveRates gives the rates lease up, if this process took it, so that
// another takes over at its next tick (a clean stop).
func (s *Store) leaveRates() {
	if !s.ratesHeld.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = scriptRatesLease.Run(ctx, s.rdb, []string{s.ratesKey()}, s.owner, 0, 0).Err()
}

// sampleQueues runs the rates script on each named queue (since: its
// previous visit), and on the other partitions of the partitioned ones,
// and notes which were visited and which moved.
func (s *Store) sampleQueues(ctx context.Context, names []string, since []int64, tick int64) error {
	if len(names) == 0 {
		return nil
	}
	m := &s.ratesMemo
	call := func(q string, last int64) scriptCall {
		k := s.qkeys(q)
		return scriptCall{keys: []string{k.meta, k.tags, k.filters, k.rates, k.ratesLast},
			args: []any{tick, last, ratesSamples, ratesTTL.Milliseconds(), k.base}}
	}
	calls := make([]scriptCall, len(names))
	for i, q := range names {
		calls[i] = call(q, since[i])
	}
	cmds, err := s.evalPipelined(ctx, scriptRates, calls)
	if err != nil {
		return err
	}
	var parts []scriptCall
	var partOf []string
	for i, c := range cmds {
		np, moved, err := ratesReply(c)
		if err != nil {
			return mapErr(err, names[i], "")
		}
		m.visits++
		m.visited[names[i]] = tick
		if moved {
			m.moved[names[i]] = tick
		}
		for k := 1; k < np; k++ {
			parts = append(parts, call(partName(names[i], k), since[i]))
			partOf = append(partOf, names[i])
		}
	}
	if len(parts) == 0 {
		return nil
	}
	cmds, err = s.evalPipelined(ctx, scriptRates, parts)
	if err != nil {
		return err
	}
	for i, c := range cmds {
		_, moved, err := ratesReply(c)
		if err != nil {
			return mapErr(err, partOf[i], "")
		}
		if moved {
			m.moved[partOf[i]] = tick // a partition moved: the queue did
		}
	}
	return nil
}

// ratesReply reads a rates.lua reply: the queue's partition count and
// whether its counters moved since the last sample.
func ratesReply(c *redis.Cmd) (partitions int, moved bool, err error) {
	res, err := c.Int64Slice()
	if err == nil && len(res) != 2 {
		err = errRatesReply
	}
	if err != nil {
		return 0, false, err
	}
	return int(res[0]), res[1] == 1, nil
}

// QueueRates is the queue's rates over the last window (tags.RateStorage),
// on Redis's clock.
func (s *Store) QueueRates(ctx context.Context, queue, tag string, window time.Duration) (*tags.Rates, error) {
	return s.queueRates(ctx, queue, tag, window, time.Time{})
}

// queueRates is QueueRates at now (zero: Redis TIME).
func (s *Store) queueRates(ctx context.Context, queue, tag string, window time.Duration, now time.Time) (*tags.Rates, error) {
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if tag != "" {
		if e := tags.CheckName("tag", "tag", tag); e != nil {
			return nil, e
		}
	}
	if window < tags.MinRatesWindow || window > tags.MaxRatesWindow || window%time.Second != 0 {
		return nil, tags.Invalid(tags.ReasonInvalidArgumentRange, "window_seconds",
			"window_seconds must be from %d to %d", int(tags.MinRatesWindow.Seconds()), int(tags.MaxRatesWindow.Seconds()))
	}
	n, err := s.partitions(ctx, queue)
	if err != nil {
		return nil, err
	}
	k := s.qkeys(queue)
	pipe := s.rdb.Pipeline()
	clock := pipe.Time(ctx)
	exists := pipe.Exists(ctx, k.meta)
	tagNames := pipe.HKeys(ctx, k.tags)
	series := make([]*redis.StringSliceCmd, n)
	for p := range series {
		series[p] = pipe.LRange(ctx, s.qkeys(partName(queue, p)).rates, 0, -1)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, mapErr(err, queue, "")
	}
	if exists.Val() == 0 {
		return nil, tags.QueueNotFound(queue)
	}
	names := tagNames.Val()
	sort.Strings(names)
	if tag != "" {
		if !slices.Contains(names, tag) {
			return nil, tags.TagNotFound(queue, tag)
		}
		names = []string{tag}
	}
	var samples []string
	for _, c := range series {
		samples = append(samples, c.Val()...)
	}
	if now.IsZero() {
		now = clock.Val()
	}
	return ratesOf(samples, names, now, window), nil
}

// ratesOf spreads each sample's differences over the intervals of the
// window (ending at now truncated to the resolution) that it covers, in
// proportion, and makes them rates. Samples it cannot parse are skipped.
func ratesOf(samples, tagNames []string, now time.Time, window time.Duration) *tags.Rates {
	res := tags.RatesResolution
	end := now.Truncate(res)
	nb := int(window / res)
	start := end.Add(-time.Duration(nb) * res).UnixMilli()
	resMs := float64(res.Milliseconds())
	type sums struct{ in, rcv, del, dead []float64 }
	mk := func() *sums {
		return &sums{make([]float64, nb), make([]float64, nb), make([]float64, nb), make([]float64, nb)}
	}
	queue := mk()
	perTag := make(map[string]*sums, len(tagNames))
	for _, t := range tagNames {
		perTag[t] = mk()
	}
	for _, raw := range samples {
		fields := strings.Split(raw, ";")
		head := strings.Fields(fields[0])
		if len(head) != 3 {
			continue
		}
		tick, err1 := strconv.ParseInt(head[0], 10, 64)
		dt, err2 := strconv.ParseInt(head[1], 10, 64)
		added, err3 := strconv.ParseFloat(head[2], 64)
		if err1 != nil || err2 != nil || err3 != nil || dt <= 0 {
			continue
		}
		from := tick - dt
		if tick <= start || from >= start+int64(nb)*res.Milliseconds() {
			continue
		}
		// spread adds v, spread over (from, tick], to the buckets of dst.
		spread := func(dst []float64, v float64) {
			if v == 0 {
				return
			}
			first := max(int((from-start)/res.Milliseconds()), 0)
			for b := first; b < nb; b++ {
				lo, hi := start+int64(b)*res.Milliseconds(), start+int64(b+1)*res.Milliseconds()
				if lo >= tick {
					break
				}
				overlap := min(hi, tick) - max(lo, from)
				if overlap > 0 {
					dst[b] += v * float64(overlap) / float64(dt)
				}
			}
		}
		spread(queue.in, added)
		for _, f := range fields[1:] {
			w := strings.Fields(f)
			if len(w) != 5 {
				continue
			}
			var d [4]float64
			ok := true
			for i := range d {
				v, err := strconv.ParseFloat(w[i+1], 64)
				ok = ok && err == nil && v >= 0
				d[i] = v
			}
			if !ok {
				continue
			}
			spread(queue.rcv, d[1])
			spread(queue.del, d[2])
			spread(queue.dead, d[3])
			if t := perTag[w[0]]; t != nil {
				spread(t.in, d[0])
				spread(t.rcv, d[1])
				spread(t.del, d[2])
				spread(t.dead, d[3])
			}
		}
	}
	points := func(sm *sums) []tags.RatePoint {
		out := make([]tags.RatePoint, nb)
		rate := func(v float64) float64 { return math.Round(v/resMs*1000*1000) / 1000 }
		for b := range out {
			out[b] = tags.RatePoint{Time: time.UnixMilli(start + int64(b+1)*res.Milliseconds()).UTC(),
				In: rate(sm.in[b]), Received: rate(sm.rcv[b]), Deleted: rate(sm.del[b]), Dead: rate(sm.dead[b])}
		}
		return out
	}
	r := &tags.Rates{Resolution: res, End: end.UTC(), Queue: points(queue)}
	for _, t := range tagNames {
		r.Tags = append(r.Tags, tags.TagRates{Tag: t, Points: points(perTag[t])})
	}
	return r
}
