package main

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Not parallel: the tests set environment variables.

// clearEnv unsets tagqd's variables for the test (restored afterwards).
func clearEnv(t *testing.T) {
	for _, name := range []string{"TAGQ_GRPC_ADDR", "TAGQ_HTTP_ADDR", "TAGQ_REDIS_URL", "TAGQ_REDIS_CLUSTER", "TAGQ_KEY_PREFIX",
		"TAGQ_LOG_LEVEL", "TAGQ_LOG_FORMAT", "TAGQ_SHUTDOWN_TIMEOUT", "TAGQ_PPROF", "TAGQ_TLS_CERT", "TAGQ_TLS_KEY",
		"TAGQ_TLS_CLIENT_CA", "TAGQ_REDIS_USERNAME", "TAGQ_REDIS_PASSWORD", "TAGQ_REDIS_TLS", "TAGQ_REDIS_CA"} {
		t.Setenv(name, "") // registers the restore
		require.NoError(t, os.Unsetenv(name))
	}
}

func TestParseFlags_Defaults(t *testing.T) {
	clearEnv(t)
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, config{grpcAddr: ":9090", httpAddr: ":8080", keyPrefix: "tagq", logLevel: "info", logFormat: "text",
		shutdownTimeout: 25 * time.Second}, c)
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
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, config{grpcAddr: "127.0.0.1:1", httpAddr: "127.0.0.1:2", redisURL: "redis://env:6379/0",
		keyPrefix: "envprefix", logLevel: "debug", logFormat: "json", shutdownTimeout: 3 * time.Second}, c)

	c, err = parseFlags([]string{"--grpc-addr", ":7", "--redis-url", "redis://flag:6379/1", "--key-prefix", "flagprefix",
		"--log-format", "text", "--shutdown-timeout", "1m"})
	require.NoError(t, err)
	require.Equal(t, ":7", c.grpcAddr)
	require.Equal(t, "127.0.0.1:2", c.httpAddr, "no flag: the environment")
	require.Equal(t, "redis://flag:6379/1", c.redisURL)
	require.Equal(t, "flagprefix", c.keyPrefix)
	require.Equal(t, "text", c.logFormat)
	require.Equal(t, time.Minute, c.shutdownTimeout)
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

func TestParseFlags_Refuses(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{
		{"--shutdown-timeout", "soon"},
		{"--shutdown-timeout", "0s"},
		{"--redis-url", "redis://a", "--redis-cluster", "b:1,c:2"},
		{"--no-such-flag"},
		{"--tls-cert", "c.pem"},
		{"--tls-key", "k.pem"},
		{"--tls-client-ca", "ca.pem"},
	} {
		_, err := parseFlags(args)
		require.Error(t, err, "%v", args)
	}
	t.Setenv("TAGQ_REDIS_CLUSTER", "a:1,b:2")
	_, err := parseFlags([]string{"--redis-url", "redis://a"})
	require.Error(t, err, "a URL flag with a cluster in the environment is ambiguous")
}

func TestNewLogger_Refuses(t *testing.T) {
	_, err := newLogger(config{logLevel: "loud", logFormat: "text"})
	require.Error(t, err)
	_, err = newLogger(config{logLevel: "info", logFormat: "xml"})
	require.Error(t, err)
}
