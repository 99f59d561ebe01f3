// Command tagqd is the tagq server: gRPC on --grpc-addr, REST (with
// /openapi.json, /healthz, /readyz, /metrics) on --http-addr, the
// SQS-compatible API on --sqs-addr (package sqs; empty turns it off), over
// Redis at --redis-url or --redis-cluster, or over an embedded in-memory
// Redis when neither is given.
//
// Every flag can also come from an environment variable (TAGQ_GRPC_ADDR,
// TAGQ_HTTP_ADDR, TAGQ_REDIS_URL, TAGQ_REDIS_CLUSTER, TAGQ_KEY_PREFIX,
// TAGQ_LOG_LEVEL, TAGQ_LOG_FORMAT, TAGQ_SHUTDOWN_TIMEOUT, TAGQ_PPROF,
// TAGQ_TLS_CERT, TAGQ_TLS_KEY, TAGQ_TLS_CLIENT_CA, TAGQ_REDIS_USERNAME,
// TAGQ_REDIS_PASSWORD, TAGQ_REDIS_TLS, TAGQ_REDIS_CA,
// TAGQ_QUEUE_METRICS_INTERVAL, TAGQ_QUEUE_METRICS_MAX_TAGS,
// TAGQ_STALLED_READ, TAGQ_HANDLE_KEY_FILE, TAGQ_AUTH, TAGQ_ADMIN_KEY_FILE,
// TAGQ_INSECURE, TAGQ_MAX_CONNECTIONS, TAGQ_MAX_STREAMS,
// TAGQ_MAX_REQUEST_BYTES_IN_FLIGHT, ...: TAGQ_ and the flag's name); a flag
// wins. --config
// (TAGQ_CONFIG_FILE) reads flag values from a YAML file of flag names and
// values, below flags and variables. tagqd --version (or tagqd version)
// prints its version and exits; any other argument is refused.
//
// All listen on loopback by default (127.0.0.1:9090, 127.0.0.1:8080,
// 127.0.0.1:9324). The SQS endpoint has the HTTP listener's TLS, limits
// and timeouts, and forwards each action to the gRPC server in process, as
// REST calls are; with --auth it runs only when --sqs-addr (or
// TAGQ_SQS_ADDR, or the config file) names its address, and checks AWS
// Signature V4 against API keys (--sqs-signing-key-file names the key
// their SigV4 secrets are derived from; default: one kept in Redis, with a
// warning at start: whoever reads Redis can then derive any key's SigV4
// secret).
// --auth requires credentials and permissions on every call (the access
// package; README "Security"): a bearer API key, or a client certificate
// mapped to a principal. --admin-key-file (or the key itself in
// TAGQ_ADMIN_KEY) is the bootstrap admin key, set on every start as the
// key "bootstrap" of the admin principal "admin". Without --auth tagqd
// refuses a non-loopback address unless --insecure is given.
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
// keeps the password out of the URL); --redis-cert and --redis-key present
// a client certificate to a Redis that asks for one. The password is never
// logged.
//
// Limits: --max-connections (default 10,000 on each listener) closes a
// connection beyond it at once; --max-streams (default 10,000) refuses a
// Publish or Consume stream beyond it with RESOURCE_EXHAUSTED
// (TOO_MANY_STREAMS); --max-streams-per-connection (default 1,000) is
// gRPC's concurrent calls on one connection;
// --max-request-bytes-in-flight (default 256 MiB) bounds the bytes of
// requests held at once over every protocol, beyond which calls are
// refused with RESOURCE_EXHAUSTED (TOO_MANY_REQUEST_BYTES, retry_after_ms).
// With --auth, a call's credentials are checked before its body or
// message is read.
//
// Durability: a write is acknowledged only once --ack-replicas Redis
// replicas have it (WAIT after the write, in its round trip; auto, the
// default: one once any master has a replica, none on a lone Redis or the
// embedded store; 0: off). Past --ack-timeout (default 2s) the call is
// UNAVAILABLE (REPLICATION_TIMEOUT: it may have been stored), and that
// master's writes are refused unsent (REPLICAS_UNAVAILABLE) until a
// replica has caught up (package internal/durable).
//
// Receipt handles: --handle-key-file names a file of signing keys, one a
// line as id:base64key, the first signing and the rest accepted only
// (rotation); it is loaded again when it changes (looked at once a second;
// a file that does not load is logged and the keys in use stay). Without
// it the key is kept in Redis, shared by every tagqd there.
//
// Once both listeners are bound, tagqd logs (to standard error, in the
// chosen log format, at info level) the addresses it listens on:
//
//	level=INFO msg="grpc listening" addr=127.0.0.1:9090
//	level=INFO msg="http listening" addr=127.0.0.1:8080
//	level=INFO msg="sqs listening" addr=127.0.0.1:9324
//
// and prints one line to standard output, the stable interface for scripts
// and tests that start it on port 0 and need the ports:
//
//	TAGQ_READY grpc=<host:port> http=<host:port> [sqs=<host:port>]
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
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/internal/version"
	"github.com/tagq/tagq/server"
)

