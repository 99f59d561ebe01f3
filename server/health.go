package server

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/tagq/tagq/tags"
)

// readyTimeout bounds one storage ping of the readiness loop.
const readyTimeout = 2 * time.Second

// DefaultHealthInterval is the default Config.HealthInterval.
const DefaultHealthInterval = time.Second

// readiness keeps the server's readiness current in the background: a
// loop pings the storage every interval and sets the standard gRPC health
// service's status of every service from the answer (SERVING while the
// storage answers, NOT_SERVING while it does not; NOT_SERVING for good once
// the server drains). Check, Watch and /readyz answer at once from the
// last reading instead of pinging: a ping of a Redis that just died takes
// go-redis's retries, about 2 s, so a probe with a 1 s deadline
// (grpc-health-probe's and Kubernetes' defaults) timed out instead of
// reading NOT_SERVING. A reading is at most interval + readyTimeout old.
type readiness struct {
	health *health.Server
	store  tags.Storage
	log    *slog.Logger
	names  []string    // "" and every tagq service
	ready  atomic.Bool // the last ping answered
}

func newReadiness(h *health.Server, store tags.Storage, log *slog.Logger, names []string) *readiness {
	return &readiness{health: h, store: store, log: log, names: names}
}

// probe pings the storage once and records the answer.
func (r *readiness) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err := r.store.Ping(ctx)
	ok := err == nil
	if was := r.ready.Swap(ok); was != ok {
		if ok {
			r.log.Info("storage answers again: serving")
		} else {
			// The error names the storage's address: for the log only.
			r.log.Warn("storage unavailable: not serving", "err", err)
		}
	}
	status := healthpb.HealthCheckResponse_SERVING
	if !ok {
		status = healthpb.HealthCheckResponse_NOT_SERVING
	}
	for _, name := range r.names {
		r.health.SetServingStatus(name, status) // ignored once the server drains
	}
}

// run probes every interval until stop closes.
func (r *readiness) run(stop <-chan struct{}, interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel() // a ping in progress ends too
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.probe(ctx)
		}
	}
}

// Ready reports the last reading: the storage answered the latest ping.
func (r *readiness) Ready() bool { return r.ready.Load() }
