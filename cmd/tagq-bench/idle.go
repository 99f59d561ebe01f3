package main

import (
	"fmt"
	"time"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// ---- W6: idle queues (issue 11: background work follows pending work).

// w6 creates n queues nobody uses, lets tagqd's background work settle for
// ramp, then measures tagqd's and Redis's CPU over dur, which should span
// the janitor's longest back-off (30 s) so that every queue's visit counts:
// what idle queues cost.
func (e *env) w6(n int, ramp, dur time.Duration) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("idle%d", i)
		e.tagqQueue(names[i], 1, nil)
	}
	defer func() {
		for _, q := range names {
			_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: q, Force: true})
		}
	}()
	time.Sleep(ramp) // the janitor's and the redrive worker's back-off ramps up
	var r result
	mt := startMeter(e.ctx, e.rdb, e.pid)
	time.Sleep(dur)
	mt.stop(&r)
	el := r.elapsed.Seconds()
	fmt.Printf("## W6: %d idle queues (after %v)\n\n", n, ramp)
	fmt.Printf("| measured over | tagqd, %% of a core | Redis, %% of a core | script calls/s |\n|---|---:|---:|---:|\n")
	fmt.Printf("| %v | %.1f | %.1f | %.0f |\n\n", r.elapsed.Round(time.Millisecond),
		r.cpuTagqd.Seconds()/el*100, r.cpuRedis.Seconds()/el*100, float64(r.scripts.calls)/el)
}
