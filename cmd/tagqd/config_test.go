package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/durable"
)

// Not parallel: the tests set environment variables.

// clearEnv unsets tagqd's variables for the test (restored afterwards).
func clearEnv(t *testing.T) {
	for _, name := range []string{"TAGQ_GRPC_ADDR", "TAGQ_HTTP_ADDR", "TAGQ_REDIS_URL", "TAGQ_REDIS_CLUSTER", "TAGQ_KEY_PREFIX",
		"TAGQ_LOG_LEVEL", "TAGQ_LOG_FORMAT", "TAGQ_SHUTDOWN_TIMEOUT", "TAGQ_PPROF", "TAGQ_TLS_CERT", "TAGQ_TLS_KEY",
		"TAGQ_TLS_CLIENT_CA", "TAGQ_REDIS_USERNAME", "TAGQ_REDIS_PASSWORD", "TAGQ_REDIS_TLS", "TAGQ_REDIS_CA",
		"TAGQ_QUEUE_METRICS_INTERVAL", "TAGQ_QUEUE_METRICS_MAX_TAGS", "TAGQ_STALLED_READ", "TAGQ_HANDLE_KEY_FILE",
		"TAGQ_AUTH", "TAGQ_INSECURE", "TAGQ_ADMIN_KEY", "TAGQ_ADMIN_KEY_FILE",
		"TAGQ_REDIS_MEMORY_THRESHOLD", "TAGQ_REDIS_MEMORY_LIMIT", "TAGQ_REDIS_MEMORY_INTERVAL", "TAGQ_CONFIG_FILE",
		"TAGQ_MAX_CONNECTIONS", "TAGQ_MAX_STREAMS", "TAGQ_MAX_STREAMS_PER_CONNECTION", "TAGQ_MAX_REQUEST_BYTES_IN_FLIGHT",
		"TAGQ_ACK_REPLICAS", "TAGQ_ACK_TIMEOUT", "TAGQ_SQS_ADDR", "TAGQ_SQS_SIGNING_KEY_FILE"} {
		t.Setenv(name, "") // registers the restore
		require.NoError(t, os.Unsetenv(name))
	}
}

func TestParseFlags_Defaults(t *testing.T) {
	clearEnv(t)
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, config{grpcAddr: "127.0.0.1:9090", httpAddr: "127.0.0.1:8080", sqsAddr: "127.0.0.1:9324", keyPrefix: "tagq", logLevel: "info", logFormat: "text",
		shutdownTimeout: 25 * time.Second, queueMetricsInterval: 5 * time.Second, queueMetricsMaxTags: 10000,
		stalledRead: 30 * time.Second, memThreshold: 0.9, memInterval: time.Second,
		maxConnections: 10000, maxStreams: 10000, maxStreamsPerConn: 1000, maxInFlight: 256 << 20,
		ackReplicas: durable.Auto, ackTimeout: 2 * time.Second}, c)
}

func TestParseFlags_EnvironmentThenFlagWins(t *testing.T) {
	clearEnv(t)
	t.Setenv("TAGQ_GRPC_ADDR", "127.0.0.1:1")
	t.Setenv("TAGQ_HTTP_ADDR", "127.0.0.1:2")
	t.Setenv("TAGQ_REDIS_URL", "redis://env:6379/0")
	t.Setenv("TAGQ_KEY_PREFIX", "envprefix")
	t.Setenv("TAGQ_LOG_LEVEL", "debug")
	t.Setenv("TAGQ_LOG_FORMAT", "json")
	t.Setenv("TAGQ_SHUTDOWN_TIMEOUT", "3s")
	t.Setenv("TAGQ_STALLED_READ", "4s")
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, config{grpcAddr: "127.0.0.1:1", httpAddr: "127.0.0.1:2", sqsAddr: "127.0.0.1:9324", redisURL: "redis://env:6379/0",
		keyPrefix: "envprefix", logLevel: "debug", logFormat: "json", shutdownTimeout: 3 * time.Second,
		queueMetricsInterval: 5 * time.Second, queueMetricsMaxTags: 10000, stalledRead: 4 * time.Second,
		memThreshold: 0.9, memInterval: time.Second, maxConnections: 10000, maxStreams: 10000, maxStreamsPerConn: 1000,
		maxInFlight: 256 << 20, ackReplicas: durable.Auto, ackTimeout: 2 * time.Second}, c)

	c, err = parseFlags([]string{"--grpc-addr", "127.0.0.1:7", "--redis-url", "redis://flag:6379/1", "--key-prefix", "flagprefix",
		"--log-format", "text", "--shutdown-timeout", "1m", "--stalled-read", "5s"})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7", c.grpcAddr)
	require.Equal(t, "127.0.0.1:2", c.httpAddr, "no flag: the environment")
	require.Equal(t, "redis://flag:6379/1", c.redisURL)
	require.Equal(t, "flagprefix", c.keyPrefix)
	require.Equal(t, "text", c.logFormat)
	require.Equal(t, time.Minute, c.shutdownTimeout)
	require.Equal(t, 5*time.Second, c.stalledRead)
}

