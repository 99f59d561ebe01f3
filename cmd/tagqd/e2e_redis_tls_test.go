package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/tagqdtest"
)

// End-to-end tests of tagqd over a private redis-server with TLS and an
// ACL user (never the shared Redis on 6379).

// freePort is a loopback port nobody listens on (below 55536, so that a
// cluster bus port, +10000, exists too).
func freePort(t *testing.T) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port < 55536 {
			return port
		}
	}
	t.Fatal("no free port below 55536")
	return 0
}

// startRedis runs redis-server with args (in a temporary directory, no
// persistence) until the test ends or stop (which kills it) is called; it
// skips the test when there is no redis-server or it lacks a feature the
// arguments ask for.
func startRedis(t *testing.T, args ...string) (stop func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server (apt-get install -y redis-server)")
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	var once sync.Once
	stop = func() { once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(stop)
	ready := make(chan bool, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				ready <- true
				break
			}
		}
		ready <- false
		for sc.Scan() { // keep the pipe drained
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			if strings.Contains(strings.ToLower(log.String()), "tls") {
				t.Skipf("redis-server without TLS support:\n%s", log.String())
			}
			t.Fatalf("redis-server did not start:\n%s", log.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("redis-server not ready in 20 s")
	}
	return stop
}

// tlsRedis starts a redis-server that speaks TLS only (certificate of
// certs' CA), requires adminPass of its default user, and has an ACL user
// tagqu with password userpw. It returns a client to it as the default user.
func tlsRedis(t *testing.T, certs *tagqdtest.Certs, extra ...string) (int, *redis.Client) {
	t.Helper()
	port := freePort(t)
	startRedis(t, append([]string{"--port", "0", "--tls-port", strconv.Itoa(port),
		"--tls-cert-file", certs.Server.CertFile, "--tls-key-file", certs.Server.KeyFile,
		"--tls-ca-cert-file", certs.CA.File, "--tls-auth-clients", "no", "--requirepass", "adminpw"}, extra...)...)
	admin := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("localhost:%d", port), Password: "adminpw",
		TLSConfig: &tls.Config{RootCAs: certs.CA.Pool, ServerName: "localhost"}})
	t.Cleanup(func() { _ = admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "tagqu", "on", ">userpw", "~*", "&*", "+@all").Err())
	return port, admin
}

// checkWorks sends and receives a message through tagqd at addr.
func checkWorks(t *testing.T, addr string) {
	t.Helper()
	require.NoError(t, createQueue(grpcQueues(t, addr, insecure.NewCredentials()), "over-redis"))
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cc.Close()
	m := tagqv1.NewMessageServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "over-redis", Body: []byte("hello")})
	require.NoError(t, err)
	r, err := m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "over-redis"})
	require.NoError(t, err)
	require.Len(t, r.GetMessages(), 1)
	require.Equal(t, "hello", string(r.GetMessages()[0].GetBody()))
}

// keysUnder counts the keys of prefix in a Redis.
func keysUnder(t *testing.T, c redis.UniversalClient, prefix string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys, err := c.Keys(ctx, prefix+":*").Result()
	require.NoError(t, err)
	return len(keys)
}

// Not parallel: a subtest sets TAGQ_REDIS_PASSWORD.
func TestE2E_Redis_TLSAndACLUser(t *testing.T) {
	certs := newCerts(t)
	port, admin := tlsRedis(t, certs)
	info := []string{"--log-level", "info"}

	t.Run("rediss URL with user and password", func(t *testing.T) {
		url := fmt.Sprintf("rediss://tagqu:userpw@localhost:%d/0", port)
		d := startProc(t, append([]string{"--redis-url", url, "--redis-ca", certs.CA.File, "--key-prefix", "url"}, info...)...)
		checkWorks(t, d.GRPC)
		require.Positive(t, keysUnder(t, admin, "url"), "tagqd wrote to the TLS Redis")
		require.Contains(t, d.Stderr(), `msg="using Redis"`)
		require.Contains(t, d.Stderr(), "tls=true")
		require.Contains(t, d.Stderr(), "user=tagqu")
		require.NotContains(t, d.Stderr(), "userpw", "the password is never logged")
	})
	t.Run("flags and TAGQ_REDIS_PASSWORD", func(t *testing.T) {
		t.Setenv("TAGQ_REDIS_PASSWORD", "userpw")
		url := fmt.Sprintf("redis://localhost:%d/0", port)
		d := startProc(t, append([]string{"--redis-url", url, "--redis-tls", "--redis-ca", certs.CA.File,
			"--redis-username", "tagqu", "--key-prefix", "flags"}, info...)...)
		checkWorks(t, d.GRPC)
		require.Positive(t, keysUnder(t, admin, "flags"))
		require.NotContains(t, d.Stderr(), "userpw")
	})
	t.Run("wrong password", func(t *testing.T) {
		url := fmt.Sprintf("rediss://tagqu:wrongpw@localhost:%d/0", port)
		out, err := runTagqd(append([]string{"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
			"--redis-url", url, "--redis-ca", certs.CA.File}, info...)...)
		require.Equal(t, 1, exitCode(err), out)
		require.Contains(t, out, "WRONGPASS")
		require.NotContains(t, out, "wrongpw")
	})
	t.Run("Redis certificate not trusted", func(t *testing.T) {
		url := fmt.Sprintf("rediss://tagqu:userpw@localhost:%d/0", port)
		out, err := runTagqd("--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--redis-url", url)
		require.Equal(t, 1, exitCode(err), out)
		require.Contains(t, out, "certificate")
		require.NotContains(t, out, "userpw")
	})
	t.Run("unparsable URL is not echoed", func(t *testing.T) {
		out, err := runTagqd("--redis-url", "rediss://tagqu:userpw@localhost:notaport/0")
		require.Equal(t, 1, exitCode(err), out)
		require.Contains(t, out, "--redis-url")
		require.NotContains(t, out, "userpw")
	})
	t.Run("missing --redis-ca", func(t *testing.T) {
		out, err := runTagqd("--redis-url", fmt.Sprintf("rediss://localhost:%d/0", port), "--redis-ca", "/nonexistent/ca.pem")
		require.Equal(t, 1, exitCode(err), out)
		require.Contains(t, out, "--redis-ca")
	})
}

