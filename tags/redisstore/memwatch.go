package redisstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags"
)

// The memory watch. A Redis that runs out of memory fails every write of
// every queue at once (OOM errors, or evicted keys: lost messages). The
// store reads each Redis master's memory (INFO memory: used_memory,
// maxmemory) every MemoryCheckInterval and, while a master is at or over
// its threshold, refuses sends to the queues it holds with
// RESOURCE_EXHAUSTED / STORAGE_FULL. Receives, deletes, visibility
// changes, dead-lettering and trims go on: they are what frees memory.

// MemoryReading is one Redis master's memory use.
type MemoryReading struct {
	// Node names the master (its address; "" for the only one). Never
	// shown to clients.
	Node string
	// Used is used_memory; Max is maxmemory (0: none set).
	Used, Max int64
}

// DefaultMemoryLimitRatio is the share of maxmemory at which sends stop.
const DefaultMemoryLimitRatio = 0.9

// memWatch is the watch's configuration and last verdict.
type memWatch struct {
	ratio    float64 // of maxmemory; <= 0: off
	absolute int64   // limit for a master without maxmemory; 0: none
	every    time.Duration
	read     func(ctx context.Context) ([]MemoryReading, error)
	full     atomic.Pointer[memVerdict]
	offOnce  sync.Once
	noLimit  sync.Once // said that a master has no limit to watch
}

// memVerdict is the masters over their threshold at the last reading.
type memVerdict struct {
	nodes map[string]memOver
}

type memOver struct{ used, limit int64 }

// limit is a master's threshold in bytes (0: not watched).
func (w *memWatch) limit(r MemoryReading) int64 {
	if r.Max > 0 {
		return int64(float64(r.Max) * w.ratio)
	}
	return w.absolute
}

// CheckMemory reads Redis's memory now and updates which masters refuse
// sends. The background watch calls it every MemoryCheckInterval; tests
// call it after changing what the reader returns.
func (s *Store) CheckMemory(ctx context.Context) error {
	w := s.mem
	if w == nil {
		return nil
	}
	readings, err := w.read(ctx)
	if err != nil {
		return err // keep the last verdict: a failed read says nothing new
	}
	v := &memVerdict{nodes: map[string]memOver{}}
	for _, r := range readings {
		lim := w.limit(r)
		if lim > 0 && r.Used >= lim {
			v.nodes[r.Node] = memOver{used: r.Used, limit: lim}
		}
		if lim == 0 {
			w.noLimit.Do(func() {
				s.log.Warn("Redis has no maxmemory: nothing stops it from filling up, and sends are not refused before it does; " +
					"set maxmemory (with maxmemory-policy noeviction) or tagqd's --redis-memory-limit")
			})
		}
	}
	if old := w.full.Swap(v); (old == nil || len(old.nodes) == 0) != (len(v.nodes) == 0) {
		if len(v.nodes) > 0 {
			s.log.Warn("Redis memory at its threshold: refusing sends (STORAGE_FULL)", "masters", len(v.nodes))
		} else {
			s.log.Info("Redis memory below its threshold again: taking sends")
		}
	}
	return nil
}

// memoryFull is STORAGE_FULL when the master holding queue's keys is at
// its threshold, else nil.
func (s *Store) memoryFull(ctx context.Context, queue string) *tags.Error {
	if s.mem == nil {
		return nil
	}
	v := s.mem.full.Load()
	if v == nil || len(v.nodes) == 0 {
		return nil
	}
	over, ok := v.nodes[""]
	if cc, cluster := s.rdb.UniversalClient.(*redis.ClusterClient); cluster && !ok {
		n, err := cc.MasterForKey(ctx, s.qkeys(queue).meta)
		if err != nil {
			return nil // the send itself will tell what is wrong
		}
		over, ok = v.nodes[n.Options().Addr]
	} else if !ok {
		for _, o := range v.nodes { // one server: any reading is its own
			over, ok = o, true
		}
	}
	if !ok {
		return nil
	}
	q := tags.Echo(queue)
	return &tags.Error{Kind: tags.KindResourceExhausted, Reason: tags.ReasonStorageFull,
		Message: fmt.Sprintf("the Redis holding queue %q is at its memory threshold (used_memory %d bytes, threshold %d): "+
			"sends are refused until receives, deletes and trims free memory", q, over.used, over.limit),
		Metadata: map[string]string{"queue": q, "used_bytes": strconv.FormatInt(over.used, 10),
			"limit_bytes": strconv.FormatInt(over.limit, 10)}}
}