func TestParseFlags_TLSAndRedisAuthFromEnvironment(t *testing.T) {
	clearEnv(t)
	t.Setenv("TAGQ_TLS_CERT", "/c.pem")
	t.Setenv("TAGQ_TLS_KEY", "/k.pem")
	t.Setenv("TAGQ_TLS_CLIENT_CA", "/ca.pem")
	t.Setenv("TAGQ_REDIS_USERNAME", "tagq")
	t.Setenv("TAGQ_REDIS_PASSWORD", "s3cret")
	t.Setenv("TAGQ_REDIS_TLS", "true")
	t.Setenv("TAGQ_REDIS_CA", "/redis-ca.pem")
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, "/c.pem", c.tlsCert)
	require.Equal(t, "/k.pem", c.tlsKey)
	require.Equal(t, "/ca.pem", c.tlsClientCA)
	require.Equal(t, "tagq", c.redisUsername)
	require.Equal(t, "s3cret", c.redisPassword)
	require.True(t, c.redisTLS)
	require.Equal(t, "/redis-ca.pem", c.redisCA)
	c, err = parseFlags([]string{"--tls-cert", "/c2.pem", "--redis-password", "other"})
	require.NoError(t, err)
	require.Equal(t, "/c2.pem", c.tlsCert, "a flag wins")
	require.Equal(t, "other", c.redisPassword)
}

func TestParseFlags_Limits(t *testing.T) {
	clearEnv(t)
	t.Setenv("TAGQ_MAX_CONNECTIONS", "5")
	t.Setenv("TAGQ_MAX_STREAMS", "0")
	t.Setenv("TAGQ_MAX_STREAMS_PER_CONNECTION", "7")
	t.Setenv("TAGQ_MAX_REQUEST_BYTES_IN_FLIGHT", "1gb")
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, 5, c.maxConnections)
	require.Equal(t, 0, c.maxStreams)
	require.Equal(t, uint32(7), c.maxStreamsPerConn)
	require.Equal(t, int64(1<<30), c.maxInFlight)
	c, err = parseFlags([]string{"--max-connections", "0", "--max-streams", "3", "--max-request-bytes-in-flight", "0"})
	require.NoError(t, err)
	require.Equal(t, 0, c.maxConnections, "a flag wins")
	require.Equal(t, 3, c.maxStreams)
	require.Equal(t, int64(0), c.maxInFlight)
}

func TestParseFlags_AckReplicas(t *testing.T) {
	clearEnv(t)
	t.Setenv("TAGQ_ACK_REPLICAS", "2")
	t.Setenv("TAGQ_ACK_TIMEOUT", "750ms")
	c, err := parseFlags([]string{"--redis-url", "redis://r:6379/0"})
	require.NoError(t, err)
	require.Equal(t, 2, c.ackReplicas)
	require.Equal(t, 750*time.Millisecond, c.ackTimeout)
	require.Equal(t, 3750*time.Millisecond, readTimeout(c), "the wait, and go-redis's 3 s for the rest")
	c, err = parseFlags([]string{"--redis-url", "redis://r:6379/0", "--ack-replicas", "0", "--ack-timeout", "5s"})
	require.NoError(t, err)
	require.Equal(t, 0, c.ackReplicas, "a flag wins")
	require.Equal(t, 8*time.Second, readTimeout(c), "a round trip carrying a 5 s wait")
	c, err = parseFlags([]string{"--ack-replicas", "auto"})
	require.NoError(t, err)
	require.Equal(t, durable.Auto, c.ackReplicas, "auto on the embedded store: it resolves to none")
}

