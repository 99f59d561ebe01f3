package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/tagqdtest"
)

// ---- W6: idle queues (issue 11: background work follows pending work;
// issue 23: and does not grow with the replicas).

// w6Config is W6's shape: how many idle queues (each with 2 tags), with
// how many tagqd replicas on the Redis (one run each), how long the
// background work settles before the measure and how long the measure
// takes (it should span the janitor's longest back-off, 30 s, so that
// every queue's visit counts), and how often each replica's /metrics is
// scraped meanwhile, as Prometheus would (0: never).
type w6Config struct {
	queues     int
	replicas   []int
	ramp, dur  time.Duration
	scrape     time.Duration
	startExtra func() (*tagqdtest.Daemon, error) // another tagqd on the same Redis and prefix
	httpAddr   string                            // the first tagqd's REST address
}

// w6 creates the idle queues, then for each replica count starts the
// replicas beyond the first, lets them settle, and measures every tagqd's
// CPU, Redis's CPU and the commands Redis ran (INFO commandstats): what
// idle queues cost.
func (e *env) w6(c w6Config) {
	names := make([]string, c.queues)
	for i := range names {
		names[i] = fmt.Sprintf("idle%d", i)
		e.tagqQueue(names[i], 2, nil)
	}
	defer func() {
		for _, q := range names {
			_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: q, Force: true})
		}
	}()
	fmt.Printf("## W6: %d idle queues x 2 tags (settled %v; /metrics of each replica scraped every %v)\n\n", c.queues, c.ramp,
		c.scrape)
	fmt.Printf("| replicas | measured over | each tagqd, %% of a core | tagqd max | Redis, %% of a core | Redis commands/s | of them script calls/s | top commands/s |\n")
	fmt.Printf("|---:|---|---|---:|---:|---:|---:|---|\n")
	for _, n := range c.replicas {
		if err := e.w6Run(c, n); err != nil {
			fmt.Printf("| %d | failed: %v |\n", n, err)
		}
	}
	fmt.Println()
	printLoad()
}

// w6Run is one run with n replicas.
func (e *env) w6Run(c w6Config, n int) error {
	pids, https := []int{e.pid}, []string{c.httpAddr}
	var extra []*tagqdtest.Daemon
	defer func() {
		for _, d := range extra {
			_, _ = d.Stop()
		}
	}()
	for range n - 1 {
		d, err := c.startExtra()
		if err != nil {
			return err
		}
		extra = append(extra, d)
		pids, https = append(pids, d.PID()), append(https, d.HTTP)
	}
	ctx, stop := context.WithCancel(e.ctx)
	defer stop()
	var scrapes sync.WaitGroup
	if c.scrape > 0 {
		// Each replica at its own moment of the period, as a Prometheus
		// scraping them would (the worst case for sharing the reads).
		for i, addr := range https {
			scrapes.Add(1)
			go func() {
				defer scrapes.Done()
				scrapeEvery(ctx, addr, c.scrape, c.scrape*time.Duration(i)/time.Duration(len(https)))
			}()
		}
	}
	time.Sleep(c.ramp) // the janitor's and the redrive worker's back-off ramps up
	cpu0 := make([]time.Duration, len(pids))
	for i, p := range pids {
		cpu0[i] = cpuOf(p)
	}
	rc0, cs0, t0 := redisCPU(e.ctx, e.rdb), commandStats(e.ctx, e.rdb), time.Now()
	time.Sleep(c.dur)
	el := time.Since(t0).Seconds()
	rc, cs := redisCPU(e.ctx, e.rdb)-rc0, commandStats(e.ctx, e.rdb)
	stop()
	scrapes.Wait()
	var each []string
	most := 0.0
	for i, p := range pids {
		pct := (cpuOf(p) - cpu0[i]).Seconds() / el * 100
		each = append(each, fmt.Sprintf("%.1f", pct))
		most = max(most, pct)
	}
	total, scripts := 0.0, 0.0
	type top struct {
		name string
		rate float64
	}
	var tops []top
	for name, calls := range cs {
		d := float64(calls-cs0[name]) / el
		if name == "info" || d <= 0 {
			continue // the bench's own
		}
		total += d
		if name == "evalsha" || name == "eval" {
			scripts += d
		}
		tops = append(tops, top{name, d})
	}
	for i := range tops { // the four most called
		for j := i + 1; j < len(tops); j++ {
			if tops[j].rate > tops[i].rate {
				tops[i], tops[j] = tops[j], tops[i]
			}
		}
	}
	var names []string
	for i := range min(4, len(tops)) {
		names = append(names, fmt.Sprintf("%s %.0f", strings.ToUpper(tops[i].name), tops[i].rate))
	}
	fmt.Printf("| %d | %v | %s | %.1f | %.1f | %.0f | %.0f | %s |\n", n, time.Duration(el*float64(time.Second)).Round(time.Millisecond),
		strings.Join(each, ", "), most, rc.Seconds()/el*100, total, scripts, strings.Join(names, ", "))
	return nil
}

// scrapeEvery reads a tagqd's /metrics every d, from after first, until
// ctx ends.
func scrapeEvery(ctx context.Context, addr string, d, first time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(first):
	}
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// commandStats is INFO commandstats' calls per command.
func commandStats(ctx context.Context, rdb redis.UniversalClient) map[string]int64 {
	out := map[string]int64{}
	s, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return out
	}
	for _, line := range strings.Split(s, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if k, v, _ := strings.Cut(kv, "="); k == "calls" {
				out[name], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return out
}
