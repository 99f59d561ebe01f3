// Command tagqd is the tagq server: gRPC on --grpc-addr, REST (with
// /openapi.json, /healthz, /metrics) on --http-addr, over Redis at
// --redis-url or --redis-cluster, or over an embedded in-memory Redis when
// neither is given.
//
// Every flag can also come from an environment variable (TAGQ_GRPC_ADDR,
// TAGQ_HTTP_ADDR, TAGQ_REDIS_URL, TAGQ_REDIS_CLUSTER, TAGQ_KEY_PREFIX,
// TAGQ_LOG_LEVEL, TAGQ_LOG_FORMAT, TAGQ_SHUTDOWN_TIMEOUT); a flag wins.
//
// Once both listeners are bound, tagqd prints one line to standard output:
//
//	TAGQ_READY grpc=<host:port> http=<host:port>
//
// so scripts and tests can start it on port 0 and learn the ports.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tagq/tagq/redrive"
	"github.com/tagq/tagq/server"
	"github.com/tagq/tagq/tags"
)

type config struct {
	grpcAddr, httpAddr     string
	redisURL, redisCluster string
	keyPrefix              string
	logLevel, logFormat    string
	shutdownTimeout        time.Duration
	pprof                  bool
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("tagqd", flag.ContinueOnError)
	fs.StringVar(&c.grpcAddr, "grpc-addr", env("TAGQ_GRPC_ADDR", ":9090"), "gRPC listen address (TAGQ_GRPC_ADDR)")
	fs.StringVar(&c.httpAddr, "http-addr", env("TAGQ_HTTP_ADDR", ":8080"), "REST listen address (TAGQ_HTTP_ADDR)")
	fs.StringVar(&c.redisURL, "redis-url", env("TAGQ_REDIS_URL", ""), "Redis URL, e.g. redis://127.0.0.1:6379/0 (TAGQ_REDIS_URL); empty: embedded in-memory store")
	fs.StringVar(&c.redisCluster, "redis-cluster", env("TAGQ_REDIS_CLUSTER", ""), "Redis Cluster seed addresses host:port,... (TAGQ_REDIS_CLUSTER)")
	fs.StringVar(&c.keyPrefix, "key-prefix", env("TAGQ_KEY_PREFIX", "tagq"), "prefix of every Redis key (TAGQ_KEY_PREFIX)")
	fs.StringVar(&c.logLevel, "log-level", env("TAGQ_LOG_LEVEL", "info"), "debug, info, warn or error (TAGQ_LOG_LEVEL)")
	fs.StringVar(&c.logFormat, "log-format", env("TAGQ_LOG_FORMAT", "text"), "text or json (TAGQ_LOG_FORMAT)")
	fs.BoolVar(&c.pprof, "pprof", env("TAGQ_PPROF", "") == "true", "serve Go profiles at /debug/pprof/ on the HTTP address (TAGQ_PPROF=true)")
	timeout := env("TAGQ_SHUTDOWN_TIMEOUT", "25s")
	fs.StringVar(&timeout, "shutdown-timeout", timeout, "how long a graceful shutdown may take (TAGQ_SHUTDOWN_TIMEOUT)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	d, err := time.ParseDuration(timeout)
	if err != nil || d <= 0 {
		return c, fmt.Errorf("--shutdown-timeout: %q is not a positive duration", timeout)
	}
	c.shutdownTimeout = d
	if c.redisURL != "" && c.redisCluster != "" {
		return c, errors.New("give --redis-url or --redis-cluster, not both")
	}
	return c, nil
}

func newLogger(c config) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not text or json", c.logFormat)
}

func main() {
	c, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tagqd:", err)
		os.Exit(2)
	}
	log, err := newLogger(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tagqd:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c, log); err != nil {
		log.Error("tagqd stopped", "err", err)
		os.Exit(1)
	}
}