func TestParseFlags_HandleKeyFile(t *testing.T) {
	clearEnv(t)
	t.Setenv("TAGQ_HANDLE_KEY_FILE", "/etc/tagq/keys")
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, "/etc/tagq/keys", c.handleKeyFile)
	c, err = parseFlags([]string{"--handle-key-file", "/k"})
	require.NoError(t, err)
	require.Equal(t, "/k", c.handleKeyFile, "a flag wins")
}

func TestParseFlags_Refuses(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{
		{"--shutdown-timeout", "soon"},
		{"--shutdown-timeout", "0s"},
		{"--stalled-read", "soon"},
		{"--stalled-read", "-1s"},
		{"--ack-replicas", "two"},
		{"--ack-replicas", "-1"},
		{"--ack-replicas", "1"}, // the embedded store has no replicas
		{"--ack-timeout", "0s"},
		{"--ack-timeout", "11s"},
		{"--redis-url", "redis://a", "--redis-cluster", "b:1,c:2"},
		{"--no-such-flag"},
		{"--tls-cert", "c.pem"},
		{"--tls-key", "k.pem"},
		{"--tls-client-ca", "ca.pem"},
		{"--redis-memory-threshold", "1.5"},
		{"--redis-memory-threshold", "most"},
		{"--redis-memory-limit", "-1"},
		{"--redis-memory-limit", "4tb"},
		{"--redis-memory-interval", "1ms"},
		{"--queue-metrics-interval", "often"},
		{"--queue-metrics-interval", "-1s"},
		{"--queue-metrics-max-tags", "0"},
		{"--queue-metrics-max-tags", "many"},
		{"--admin-key-file", "key"}, // without --auth
		{"--max-connections", "-1"},
		{"--max-connections", "lots"},
		{"--max-streams", "-1"},
		{"--max-streams-per-connection", "0"},
		{"--max-request-bytes-in-flight", "-1"},
		{"--max-request-bytes-in-flight", "lots"},
	} {
		_, err := parseFlags(args)
		require.Error(t, err, "%v", args)
	}
	t.Setenv("TAGQ_REDIS_CLUSTER", "a:1,b:2")
	_, err := parseFlags([]string{"--redis-url", "redis://a"})
	require.Error(t, err, "a URL flag with a cluster in the environment is ambiguous")
}

func TestNewLogger_Refuses(t *testing.T) {
	_, err := newLogger(config{logLevel: "loud", logFormat: "text"}, io.Discard)
	require.Error(t, err)
	_, err = newLogger(config{logLevel: "info", logFormat: "xml"}, io.Discard)
	require.Error(t, err)
}

func TestParseFlags_MemoryWatch(t *testing.T) {
	clearEnv(t)
	t.Setenv("TAGQ_REDIS_MEMORY_LIMIT", "2gb")
	c, err := parseFlags([]string{"--redis-memory-threshold", "0.8", "--redis-memory-interval", "5s"})
	require.NoError(t, err)
	require.Equal(t, 0.8, c.memoryRatio())
	require.Equal(t, int64(2<<30), c.memLimit)
	require.Equal(t, 5*time.Second, c.memInterval)
	c, err = parseFlags([]string{"--redis-memory-threshold", "0", "--redis-memory-limit", "1048576"})
	require.NoError(t, err)
	require.Negative(t, c.memoryRatio(), "0 turns the watch off")
	require.Equal(t, int64(1<<20), c.memLimit)
}

func TestParseFlags_QueueMetrics(t *testing.T) {
	clearEnv(t)
	t.Setenv("TAGQ_QUEUE_METRICS_INTERVAL", "0")
	t.Setenv("TAGQ_QUEUE_METRICS_MAX_TAGS", "50")
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Zero(t, c.queueMetricsInterval)
	require.Equal(t, 50, c.queueMetricsMaxTags)
	c, err = parseFlags([]string{"--queue-metrics-interval", "30s", "--queue-metrics-max-tags", "7"})
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, c.queueMetricsInterval)
	require.Equal(t, 7, c.queueMetricsMaxTags)
	t.Setenv("TAGQ_QUEUE_METRICS_MAX_TAGS", "lots")
	_, err = parseFlags(nil)
	require.ErrorContains(t, err, "--queue-metrics-max-tags")
}