func (s *Store) memLoop() {
	defer s.done.Done()
	t := time.NewTicker(s.mem.every)
	defer t.Stop()
	failing := false // log a failure once, not every interval
	for {
		ctx, cancel := context.WithTimeout(context.Background(), s.mem.every+5*time.Second)
		err := s.CheckMemory(ctx)
		cancel()
		if errors.Is(err, errNoMemoryInfo) {
			s.mem.offOnce.Do(func() {
				s.log.Info("Redis reports no memory use (INFO memory): the memory watch is off")
			})
			return
		}
		if err != nil && !failing {
			s.log.Warn("reading Redis memory failed; the last reading stands until one succeeds", "err", err)
		}
		failing = err != nil
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// errNoMemoryInfo: the server answers INFO without used_memory
// (miniredis, say), so there is nothing to watch.
var errNoMemoryInfo = errors.New("no used_memory in INFO memory")

// readRedisMemory reads INFO memory from every master (one server: that
// server, Node "").
func readRedisMemory(c redis.UniversalClient) func(ctx context.Context) ([]MemoryReading, error) {
	return func(ctx context.Context) ([]MemoryReading, error) {
		if cc, ok := c.(*redis.ClusterClient); ok {
			var mu sync.Mutex
			var out []MemoryReading
			err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
				r, err := infoMemory(ctx, n, n.Options().Addr)
				mu.Lock()
				defer mu.Unlock()
				out = append(out, r)
				return err
			})
			return out, err
		}
		r, err := infoMemory(ctx, c, "")
		return []MemoryReading{r}, err
	}
}

func infoMemory(ctx context.Context, c redis.Cmdable, node string) (MemoryReading, error) {
	txt, err := c.Info(ctx, "memory").Result()
	if isScriptReply(err) { // an error reply: the server has no such section
		return MemoryReading{Node: node}, fmt.Errorf("%w: %v", errNoMemoryInfo, err)
	}
	if err != nil {
		return MemoryReading{Node: node}, rediserr.StorageError(err)
	}
	r := MemoryReading{Node: node}
	found := false
	sc := bufio.NewScanner(strings.NewReader(txt))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch k {
		case "used_memory":
			r.Used, _ = strconv.ParseInt(v, 10, 64)
			found = true
		case "maxmemory":
			r.Max, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if !found {
		return r, errNoMemoryInfo
	}
	return r, nil
}

func (s *Store) configureMemWatch(cfg Config) error {
	ratio := cfg.MemoryLimitRatio
	switch {
	case ratio < 0:
		return nil
	case ratio == 0:
		ratio = DefaultMemoryLimitRatio
	case ratio > 1:
		return fmt.Errorf("redisstore: Config.MemoryLimitRatio must be at most 1, got %v", ratio)
	}
	if cfg.MemoryLimitBytes < 0 {
		return fmt.Errorf("redisstore: Config.MemoryLimitBytes must not be negative, got %d", cfg.MemoryLimitBytes)
	}
	w := &memWatch{ratio: ratio, absolute: cfg.MemoryLimitBytes, every: cfg.MemoryCheckInterval, read: cfg.MemoryReader}
	if w.every <= 0 {
		w.every = time.Second
	}
	if w.read == nil {
		w.read = readRedisMemory(cfg.Client)
	}
	s.mem = w
	return nil
}
