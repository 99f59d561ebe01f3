package main

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// privateRedisPort is the port for a redis-server of the test's own:
// TAGQ_TEST_PRIVATE_REDIS_PORT when set (a shared machine's own range),
// else a free one.
func privateRedisPort(t *testing.T) int {
	t.Helper()
	if p := os.Getenv("TAGQ_TEST_PRIVATE_REDIS_PORT"); p != "" {
		n, err := strconv.Atoi(p)
		require.NoError(t, err)
		return n
	}
	return freePort(t)
}

// grpc-health-probe's default deadline is 1 s: once Redis dies, a probe
// with it reads NOT_SERVING (from the background reading) instead of
// timing out behind a ping of the dead Redis; every probe answers in time,
// before, during and after. /readyz follows too.
func TestE2E_HealthProbeReadsNotServingOnceRedisDies(t *testing.T) {
	port := privateRedisPort(t)
	stopRedis := startRedis(t, "--port", strconv.Itoa(port))
	d := start(t, backend{name: "private"}, "--redis-url", "redis://127.0.0.1:"+strconv.Itoa(port)+"/0")
	conn, err := grpc.NewClient(d.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	hc := healthpb.NewHealthClient(conn)
	probe := func() healthpb.HealthCheckResponse_ServingStatus {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second) // grpc-health-probe -connect-timeout/-rpc-timeout
		defer cancel()
		r, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		require.NoError(t, err, "a 1 s probe always gets an answer")
		return r.GetStatus()
	}
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, probe())

	stopRedis()
	// The background loop pings every second: NOT_SERVING within a few.
	deadline := time.Now().Add(10 * time.Second)
	for probe() != healthpb.HealthCheckResponse_NOT_SERVING {
		require.True(t, time.Now().Before(deadline), "still SERVING 10 s after Redis died")
		time.Sleep(50 * time.Millisecond)
	}
	code, _ := d.rest("GET", "/readyz", "")
	require.Equal(t, 503, code)
	for range 5 { // and it stays answerable
		require.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, probe())
	}
}