// A Redis that requires client certificates (tls-auth-clients yes): tagqd
// presents --redis-cert/--redis-key; without them the handshake fails and
// tagqd stops at start-up naming TLS.
func TestE2E_Redis_ClientCertificate(t *testing.T) {
	t.Parallel()
	certs := newCerts(t)
	port := freePort(t)
	startRedis(t, "--port", "0", "--tls-port", strconv.Itoa(port),
		"--tls-cert-file", certs.Server.CertFile, "--tls-key-file", certs.Server.KeyFile,
		"--tls-ca-cert-file", certs.CA.File, "--tls-auth-clients", "yes")
	admin := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("localhost:%d", port),
		TLSConfig: &tls.Config{RootCAs: certs.CA.Pool, ServerName: "localhost", Certificates: []tls.Certificate{certs.Client.TLS}}})
	t.Cleanup(func() { _ = admin.Close() })
	url := fmt.Sprintf("rediss://localhost:%d/0", port)

	d := startProc(t, "--redis-url", url, "--redis-ca", certs.CA.File, "--redis-cert", certs.Client.CertFile,
		"--redis-key", certs.Client.KeyFile, "--key-prefix", "clientcert", "--log-level", "info")
	checkWorks(t, d.GRPC)
	require.Positive(t, keysUnder(t, admin, "clientcert"), "tagqd wrote to the Redis that checks client certificates")
	require.Contains(t, d.Stderr(), "client_cert=true")

	out, err := runTagqd("--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--redis-url", url,
		"--redis-ca", certs.CA.File)
	require.Equal(t, 1, exitCode(err), out)
	// Refused at the handshake. With TLS 1.3 the client may finish its side
	// before Redis checks the certificate, so what tagqd sees is either the
	// alert ("certificate required") or the connection cut after it.
	low := strings.ToLower(out)
	require.True(t, strings.Contains(low, "certificate") || strings.Contains(low, "connection reset") ||
		strings.Contains(low, "broken pipe") || strings.Contains(low, "eof"), "no client certificate: refused at the handshake:\n%s", out)
	require.Contains(t, out, "tagqd stopped")

	out, err = runTagqd("--redis-url", url, "--redis-cert", certs.Client.CertFile)
	require.Equal(t, 2, exitCode(err), out) // a usage error
	require.Contains(t, out, "--redis-cert and --redis-key")
	out, err = runTagqd("--redis-url", url, "--redis-cert", "/nonexistent/c.pem", "--redis-key", certs.Client.KeyFile)
	require.Equal(t, 1, exitCode(err), out)
	require.Contains(t, out, "--redis-cert")
	out, err = runTagqd("--redis-cert", certs.Client.CertFile, "--redis-key", certs.Client.KeyFile)
	require.Equal(t, 2, exitCode(err), out)
	require.Contains(t, out, "embedded store")
}

func TestE2E_Redis_ClusterFlagsWithTLSAndACLUser(t *testing.T) {
	t.Parallel()
	certs := newCerts(t)
	port, admin := tlsRedis(t, certs, "--cluster-enabled", "yes", "--tls-cluster", "yes",
		"--cluster-announce-ip", "127.0.0.1") // a lone node knows no address of its own
	// A one-node cluster: it serves every slot.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err())
	for {
		s, err := admin.ClusterInfo(ctx).Result()
		require.NoError(t, err, "cluster_state not ok in 20 s")
		if strings.Contains(s, "cluster_state:ok") {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("cluster_state not ok in 20 s:\n%s", s)
		case <-time.After(50 * time.Millisecond):
		}
	}
	d := startProc(t, "--redis-cluster", fmt.Sprintf("localhost:%d", port), "--redis-tls", "--redis-ca", certs.CA.File,
		"--redis-username", "tagqu", "--redis-password", "userpw", "--key-prefix", "cluster", "--log-level", "info")
	checkWorks(t, d.GRPC)
	require.Positive(t, keysUnder(t, admin, "cluster"))
	require.Contains(t, d.Stderr(), `msg="using Redis Cluster"`)
	require.Contains(t, d.Stderr(), "tls=true")
	require.NotContains(t, d.Stderr(), "userpw")
}
