package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/tagqdtest"
)

// End-to-end tests of TLS: a real tagqd with --tls-cert/--tls-key (and
// --tls-client-ca), talked to over gRPC and REST.

func newCerts(t *testing.T) *tagqdtest.Certs {
	t.Helper()
	c, err := tagqdtest.NewCerts(t.TempDir())
	require.NoError(t, err)
	return c
}

// startProc starts tagqd with args and checks, at the end of the test, that
// it stops cleanly on SIGTERM.
func startProc(t *testing.T, args ...string) *tagqdtest.Daemon {
	t.Helper()
	proc, err := tagqdtest.Start(tagqdBin, args...)
	require.NoError(t, err)
	t.Cleanup(func() {
		took, err := proc.Stop()
		if err != nil {
			t.Errorf("tagqd exited with %v on SIGTERM, want status 0", err)
		}
		if took > maxShutdown {
			t.Errorf("tagqd took %v to stop on SIGTERM, want under %v", took, maxShutdown)
		}
		if t.Failed() {
			t.Logf("tagqd stderr:\n%s", proc.Stderr())
		}
	})
	return proc
}

// grpcQueues is a QueueService client over creds.
func grpcQueues(t *testing.T, addr string, creds credentials.TransportCredentials) tagqv1.QueueServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return tagqv1.NewQueueServiceClient(conn)
}

func tlsCreds(pool *x509.CertPool, certs ...tls.Certificate) credentials.TransportCredentials {
	return credentials.NewTLS(&tls.Config{RootCAs: pool, Certificates: certs})
}

// createQueue creates a queue over gRPC within 10 s.
func createQueue(q tagqv1.QueueServiceClient, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: name}})
	return err
}

// httpsClient trusts pool and presents certs.
func httpsClient(pool *x509.CertPool, certs ...tls.Certificate) *http.Client {
	return &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}, ForceAttemptHTTP2: true}}
}

// restCall sends a JSON request and decodes the JSON answer.
func restCall(c *http.Client, method, url, body string) (int, map[string]any, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, nil
}

// checkREST creates a queue and reads it back over REST: both go through
// the gateway to the gRPC server.
func checkREST(t *testing.T, c *http.Client, httpAddr, name string) {
	t.Helper()
	code, out, err := restCall(c, "POST", "https://"+httpAddr+"/v1/queues", `{"name": "`+name+`"}`)
	require.NoError(t, err)
	require.Equal(t, 200, code, "%v", out)
	code, out, err = restCall(c, "GET", "https://"+httpAddr+"/v1/queues/"+name, "")
	require.NoError(t, err)
	require.Equal(t, 200, code, "%v", out)
	require.Equal(t, name, jget(out, "queue", "name"))
}

func TestE2E_TLS_BothListeners(t *testing.T) {
	t.Parallel()
	certs := newCerts(t)
	d := startProc(t, certs.TLSArgs(false)...)

	// gRPC with the CA works; the queue is then visible over REST.
	require.NoError(t, createQueue(grpcQueues(t, d.GRPC, tlsCreds(certs.CA.Pool)), "tls-grpc"))
	hc := httpsClient(certs.CA.Pool)
	code, out, err := restCall(hc, "GET", "https://"+d.HTTP+"/v1/queues/tls-grpc", "")
	require.NoError(t, err)
	require.Equal(t, 200, code, "%v", out)
	// REST over https, through the gateway.
	checkREST(t, hc, d.HTTP, "tls-rest")
	resp, err := hc.Get("https://" + d.HTTP + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, 2, resp.ProtoMajor, "HTTP/2 is offered by ALPN")

	// Plaintext is refused on both listeners.
	require.Error(t, createQueue(grpcQueues(t, d.GRPC, insecure.NewCredentials()), "tls-plain"))
	code, _, err = restCall(&http.Client{Timeout: 10 * time.Second}, "POST", "http://"+d.HTTP+"/v1/queues", `{"name": "tls-plain"}`)
	if err == nil {
		require.Equal(t, http.StatusBadRequest, code, "an http:// request to the TLS port")
	}
	// A client that trusts another CA refuses tagqd's certificate.
	other, err := tagqdtest.NewCA(t.TempDir(), "other")
	require.NoError(t, err)
	require.ErrorContains(t, createQueue(grpcQueues(t, d.GRPC, tlsCreds(other.Pool)), "tls-other"), "certificate")
	_, _, err = restCall(httpsClient(other.Pool), "GET", "https://"+d.HTTP+"/healthz", "")
	require.ErrorContains(t, err, "certificate")
}

// servedSerial is the serial of the certificate a new TLS connection to
// addr gets.
func servedSerial(t *testing.T, addr string, pool *x509.CertPool) *big.Int {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
	require.NoError(t, err)
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}

// replaceFile writes data to path by a rename, as deployment tools do.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