type config struct {
	grpcAddr, httpAddr     string
	sqsAddr                string // "": no SQS endpoint
	sqsOffForAuth          bool   // --auth turned the default SQS endpoint off (no --sqs-addr given)
	sqsSigningKeyFile      string
	redisURL, redisCluster string
	keyPrefix              string
	logLevel, logFormat    string
	shutdownTimeout        time.Duration
	pprof                  bool
	testClock              bool
	noRates                bool
	version                bool
	stalledRead            time.Duration

	queueMetricsInterval time.Duration
	queueMetricsMaxTags  int

	tlsCert, tlsKey, tlsClientCA string

	redisUsername, redisPassword string
	redisTLS                     bool
	redisCA                      string
	redisCert, redisKey          string

	handleKeyFile  string
	auth, insecure bool
	adminKeyFile   string

	maxConnections    int    // per listener; 0: no limit
	maxStreams        int    // Publish + Consume streams in the process; 0: no limit
	maxStreamsPerConn uint32 // concurrent calls on one connection
	maxInFlight       int64  // request bytes held at once, every protocol; 0: no limit

	ackReplicas int           // replicas a write must reach before it is acknowledged; durable.Auto: see --ack-replicas
	ackTimeout  time.Duration // how long a write waits for them

	memThreshold float64       // share of maxmemory at which sends stop; 0: no watch
	memLimit     int64         // bytes, for a Redis without maxmemory; 0: none
	memInterval  time.Duration // between readings of INFO memory
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func parseFlags(args []string) (config, error) {
	return parseFlagsInto(flag.NewFlagSet("tagqd", flag.ContinueOnError), args)
}

// parseFlagsInto defines tagqd's flags on fs and parses args.
func parseFlagsInto(fs *flag.FlagSet, args []string) (config, error) {
	var c config
	fs.StringVar(&c.grpcAddr, "grpc-addr", env("TAGQ_GRPC_ADDR", "127.0.0.1:9090"), "gRPC listen address (TAGQ_GRPC_ADDR)")
	fs.StringVar(&c.httpAddr, "http-addr", env("TAGQ_HTTP_ADDR", "127.0.0.1:8080"), "REST listen address (TAGQ_HTTP_ADDR)")
	fs.StringVar(&c.sqsAddr, "sqs-addr", env("TAGQ_SQS_ADDR", "127.0.0.1:9324"), "SQS-compatible endpoint's listen address; empty: none; with --auth the endpoint runs only when this is given (TAGQ_SQS_ADDR)")
	fs.StringVar(&c.sqsSigningKeyFile, "sqs-signing-key-file", env("TAGQ_SQS_SIGNING_KEY_FILE", ""), "file holding the key (base64, 16+ bytes) that API keys' SigV4 secrets are derived from, with --auth; default: a key kept in Redis (TAGQ_SQS_SIGNING_KEY_FILE)")
	fs.StringVar(&c.redisURL, "redis-url", env("TAGQ_REDIS_URL", ""), "Redis URL, e.g. redis://127.0.0.1:6379/0 (TAGQ_REDIS_URL); empty: embedded in-memory store")
	fs.StringVar(&c.redisCluster, "redis-cluster", env("TAGQ_REDIS_CLUSTER", ""), "Redis Cluster seed addresses host:port,... (TAGQ_REDIS_CLUSTER)")
	fs.StringVar(&c.keyPrefix, "key-prefix", env("TAGQ_KEY_PREFIX", "tagq"), "prefix of every Redis key (TAGQ_KEY_PREFIX)")
	fs.StringVar(&c.logLevel, "log-level", env("TAGQ_LOG_LEVEL", "info"), "debug, info, warn or error (TAGQ_LOG_LEVEL)")
	fs.StringVar(&c.logFormat, "log-format", env("TAGQ_LOG_FORMAT", "text"), "text or json (TAGQ_LOG_FORMAT)")
	fs.BoolVar(&c.pprof, "pprof", env("TAGQ_PPROF", "") == "true", "serve Go profiles at /debug/pprof/ on the HTTP address (TAGQ_PPROF=true)")
	fs.BoolVar(&c.noRates, "no-rates", env("TAGQ_NO_RATES", "") == "true", "take no part in sampling the rates over time (GetQueueRates still serves what other replicas sample) (TAGQ_NO_RATES=true)")
	fs.BoolVar(&c.testClock, "test-clock", env("TAGQ_TEST_CLOCK", "") == "true", "tests only: a queue's clock is its test_clock_ms field when set, which costs a read per script call (TAGQ_TEST_CLOCK=true)")
	fs.StringVar(&c.tlsCert, "tls-cert", env("TAGQ_TLS_CERT", ""), "PEM certificate (chain) to serve TLS with on both listeners, reloaded when it changes (TAGQ_TLS_CERT)")
	fs.StringVar(&c.tlsKey, "tls-key", env("TAGQ_TLS_KEY", ""), "PEM private key of --tls-cert (TAGQ_TLS_KEY)")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", env("TAGQ_TLS_CLIENT_CA", ""), "PEM CA certificates: require client certificates they signed, on both listeners (mTLS) (TAGQ_TLS_CLIENT_CA)")
	fs.StringVar(&c.redisUsername, "redis-username", env("TAGQ_REDIS_USERNAME", ""), "Redis ACL user (TAGQ_REDIS_USERNAME)")
	fs.StringVar(&c.redisPassword, "redis-password", env("TAGQ_REDIS_PASSWORD", ""), "Redis password; prefer the environment variable (TAGQ_REDIS_PASSWORD)")
	fs.BoolVar(&c.redisTLS, "redis-tls", env("TAGQ_REDIS_TLS", "") == "true", "talk TLS to Redis (implied by rediss:// and --redis-ca) (TAGQ_REDIS_TLS=true)")
	fs.StringVar(&c.redisCA, "redis-ca", env("TAGQ_REDIS_CA", ""), "PEM CA certificates to verify Redis's certificate with; default: the system's (TAGQ_REDIS_CA)")
	fs.StringVar(&c.redisCert, "redis-cert", env("TAGQ_REDIS_CERT", ""), "PEM client certificate (chain) to present to Redis (tls-auth-clients); implies --redis-tls; reloaded when it changes (TAGQ_REDIS_CERT)")
	fs.StringVar(&c.redisKey, "redis-key", env("TAGQ_REDIS_KEY", ""), "PEM private key of --redis-cert (TAGQ_REDIS_KEY)")
	memThreshold := env("TAGQ_REDIS_MEMORY_THRESHOLD", "0.9")
	typedVar(fs, &memThreshold, "redis-memory-threshold", "refuse sends (STORAGE_FULL) while Redis's used_memory is at this `share` (0-1) of its maxmemory; 0 turns the memory watch off (TAGQ_REDIS_MEMORY_THRESHOLD)")
	memLimit := env("TAGQ_REDIS_MEMORY_LIMIT", "0")
	typedVar(fs, &memLimit, "redis-memory-limit", "for a Redis without maxmemory: refuse sends while used_memory is at this many `bytes` (suffixes kb, mb, gb); 0: no watch of such a Redis (TAGQ_REDIS_MEMORY_LIMIT)")
	memInterval := env("TAGQ_REDIS_MEMORY_INTERVAL", "1s")
	typedVar(fs, &memInterval, "redis-memory-interval", "how often to read Redis's memory, a `duration` from 100ms to 1m (TAGQ_REDIS_MEMORY_INTERVAL)")
	maxConns := env("TAGQ_MAX_CONNECTIONS", "10000")
	typedVar(fs, &maxConns, "max-connections", "most client connections (an `int`) open on each listener (gRPC, HTTP); one beyond is closed at once; 0: no limit (TAGQ_MAX_CONNECTIONS)")
	maxStreams := env("TAGQ_MAX_STREAMS", strconv.Itoa(server.DefaultMaxStreams))
	typedVar(fs, &maxStreams, "max-streams", "most Publish and Consume streams (an `int`) open in this process; one beyond ends at once with RESOURCE_EXHAUSTED (TOO_MANY_STREAMS); 0: no limit (TAGQ_MAX_STREAMS)")
	inFlight := env("TAGQ_MAX_REQUEST_BYTES_IN_FLIGHT", "256mb")
	typedVar(fs, &inFlight, "max-request-bytes-in-flight", "most `bytes` of requests held at once, over gRPC, REST, Connect and SQS (suffixes kb, mb, gb); beyond it calls are refused with RESOURCE_EXHAUSTED (TOO_MANY_REQUEST_BYTES, retry_after_ms; SQS: RequestThrottled); 0: no limit (TAGQ_MAX_REQUEST_BYTES_IN_FLIGHT)")
	perConn := env("TAGQ_MAX_STREAMS_PER_CONNECTION", strconv.Itoa(server.DefaultMaxStreamsPerConnection))
	typedVar(fs, &perConn, "max-streams-per-connection", "most concurrent calls (an `int`: streams, long polls, unary calls) on one gRPC connection; the client waits beyond it (TAGQ_MAX_STREAMS_PER_CONNECTION)")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	maxTags := env("TAGQ_QUEUE_METRICS_MAX_TAGS", strconv.Itoa(server.DefaultQueueMetricsMaxTags))
	typedVar(fs, &maxTags, "queue-metrics-max-tags", "at most this many tags (an `int`) get per-tag series on /metrics, queues in name order (TAGQ_QUEUE_METRICS_MAX_TAGS)")
	queueMetrics := env("TAGQ_QUEUE_METRICS_INTERVAL", "5s")
	typedVar(fs, &queueMetrics, "queue-metrics-interval", "how old (a `duration`) per-queue and per-tag series on /metrics may get before a scrape reads them again; 0 turns them off (TAGQ_QUEUE_METRICS_INTERVAL)")
	fs.StringVar(&c.handleKeyFile, "handle-key-file", env("TAGQ_HANDLE_KEY_FILE", ""), "file of receipt-handle signing keys, lines of id:base64key: the first signs, the rest are accepted (rotation); reloaded when it changes; default: a key kept in Redis (TAGQ_HANDLE_KEY_FILE)")
	fs.BoolVar(&c.auth, "auth", env("TAGQ_AUTH", "") == "true", "require credentials (API keys, client certificates) and permissions on every call (TAGQ_AUTH=true)")
	fs.StringVar(&c.adminKeyFile, "admin-key-file", env("TAGQ_ADMIN_KEY_FILE", ""), "file holding the bootstrap admin key (32+ characters), set as the admin principal's key on start; or the key itself in TAGQ_ADMIN_KEY (TAGQ_ADMIN_KEY_FILE)")
	fs.BoolVar(&c.insecure, "insecure", env("TAGQ_INSECURE", "") == "true", "serve a non-loopback address without --auth (TAGQ_INSECURE=true)")
	ackReplicas := env("TAGQ_ACK_REPLICAS", "auto")
	typedVar(fs, &ackReplicas, "ack-replicas", "acknowledge a write (send, ack, nack, dead letter, move, queue/tag/permission change) only once this many Redis replicas (`auto` or an int) have it (WAIT); auto: 1 once any master has a replica, else 0; 0: once the master has it (a failover may lose acknowledged writes) (TAGQ_ACK_REPLICAS)")
	ackTimeout := env("TAGQ_ACK_TIMEOUT", "2s")
	typedVar(fs, &ackTimeout, "ack-timeout", "how long (a `duration`, at most 10s) a write waits for its --ack-replicas; then the call is UNAVAILABLE (REPLICATION_TIMEOUT: it may have been stored) (TAGQ_ACK_TIMEOUT)")
	timeout := env("TAGQ_SHUTDOWN_TIMEOUT", "25s")
	stalled := env("TAGQ_STALLED_READ", "30s")
	typedVar(fs, &stalled, "stalled-read", "how long (a `duration`) a receive's read may sit unfinished (its tagqd died between its two steps) before any tagqd makes the messages visible again (TAGQ_STALLED_READ)")
	typedVar(fs, &timeout, "shutdown-timeout", "how long (a `duration`) a graceful shutdown may take (TAGQ_SHUTDOWN_TIMEOUT)")
	configFile := env("TAGQ_CONFIG_FILE", "")
	fs.StringVar(&configFile, "config", configFile, "YAML file of flag values (flag name: value); a flag or its TAGQ_* variable wins over the file (TAGQ_CONFIG_FILE)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	// tagqd takes flags only, but "tagqd version" is what people type: it
	// prints the version as --version does; any other word is refused
	// rather than ignored (a server that starts when asked its version).
	switch {
	case fs.NArg() == 1 && fs.Arg(0) == "version":
		c.version = true
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q: tagqd takes flags only (tagqd --help lists them; tagqd version prints the version)", fs.Arg(0))
	}
	if c.version {
		return c, nil // nothing else is read: the version prints whatever the environment holds
	}
	if configFile != "" {
		if err := applyConfigFile(fs, configFile); err != nil {
			return c, err
		}
	}
	d, err := time.ParseDuration(timeout)
	if err != nil || d <= 0 {
		return c, fmt.Errorf("--shutdown-timeout: %q is not a positive duration", timeout)
	}
	c.shutdownTimeout = d
	if err := c.parseMemoryFlags(memThreshold, memLimit, memInterval); err != nil {
		return c, err
	}
	if c.queueMetricsInterval, err = time.ParseDuration(queueMetrics); err != nil || c.queueMetricsInterval < 0 {
		return c, fmt.Errorf("--queue-metrics-interval: %q is not a duration of 0 or more", queueMetrics)
	}
	if c.queueMetricsMaxTags, err = strconv.Atoi(maxTags); err != nil || c.queueMetricsMaxTags < 1 {
		return c, fmt.Errorf("--queue-metrics-max-tags: %q is not a number of 1 or more", maxTags)
	}
	if c.maxConnections, err = strconv.Atoi(maxConns); err != nil || c.maxConnections < 0 {
		return c, fmt.Errorf("--max-connections: %q is not a number of 0 or more", maxConns)
	}
	if c.maxStreams, err = strconv.Atoi(maxStreams); err != nil || c.maxStreams < 0 {
		return c, fmt.Errorf("--max-streams: %q is not a number of 0 or more", maxStreams)
	}
	if c.maxInFlight, err = parseBytes(inFlight); err != nil {
		return c, fmt.Errorf("--max-request-bytes-in-flight: %w", err)
	}
	if n, err := strconv.ParseUint(perConn, 10, 32); err != nil || n < 1 {
		return c, fmt.Errorf("--max-streams-per-connection: %q is not a number of 1 or more", perConn)
	} else {
		c.maxStreamsPerConn = uint32(n)
	}
	if c.stalledRead, err = time.ParseDuration(stalled); err != nil || c.stalledRead <= 0 {
		return c, fmt.Errorf("--stalled-read: %q is not a positive duration", stalled)
	}
	if err := c.parseAckFlags(ackReplicas, ackTimeout); err != nil {
		return c, err
	}
	if c.redisURL != "" && c.redisCluster != "" {
		return c, errors.New("give --redis-url or --redis-cluster, not both")
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return c, errors.New("give both --tls-cert and --tls-key, or neither")
	}
	if (c.redisCert == "") != (c.redisKey == "") {
		return c, errors.New("give both --redis-cert and --redis-key, or neither")
	}
	if c.redisCert != "" && c.redisURL == "" && c.redisCluster == "" {
		return c, errors.New("--redis-cert needs --redis-url or --redis-cluster (the embedded store takes no certificate)")
	}
	if c.tlsClientCA != "" && c.tlsCert == "" {
		return c, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
	}
	if c.adminKeyFile != "" && !c.auth {
		return c, errAdminKeyWithoutAuth
	}
	// With --auth the SQS endpoint runs only when asked for: its SigV4
	// secrets are derived from a signing key that is kept in Redis unless
	// --sqs-signing-key-file gives it, so a default listener would make
	// whoever reads Redis able to call it as any principal.
	if c.auth && !sqsAddrGiven(fs) && c.sqsAddr != "" {
		c.sqsAddr, c.sqsOffForAuth = "", true
	}
	if c.sqsSigningKeyFile != "" && (!c.auth || c.sqsAddr == "") {
		return c, errors.New("--sqs-signing-key-file needs --auth and --sqs-addr")
	}
	return c, checkExposure(c)
}

// sqsAddrGiven reports whether --sqs-addr was given: on the command
// line, in the config file, or as TAGQ_SQS_ADDR.
func sqsAddrGiven(fs *flag.FlagSet) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "sqs-addr" })
	_, env := os.LookupEnv("TAGQ_SQS_ADDR")
	return given || env
}

