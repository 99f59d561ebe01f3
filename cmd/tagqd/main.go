// Command tagqd is the tagq server: gRPC on --grpc-addr, REST (with
// /openapi.json, /healthz, /readyz, /metrics) on --http-addr, over Redis at
// --redis-url or --redis-cluster, or over an embedded in-memory Redis when
// neither is given.
//
// Every flag can also come from an environment variable (TAGQ_GRPC_ADDR,
// TAGQ_HTTP_ADDR, TAGQ_REDIS_URL, TAGQ_REDIS_CLUSTER, TAGQ_KEY_PREFIX,
// TAGQ_LOG_LEVEL, TAGQ_LOG_FORMAT, TAGQ_SHUTDOWN_TIMEOUT, TAGQ_PPROF,
// TAGQ_TLS_CERT, TAGQ_TLS_KEY, TAGQ_TLS_CLIENT_CA, TAGQ_REDIS_USERNAME,
// TAGQ_REDIS_PASSWORD, TAGQ_REDIS_TLS, TAGQ_REDIS_CA); a flag wins.
//
// TLS: --tls-cert and --tls-key (PEM files) serve TLS on both listeners;
// the pair is loaded again, without a restart, when the files change
// (looked at, at most once a second, on a new connection; a pair that does
// not load is logged and the one in use stays). --tls-client-ca requires
// and verifies client certificates (mTLS) on both listeners. The REST
// gateway reaches the gRPC server in-process, so it needs no certificate.
//
// Redis: a rediss:// URL speaks TLS, and user:password@ in the URL logs in
// with an ACL user; --redis-username, --redis-password, --redis-tls and
// --redis-ca do the same for --redis-cluster (and for --redis-url, which
// keeps the password out of the URL). The password is never logged.
//
// Once both listeners are bound, tagqd logs (to standard error, in the
// chosen log format, at info level) the addresses it listens on:
//
//	level=INFO msg="grpc listening" addr=127.0.0.1:9090
//	level=INFO msg="http listening" addr=127.0.0.1:8080
//
// and prints one line to standard output, the stable interface for scripts
// and tests that start it on port 0 and need the ports:
//
//	TAGQ_READY grpc=<host:port> http=<host:port>
//
// (an unspecified host, as in ":9090", is given as 127.0.0.1).
//
// On SIGINT or SIGTERM tagqd shuts down gracefully: the gRPC health service
// turns NOT_SERVING, every waiting receive returns (empty), calls in
// progress get --shutdown-timeout to finish, then the Redis clients close
// (and the embedded store stops) and tagqd exits with status 0. It exits 1
// when it cannot start or a listener fails, 2 on bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"
)

type config struct {
	grpcAddr, httpAddr     string
	redisURL, redisCluster string
	keyPrefix              string
	logLevel, logFormat    string
	shutdownTimeout        time.Duration
	pprof                  bool
	testClock              bool

	tlsCert, tlsKey, tlsClientCA string

	redisUsername, redisPassword string
	redisTLS                     bool
	redisCA                      string
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
	fs.BoolVar(&c.testClock, "test-clock", env("TAGQ_TEST_CLOCK", "") == "true", "tests only: a queue's clock is its test_clock_ms field when set, which costs a read per script call (TAGQ_TEST_CLOCK=true)")
	fs.StringVar(&c.tlsCert, "tls-cert", env("TAGQ_TLS_CERT", ""), "PEM certificate (chain) to serve TLS with on both listeners, reloaded when it changes (TAGQ_TLS_CERT)")
	fs.StringVar(&c.tlsKey, "tls-key", env("TAGQ_TLS_KEY", ""), "PEM private key of --tls-cert (TAGQ_TLS_KEY)")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", env("TAGQ_TLS_CLIENT_CA", ""), "PEM CA certificates: require client certificates they signed, on both listeners (mTLS) (TAGQ_TLS_CLIENT_CA)")
	fs.StringVar(&c.redisUsername, "redis-username", env("TAGQ_REDIS_USERNAME", ""), "Redis ACL user (TAGQ_REDIS_USERNAME)")
	fs.StringVar(&c.redisPassword, "redis-password", env("TAGQ_REDIS_PASSWORD", ""), "Redis password; prefer the environment variable (TAGQ_REDIS_PASSWORD)")
	fs.BoolVar(&c.redisTLS, "redis-tls", env("TAGQ_REDIS_TLS", "") == "true", "talk TLS to Redis (implied by rediss:// and --redis-ca) (TAGQ_REDIS_TLS=true)")
	fs.StringVar(&c.redisCA, "redis-ca", env("TAGQ_REDIS_CA", ""), "PEM CA certificates to verify Redis's certificate with; default: the system's (TAGQ_REDIS_CA)")
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
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return c, errors.New("give both --tls-cert and --tls-key, or neither")
	}
	if c.tlsClientCA != "" && c.tlsCert == "" {
		return c, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
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
	tuneGC(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c, log, os.Stdout); err != nil {
		log.Error("tagqd stopped", "err", err)
		os.Exit(1)
	}
}

// defaultGOGC is tagqd's GC target unless GOGC is set. tagqd's live heap
// is small (buffers in flight) and its garbage is per message, so the
// default 100 spends a tenth of its CPU collecting: 400 gave +23 % of
// streaming W1 throughput (shared/notes/streaming-measurements.md). A
// memory limit (GOMEMLIMIT) still bounds the heap if one is set.
const defaultGOGC = 400

func tuneGC(log *slog.Logger) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(defaultGOGC)
	log.Debug("GC target set", "GOGC", defaultGOGC)
}