func TestE2E_TLS_CertificateReloadsWithoutRestart(t *testing.T) {
	t.Parallel()
	certs := newCerts(t)
	// tagqd reads its own copies, which the test replaces.
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.pem"), filepath.Join(dir, "tls-key.pem")
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		require.NoError(t, err)
		replaceFile(t, to, b)
	}
	copyFile(certs.Server.CertFile, certFile)
	copyFile(certs.Server.KeyFile, keyFile)
	d := startProc(t, "--tls-cert", certFile, "--tls-key", keyFile)
	first := certs.Server.Cert.SerialNumber
	require.Equal(t, first, servedSerial(t, d.GRPC, certs.CA.Pool))
	require.Equal(t, first, servedSerial(t, d.HTTP, certs.CA.Pool))

	next, err := certs.CA.Server("server2")
	require.NoError(t, err)
	require.NotEqual(t, first, next.Cert.SerialNumber)
	copyFile(next.CertFile, certFile) // for a moment the pair does not match
	copyFile(next.KeyFile, keyFile)

	// tagqd looks at the files at most once a second: poll new connections.
	for _, addr := range []string{d.GRPC, d.HTTP} {
		deadline := time.Now().Add(15 * time.Second)
		for servedSerial(t, addr, certs.CA.Pool).Cmp(next.Cert.SerialNumber) != 0 {
			require.True(t, time.Now().Before(deadline), "%s still serves the first certificate after 15 s", addr)
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Calls work with the new certificate, on both listeners.
	require.NoError(t, createQueue(grpcQueues(t, d.GRPC, tlsCreds(certs.CA.Pool)), "reloaded"))
	checkREST(t, httpsClient(certs.CA.Pool), d.HTTP, "reloaded-rest")

	// A broken pair is logged and the certificate in use stays. (The
	// copies above may have logged a mismatched pair already.)
	refused := strings.Count(d.Stderr(), "do not load")
	replaceFile(t, certFile, []byte("not a certificate\n"))
	deadline := time.Now().Add(15 * time.Second)
	for strings.Count(d.Stderr(), "do not load") == refused {
		require.True(t, time.Now().Before(deadline), "no log of the broken certificate after 15 s")
		servedSerial(t, d.GRPC, certs.CA.Pool) // a handshake makes tagqd look
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, next.Cert.SerialNumber, servedSerial(t, d.GRPC, certs.CA.Pool))
	require.Equal(t, next.Cert.SerialNumber, servedSerial(t, d.HTTP, certs.CA.Pool))
}

func TestE2E_TLS_ClientCertificatesRequired(t *testing.T) {
	t.Parallel()
	certs := newCerts(t)
	d := startProc(t, certs.TLSArgs(true)...)

	// Without a client certificate: refused on both listeners.
	require.Error(t, createQueue(grpcQueues(t, d.GRPC, tlsCreds(certs.CA.Pool)), "mtls-none"))
	_, _, err := restCall(httpsClient(certs.CA.Pool), "GET", "https://"+d.HTTP+"/healthz", "")
	require.Error(t, err)
	// With a certificate of another CA: refused.
	other, err := tagqdtest.NewCA(t.TempDir(), "other")
	require.NoError(t, err)
	stranger, err := other.Client("stranger", "stranger")
	require.NoError(t, err)
	require.Error(t, createQueue(grpcQueues(t, d.GRPC, tlsCreds(certs.CA.Pool, stranger.TLS)), "mtls-stranger"))
	_, _, err = restCall(httpsClient(certs.CA.Pool, stranger.TLS), "GET", "https://"+d.HTTP+"/healthz", "")
	require.Error(t, err)

	// With the client certificate: gRPC, and REST through the gateway.
	require.NoError(t, createQueue(grpcQueues(t, d.GRPC, tlsCreds(certs.CA.Pool, certs.Client.TLS)), "mtls-grpc"))
	checkREST(t, httpsClient(certs.CA.Pool, certs.Client.TLS), d.HTTP, "mtls-rest")
}

func TestE2E_TLS_BadFilesNameTheFlag(t *testing.T) {
	t.Parallel()
	certs := newCerts(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--tls-cert", missing, "--tls-key", certs.Server.KeyFile}, 1, "--tls-cert"},
		{[]string{"--tls-cert", certs.Server.CertFile, "--tls-key", missing}, 1, "--tls-key"},
		{[]string{"--tls-cert", certs.Server.CertFile, "--tls-key", certs.Client.KeyFile}, 1, "--tls-cert/--tls-key"},
		{append(certs.TLSArgs(false), "--tls-client-ca", missing), 1, "--tls-client-ca"},
		{append(certs.TLSArgs(false), "--tls-client-ca", certs.Server.KeyFile), 1, "--tls-client-ca"},
		{[]string{"--tls-cert", certs.Server.CertFile}, 2, "--tls-key"},
		{[]string{"--tls-client-ca", certs.CA.File}, 2, "--tls-client-ca"},
	} {
		out, err := runTagqd(append([]string{"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, tc.args...)...)
		require.Equal(t, tc.code, exitCode(err), "%v: %s", tc.args, out)
		require.Contains(t, out, tc.want, "%v", tc.args)
	}
}