// redisClients opens the command client and the long-poll client (its own
// pool, so waiting receives never take connections from commands).
func redisClients(c config, log *slog.Logger) (cmd, blocking redis.UniversalClient, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	switch {
	case c.redisCluster != "":
		addrs := strings.Split(c.redisCluster, ",")
		mk := func(pool int) *redis.ClusterClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: pool, ContextTimeoutEnabled: true})
		}
		cc, bc := mk(0), mk(2048)
		closers = append(closers, func() { _ = cc.Close() }, func() { _ = bc.Close() })
		log.Info("using Redis Cluster", "seeds", addrs)
		return cc, bc, closeAll, nil
	case c.redisURL != "":
		opt, err := redis.ParseURL(c.redisURL)
		if err != nil {
			return nil, nil, closeAll, fmt.Errorf("--redis-url: %w", err)
		}
		log.Info("using Redis", "addr", opt.Addr, "db", opt.DB)
		cmd, blocking := newPair(opt, &closers)
		return cmd, blocking, closeAll, nil
	default:
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return nil, nil, closeAll, fmt.Errorf("embedded store: %w", err)
		}
		closers = append(closers, m.Close)
		log.Warn("no --redis-url: using the embedded in-memory store; data is lost when tagqd stops", "addr", m.Addr())
		cmd, blocking := newPair(&redis.Options{Addr: m.Addr()}, &closers)
		return cmd, blocking, closeAll, nil
	}
}

// newPair makes the command client and a long-poll client with a pool of
// its own, and records how to close them.
func newPair(opt *redis.Options, closers *[]func()) (redis.UniversalClient, redis.UniversalClient) {
	opt.ContextTimeoutEnabled = true
	cmd := redis.NewClient(opt)
	bopt := *opt
	bopt.PoolSize = 2048
	blocking := redis.NewClient(&bopt)
	*closers = append(*closers, func() { _ = cmd.Close() }, func() { _ = blocking.Close() })
	return cmd, blocking
}

// loopback is an address to dial for a listener bound to addr.
func loopback(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

func run(ctx context.Context, c config, log *slog.Logger) error {
	rdb, blocking, closeRedis, err := redisClients(c, log)
	defer closeRedis()
	if err != nil {
		return err
	}
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	store, err := tags.New(startCtx, tags.Config{Client: rdb, Blocking: blocking, Prefix: c.keyPrefix, Logger: log})
	cancel()
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	store.Start()
	worker := redrive.New(redrive.Config{Store: store, Logger: log})
	worker.Start()

	srv := server.New(server.Config{Store: store, Logger: log})
	glis, err := net.Listen("tcp", c.grpcAddr)
	if err != nil {
		return fmt.Errorf("--grpc-addr: %w", err)
	}
	hlis, err := net.Listen("tcp", c.httpAddr)
	if err != nil {
		_ = glis.Close()
		return fmt.Errorf("--http-addr: %w", err)
	}
	conn, err := grpc.NewClient(loopback(glis.Addr()), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("gateway connection: %w", err)
	}
	defer conn.Close()
	handler, err := srv.HTTPHandler(ctx, conn)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if c.pprof {
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		handler = mux
		log.Info("serving Go profiles at /debug/pprof/")
	}
	hsrv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}

	errc := make(chan error, 2)
	go func() { errc <- srv.GRPC().Serve(glis) }()
	go func() {
		if err := hsrv.Serve(hlis); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	log.Info("grpc listening", "addr", glis.Addr().String())
	log.Info("http listening", "addr", hlis.Addr().String())
	fmt.Printf("TAGQ_READY grpc=%s http=%s\n", loopback(glis.Addr()), loopback(hlis.Addr()))

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-errc:
		log.Error("server failed; shutting down", "err", err)
	}
	// Stop taking work, release waiting receives (they return empty), then
	// let in-flight calls finish within the timeout.
	srv.Draining()
	_ = store.Close()
	worker.Stop()
	sctx, scancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
	defer scancel()
	stopped := make(chan struct{})
	go func() { srv.GRPC().GracefulStop(); close(stopped) }()
	if err := hsrv.Shutdown(sctx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	select {
	case <-stopped:
	case <-sctx.Done():
		srv.GRPC().Stop()
	}
	log.Info("stopped")
	return nil
}