// In JSON, durations are Go durations, and go-redis's own messages are
// JSON lines of the same log.
func TestNewLogger_JSONDurationsAndGoRedis(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(config{logLevel: "info", logFormat: "json"}, &buf)
	require.NoError(t, err)
	log.Info("took", "elapsed", 1500*time.Millisecond)
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
	require.Equal(t, "1.5s", line["elapsed"])

	buf.Reset()
	redisLogger{log.With("component", "go-redis")}.Printf(context.Background(), "redis: %s", "example")
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), buf.String())
	require.Equal(t, "redis: example", line["msg"])
	require.Equal(t, "go-redis", line["component"])
	require.Equal(t, "WARN", line["level"])
}

// With --auth the SQS endpoint is off unless --sqs-addr is given: on the
// command line, as TAGQ_SQS_ADDR or in the config file. Without --auth it
// is on at its default address.
func TestParseFlags_SQSWithAuthOnlyWhenGiven(t *testing.T) {
	clearEnv(t)
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9324", c.sqsAddr)
	require.False(t, c.sqsOffForAuth)

	c, err = parseFlags([]string{"--auth"})
	require.NoError(t, err)
	require.Empty(t, c.sqsAddr)
	require.True(t, c.sqsOffForAuth)
	_, err = parseFlags([]string{"--auth", "--sqs-signing-key-file", "/k"})
	require.ErrorContains(t, err, "--sqs-signing-key-file needs --auth and --sqs-addr")

	c, err = parseFlags([]string{"--auth", "--sqs-addr", "127.0.0.1:9324"})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9324", c.sqsAddr, "given, even at its default")
	c, err = parseFlags([]string{"--auth", "--sqs-addr", ""})
	require.NoError(t, err)
	require.Empty(t, c.sqsAddr)
	require.False(t, c.sqsOffForAuth, "turned off by the flag itself")

	file := filepath.Join(t.TempDir(), "tagqd.yaml")
	require.NoError(t, os.WriteFile(file, []byte("auth: true\nsqs-addr: 127.0.0.1:9400\n"), 0o600))
	c, err = parseFlags([]string{"--config", file})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9400", c.sqsAddr, "from the config file")

	t.Setenv("TAGQ_SQS_ADDR", "127.0.0.1:9401")
	c, err = parseFlags([]string{"--auth"})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9401", c.sqsAddr, "from the environment")
}

// A non-loopback address needs --auth, or --insecure to go without.
func TestParseFlags_LoopbackUnlessAuthOrInsecure(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{
		{"--grpc-addr", ":9090"},
		{"--http-addr", "0.0.0.0:8080"},
		{"--grpc-addr", "[::]:9090"},
		{"--http-addr", "192.0.2.1:8080"},
		{"--grpc-addr", "tagq.example:9090"},
		{"--sqs-addr", "0.0.0.0:9324"},
	} {
		_, err := parseFlags(args)
		require.ErrorContains(t, err, args[0], "the error names the flag")
		require.ErrorContains(t, err, "--auth")
		require.ErrorContains(t, err, "--insecure")
		_, err = parseFlags(append(args, "--auth"))
		require.NoError(t, err, "%v --auth", args)
		_, err = parseFlags(append(args, "--insecure"))
		require.NoError(t, err, "%v --insecure", args)
	}
	for _, addr := range []string{"127.0.0.1:1", "127.3.2.1:1", "[::1]:1", "localhost:1"} {
		_, err := parseFlags([]string{"--grpc-addr", addr})
		require.NoError(t, err, addr)
	}
	t.Setenv("TAGQ_AUTH", "true")
	c, err := parseFlags([]string{"--grpc-addr", ":1"})
	require.NoError(t, err)
	require.True(t, c.auth)
}

