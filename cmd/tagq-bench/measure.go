package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// latencies collects durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// pct returns the p50, p99 and max.
func (l *latencies) pct() (p50, p99, mx time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(l.d)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.50), at(0.99), s[len(s)-1]
}

// cpuOf reads a process's user+system CPU time from /proc.
func cpuOf(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may contain spaces).
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ = 100
}

// redisInfo reads a numeric field of INFO section.
func redisInfo(ctx context.Context, rdb redis.UniversalClient, section, field string) float64 {
	s, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

func redisCPU(ctx context.Context, rdb redis.UniversalClient) time.Duration {
	s := redisInfo(ctx, rdb, "cpu", "used_cpu_sys") + redisInfo(ctx, rdb, "cpu", "used_cpu_user")
	return time.Duration(s * float64(time.Second))
}

func redisMem(ctx context.Context, rdb redis.UniversalClient) float64 {
	return redisInfo(ctx, rdb, "memory", "used_memory")
}

// result is one workload run on one system.
type result struct {
	workload, system string
	msgs             int64
	sent             int64 // messages the server answered as stored (runUnary, runStream)
	elapsed          time.Duration
	p50, p99, max    time.Duration
	cpuTagqd         time.Duration   // the server's (tagqd, the floor, a peer's); zero for raw Redis
	cpuRedis         time.Duration   // every Redis node's: nodeCPU's sum
	nodeCPU          []time.Duration // each of the meter's Redis nodes', in their order (env.nodes)
	redisNet         int64           // bytes the Redis nodes received and sent (INFO stats), summed
	cpuClient        time.Duration   // this process: the producers and consumers
	scripts          scriptStats     // EVALSHA calls in Redis: tagqd's, shown on tagq rows only
	note             string
	partitions       int // the tagq queue's partitions (--partitions) where more than 1
}

func (r result) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.msgs) / r.elapsed.Seconds()
}

// meter measures CPU around a run.
type meter struct {
	ctx       context.Context
	nodes     []redisNode // the Redis processes: one, or a cluster's masters and replicas
	pids      []int       // the server's processes
	t0        time.Time
	cpu0, cc0 time.Duration
	rc0       []time.Duration // each node's
	net0      int64
	sc0       scriptStats
}

// scriptStats is INFO commandstats' line for EVALSHA: calls and the
// microseconds Redis spent in them.
type scriptStats struct{ calls, usec int64 }

func evalshaStats(ctx context.Context, rdb redis.UniversalClient) scriptStats {
	s, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return scriptStats{}
	}
	var st scriptStats
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, "cmdstat_evalsha:"); ok {
			for _, kv := range strings.Split(v, ",") {
				k, n, _ := strings.Cut(kv, "=")
				switch k {
				case "calls":
					st.calls, _ = strconv.ParseInt(n, 10, 64)
				case "usec":
					st.usec, _ = strconv.ParseInt(n, 10, 64)
				}
			}
		}
	}
	return st
}

func startMeter(ctx context.Context, nodes []redisNode, pid int) *meter {
	var pids []int
	if pid > 0 {
		pids = []int{pid}
	}
	return startMeterPIDs(ctx, nodes, pids)
}

// startMeterPIDs measures with the server's CPU summed over processes.
func startMeterPIDs(ctx context.Context, nodes []redisNode, pids []int) *meter {
	return &meter{ctx: ctx, nodes: nodes, pids: pids, t0: time.Now(), rc0: nodesCPU(ctx, nodes), net0: nodesNet(ctx, nodes), cc0: cpuOf(os.Getpid()),
		sc0: scriptsOf(ctx, nodes), cpu0: cpuOfAll(pids)}
}

// nodesCPU is each node's CPU time (INFO cpu).
func nodesCPU(ctx context.Context, nodes []redisNode) []time.Duration {
	out := make([]time.Duration, len(nodes))
	for i, n := range nodes {
		out[i] = redisCPU(ctx, n.c)
	}
	return out
}

// nodesNet is the bytes the nodes received and sent (INFO stats
// total_net_input_bytes + total_net_output_bytes; a master's output
// includes what it replicates).
func nodesNet(ctx context.Context, nodes []redisNode) int64 {
	var b float64
	for _, n := range nodes {
		b += redisInfo(ctx, n.c, "stats", "total_net_input_bytes") + redisInfo(ctx, n.c, "stats", "total_net_output_bytes")
	}
	return int64(b)
}

// scriptsOf is the EVALSHA stats summed over the masters (a replica runs
// what its master's scripts wrote, not the scripts).
func scriptsOf(ctx context.Context, nodes []redisNode) scriptStats {
	var st scriptStats
	for _, n := range nodes {
		if !n.replica {
			s := evalshaStats(ctx, n.c)
			st.calls, st.usec = st.calls+s.calls, st.usec+s.usec
		}
	}
	return st
}

func cpuOfAll(pids []int) time.Duration {
	var t time.Duration
	for _, p := range pids {
		t += cpuOf(p)
	}
	return t
}

func (m *meter) stop(r *result) {
	r.elapsed = time.Since(m.t0)
	r.cpuRedis, r.nodeCPU, r.redisNet = 0, nodesCPU(m.ctx, m.nodes), nodesNet(m.ctx, m.nodes)-m.net0
	for i := range r.nodeCPU {
		r.nodeCPU[i] -= m.rc0[i]
		r.cpuRedis += r.nodeCPU[i]
	}
	r.cpuClient = cpuOf(os.Getpid()) - m.cc0
	sc := scriptsOf(m.ctx, m.nodes)
	r.scripts = scriptStats{calls: sc.calls - m.sc0.calls, usec: sc.usec - m.sc0.usec}
	if len(m.pids) > 0 {
		r.cpuTagqd = cpuOfAll(m.pids) - m.cpu0
	}
}
