package server

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/tagq/tagq/tags"
)

// hangingStore's Ping blocks until its context ends while hang is set, as
// a ping of a Redis that stopped answering (or whose connections go-redis
// retries) does.
type hangingStore struct {
	tags.Storage
	hang atomic.Bool
}

func (h *hangingStore) Ping(ctx context.Context) error {
	if h.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return h.Storage.Ping(ctx)
}

// Health answers at once from the background reading, with a probe's
// 1 s deadline (grpc-health-probe's default) and far less, while the ping
// behind it hangs; once the ping fails, it reads NOT_SERVING, and Watch
// streams the change.
func TestHealth_AnswersAtOnceFromTheBackgroundReading(t *testing.T) {
	t.Parallel()
	var hs *hangingStore
	b := setup(t, func(c *Config) {
		hs = &hangingStore{Storage: c.Store}
		c.Store = hs
		c.HealthInterval = 10 * time.Millisecond
	})
	hc := healthpb.NewHealthClient(b.conn)
	watch, err := hc.Watch(b.ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	first, err := watch.Recv()
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, first.GetStatus())

	hs.hang.Store(true)
	check := func() healthpb.HealthCheckResponse_ServingStatus {
		// The store hangs until told not to: a Check that waited for a ping
		// would not answer in any time. 2 s leaves room for a loaded machine
		// under the race detector (200 ms did not).
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		defer cancel()
		r, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		require.NoError(t, err, "Check waits for no ping")
		return r.GetStatus()
	}
	require.Eventually(t, func() bool { return check() == healthpb.HealthCheckResponse_NOT_SERVING },
		readyTimeout+10*time.Second, 10*time.Millisecond)
	next, err := watch.Recv()
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, next.GetStatus(), "Watch follows the storage too")
	code, _ := b.do(t, "GET", "/readyz", "")
	require.Equal(t, 503, code)

	hs.hang.Store(false)
	require.Eventually(t, func() bool { return check() == healthpb.HealthCheckResponse_SERVING }, 10*time.Second, 10*time.Millisecond)
	code, _ = b.do(t, "GET", "/readyz", "")
	require.Equal(t, 200, code)

	// Draining ends it for good, whatever the storage says.
	b.srv.Draining()
	require.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, check())
	code, _ = b.do(t, "GET", "/readyz", "")
	require.Equal(t, 503, code)
}