// The bootstrap admin key: the file's content (its line end dropped), else
// TAGQ_ADMIN_KEY; the file wins.
func TestAdminKey_FileThenEnvironment(t *testing.T) {
	clearEnv(t)
	key, from, err := adminKey(config{})
	require.NoError(t, err)
	require.Empty(t, key, "none given")
	t.Setenv("TAGQ_ADMIN_KEY", "from the environment, 32 characters long")
	key, from, err = adminKey(config{})
	require.NoError(t, err)
	require.Equal(t, "from the environment, 32 characters long", key)
	require.Equal(t, "TAGQ_ADMIN_KEY", from)
	f := filepath.Join(t.TempDir(), "admin.key")
	require.NoError(t, os.WriteFile(f, []byte("from the file, and 32 characters long\r\n"), 0o600))
	key, from, err = adminKey(config{adminKeyFile: f})
	require.NoError(t, err)
	require.Equal(t, "from the file, and 32 characters long", key)
	require.Equal(t, "--admin-key-file", from)
	_, _, err = adminKey(config{adminKeyFile: f + ".missing"})
	require.ErrorContains(t, err, "--admin-key-file")
}

// Every flag's environment variable is flagEnv's name for it (the config
// file relies on it to let the environment win).
func TestFlagEnvNames(t *testing.T) {
	clearEnv(t)
	fs := flag.NewFlagSet("tagqd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	_, err := parseFlagsInto(fs, nil)
	require.NoError(t, err)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "version" || f.Name == "config" {
			return
		}
		require.Contains(t, f.Usage, flagEnv(f.Name), "flag --%s", f.Name)
		n++
	})
	require.Greater(t, n, 25)
}

func TestParseFlags_ConfigFile(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	file := write("tagqd.yaml", `
grpc-addr: 127.0.0.1:7000
http-addr: 127.0.0.1:7001
shutdown-timeout: 3s
queue-metrics-max-tags: 7
redis-memory-threshold: 0.5
max-request-bytes-in-flight: 64mb
pprof: true
`)
	t.Setenv("TAGQ_HTTP_ADDR", "127.0.0.1:7002")
	c, err := parseFlags([]string{"--config", file, "--shutdown-timeout", "1m"})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7000", c.grpcAddr, "the file over the default")
	require.Equal(t, "127.0.0.1:7002", c.httpAddr, "the environment over the file")
	require.Equal(t, time.Minute, c.shutdownTimeout, "the flag over the file")
	require.Equal(t, 7, c.queueMetricsMaxTags)
	require.Equal(t, 0.5, c.memThreshold)
	require.Equal(t, int64(64<<20), c.maxInFlight)
	require.True(t, c.pprof)

	t.Setenv("TAGQ_CONFIG_FILE", file)
	c, err = parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7000", c.grpcAddr, "TAGQ_CONFIG_FILE names the file")
	t.Setenv("TAGQ_CONFIG_FILE", "")

	for body, want := range map[string]string{
		"grpc-adr: x\n":             `"grpc-adr" is not a flag`,
		"version: true\n":           `"version" is not a flag`,
		"pprof: maybe\n":            "pprof",
		"grpc-addr: [a, b]\n":       "grpc-addr: a []interface {}, not a single value",
		"shutdown-timeout: soon\n":  "--shutdown-timeout",
		"- just\n- a list\n":        "not a YAML map",
		"queue-metrics-max-tags:\n": "queue-metrics-max-tags: no value",
	} {
		_, err := parseFlags([]string{"--config", write("bad.yaml", body)})
		require.ErrorContains(t, err, want, body)
	}
	_, err = parseFlags([]string{"--config", filepath.Join(dir, "missing.yaml")})
	require.ErrorContains(t, err, "--config")
}

func TestOpenRedis_ReadTimeoutCoversTheAckTimeout(t *testing.T) {
	clearEnv(t)
	c, err := parseFlags([]string{"--redis-url", "redis://127.0.0.1:1/0?read_timeout=2s"})
	require.NoError(t, err)
	_, err = openRedis(c, slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "read_timeout 2s is too short for --ack-timeout 2s: give at least 5s")
	c, err = parseFlags([]string{"--redis-url", "redis://127.0.0.1:1/0?read_timeout=6s"})
	require.NoError(t, err)
	rc, err := openRedis(c, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	rc.close()
}
