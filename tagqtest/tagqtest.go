// Package tagqtest runs a whole tagq server in the test process, for the
// tests of programs that use tagq (as Pub/Sub's pstest and river's
// rivertest do for theirs). It is the real server (the same engine,
// scripts, API, REST gateway and dead-letter worker as tagqd) on the
// embedded store (miniredis), on loopback ports of its own, gone when the
// test ends. Its clock is the test's to move (FastForward), so visibility
// timeouts, delays, retention and redrive need no sleeping.
//
//	srv := tagqtest.NewServer(t)
//	c, err := tagq.Dial(srv.GRPCAddr) // github.com/tagq/tagq/clients/go
//	...
//	srv.FastForward(31 * time.Second) // past a 30 s visibility timeout
package tagqtest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/redrive"
	"github.com/tagq/tagq/server"
	"github.com/tagq/tagq/tags/redisstore"
)

// Server is a running in-process tagq server.
type Server struct {
	// GRPCAddr is the gRPC address (127.0.0.1:port, plaintext).
	GRPCAddr string
	// HTTPURL is the base URL of the REST API (http://127.0.0.1:port).
	HTTPURL string
	// Conn is a client connection to GRPCAddr, closed when the test ends.
	Conn *grpc.ClientConn
	// Queues, Messages and Redrive are clients of the services on Conn.
	Queues   tagqv1.QueueServiceClient
	Messages tagqv1.MessageServiceClient
	Redrive  tagqv1.RedriveServiceClient

	t      testing.TB
	mr     *miniredis.Miniredis
	store  *redisstore.Store
	worker *redrive.Worker
	now    time.Time
}

// Option changes how NewServer starts the server.
type Option func(*options)

type options struct {
	log *slog.Logger
}

// WithLogger sends the server's log (one line per call at debug level,
// errors and warnings) to log. Default: discarded.
func WithLogger(log *slog.Logger) Option { return func(o *options) { o.log = log } }

// NewServer starts a tagq server for the test t and stops it (and deletes
// everything it stored) when t ends. It fails t if the server cannot
// start.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := options{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, f := range opts {
		f(&o)
	}
	ctx := context.Background()
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		t.Fatalf("tagqtest: starting the embedded store: %v", err)
	}
	t.Cleanup(mr.Close)
	// The server's clock is the store's: fixed at the start, moved by
	// FastForward only.
	now := time.Now().Truncate(time.Millisecond)
	mr.SetTime(now)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	// TestClock: the engine keeps no clock of its own (no cached "nothing
	// due before" hints), so the store's clock alone decides.
	store, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Logger: o.log, TestClock: true})
	if err != nil {
		t.Fatalf("tagqtest: %v", err)
	}
	srv, err := server.New(server.Config{Store: store, Logger: o.log, Registerer: prometheus.NewRegistry(),
		QueueMetricsInterval: -1})
	if err != nil {
		_ = store.Close()
		t.Fatalf("tagqtest: %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = store.Close()
		t.Fatalf("tagqtest: %v", err)
	}
	go func() { _ = srv.GRPC().Serve(lis) }()
	store.Start()
	worker := redrive.New(redrive.Config{Store: store, Logger: o.log})
	worker.Start()
	s := &Server{GRPCAddr: lis.Addr().String(), t: t, mr: mr, store: store, worker: worker, now: now}
	t.Cleanup(func() {
		srv.Draining()
		worker.Stop()
		srv.GRPC().Stop()
		_ = store.Close()
	})

	s.Conn, err = grpc.NewClient(s.GRPCAddr, append(srv.GatewayDialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatalf("tagqtest: %v", err)
	}
	t.Cleanup(func() { _ = s.Conn.Close() })
	h, err := srv.HTTPHandler(ctx, s.Conn)
	if err != nil {
		t.Fatalf("tagqtest: %v", err)
	}
	rest := httptest.NewServer(h)
	t.Cleanup(rest.Close)
	s.HTTPURL = rest.URL
	s.Queues = tagqv1.NewQueueServiceClient(s.Conn)
	s.Messages = tagqv1.NewMessageServiceClient(s.Conn)
	s.Redrive = tagqv1.NewRedriveServiceClient(s.Conn)
	return s
}

// Now is the server's clock: the time it started, moved by FastForward.
func (s *Server) Now() time.Time { return s.now }

// FastForward moves the server's clock forward by d, then does at once
// the background work that time makes due: messages whose visibility
// timeout or delay passed become receivable, messages past their
// retention expire, and messages received max_receive_count times whose
// visibility passed reach their dead-letter queue.
func (s *Server) FastForward(d time.Duration) {
	s.t.Helper()
	if d < 0 {
		s.t.Fatalf("tagqtest: FastForward(%v): the clock only moves forward", d)
	}
	s.now = s.now.Add(d)
	s.mr.SetTime(s.now)
	s.mr.FastForward(d) // key expiry follows the same clock
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.store.RunJanitor(ctx); err != nil {
		s.t.Fatalf("tagqtest: janitor: %v", err)
	}
	if err := s.worker.RunOnce(ctx); err != nil {
		s.t.Fatalf("tagqtest: dead-letter worker: %v", err)
	}
}

// Get sends a REST GET for path (e.g. "/v1/queues/orders") and returns the
// status code and body, for tests of REST clients.
func (s *Server) Get(path string) (int, string) {
	s.t.Helper()
	resp, err := http.Get(s.HTTPURL + path)
	if err != nil {
		s.t.Fatalf("tagqtest: GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("tagqtest: GET %s: %v", path, err)
	}
	return resp.StatusCode, string(b)
}
