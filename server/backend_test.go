package server

import (
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// Errors never reveal internal addresses: with Redis down, gRPC, REST and
// /healthz answer "backend unavailable" without its address, and the log
// has the failure in full.
func TestBackendDown_ErrorsDoNotRevealTheAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.HealthInterval = 5 * time.Millisecond })
	_, port, err := net.SplitHostPort(b.mr.Addr())
	require.NoError(t, err)
	b.mr.Close()
	secret := func(s string) bool { return strings.Contains(s, port) || strings.Contains(s, "127.0.0.1") }

	_, err = b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	code, ei := info(t, err)
	require.Equal(t, codes.Unavailable, code)
	require.Equal(t, tags.ReasonBackendUnavailable, ei.GetReason())
	require.False(t, secret(status.Convert(err).Message()), status.Convert(err).Message())
	require.False(t, secret(status.Convert(err).Proto().String()))

	code2, body := b.do(t, "GET", "/v1/queues/q", "")
	require.Equal(t, 503, code2)
	require.Contains(t, body, "BACKEND_UNAVAILABLE")
	require.False(t, secret(body), body)
	require.Eventually(t, func() bool { code2, body = b.do(t, "GET", "/readyz", ""); return code2 == 503 }, 10*time.Second, 5*time.Millisecond)
	require.False(t, secret(body), body)

	require.True(t, secret(b.logs.String()), "the log keeps the failure:\n%s", b.logs.String())
	require.Contains(t, b.logs.String(), "cause=")
}

// The REST gateway's own connection failing does not reveal the gRPC
// server's address either.
func TestREST_GatewayConnectionDownDoesNotRevealTheAddress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close()) // nothing listens there now
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	h, err := b.srv.HTTPHandler(b.ctx, conn)
	require.NoError(t, err)
	rest := httptest.NewServer(h)
	t.Cleanup(rest.Close)
	down := &testBundle{rest: rest}

	code, body := down.do(t, "GET", "/v1/queues", "")
	require.Equal(t, 503, code, body)
	require.Contains(t, body, `"UNAVAILABLE"`)
	_, port, _ := net.SplitHostPort(addr)
	require.NotContains(t, body, port, body)
	require.Contains(t, b.logs.String(), port, "the log keeps the failure")
}