// parseAckFlags reads --ack-replicas and --ack-timeout.
func (c *config) parseAckFlags(replicas, timeout string) error {
	if replicas == "auto" {
		c.ackReplicas = durable.Auto
	} else if n, err := strconv.Atoi(replicas); err != nil || n < 0 || n > maxAckReplicas {
		return fmt.Errorf("--ack-replicas: %q is not auto or a number of replicas from 0 to %d", replicas, maxAckReplicas)
	} else {
		c.ackReplicas = n
	}
	d, err := time.ParseDuration(timeout)
	if err != nil || d < 10*time.Millisecond || d > maxAckTimeout {
		return fmt.Errorf("--ack-timeout: %q is not a duration from 10ms to %s", timeout, maxAckTimeout)
	}
	c.ackTimeout = d
	if c.ackReplicas > 0 && c.redisURL == "" && c.redisCluster == "" {
		return fmt.Errorf("--ack-replicas %d: the embedded store has no replicas (give --redis-url or --redis-cluster, or --ack-replicas 0 or auto)", c.ackReplicas)
	}
	return nil
}

// maxAckReplicas and maxAckTimeout bound --ack-replicas and --ack-timeout
// (a long wait holds a Redis connection, and a coalesced send, as long).
const (
	maxAckReplicas = 16
	maxAckTimeout  = 10 * time.Second
)

// newLogger makes tagqd's logger, and makes go-redis log through it.
// Durations are written as Go durations ("1.5s"), in JSON too (where slog
// would write integer nanoseconds).
func newLogger(c config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration {
			a.Value = slog.StringValue(a.Value.Duration().String())
		}
		return a
	}}
	var log *slog.Logger
	switch c.logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(w, opts))
	case "json":
		log = slog.New(slog.NewJSONHandler(w, opts))
	default:
		return nil, fmt.Errorf("--log-format: %q is not text or json", c.logFormat)
	}
	redis.SetLogger(redisLogger{log.With("component", "go-redis")})
	return log, nil
}

// redisLogger writes go-redis's messages (pool and connection trouble) to
// tagqd's log as warnings, instead of plain text on standard error.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, fmt.Sprintf(format, v...))
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
	if c.version {
		fmt.Println("tagqd", version.Get())
		return
	}
	log, err := newLogger(c, os.Stderr)
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
