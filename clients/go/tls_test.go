package tagq_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	tagq "github.com/tagq/tagq/clients/go"
	"github.com/tagq/tagq/internal/tagqdtest"
)

// startTLS starts a tagqd serving TLS with certs' server certificate
// (requiring client certificates when mtls), stopped when the test ends.
func startTLS(t *testing.T, certs *tagqdtest.Certs, mtls bool) *tagqdtest.Daemon {
	t.Helper()
	d, err := tagqdtest.Start(tagqdtest.Binary, certs.TLSArgs(mtls)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := d.Stop()
		require.NoError(t, err)
	})
	return d
}

// works is whether a queue can be created through c.
func works(t *testing.T, c *tagq.Client, queue string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := c.CreateQueue(ctx, queue, tagq.QueueOptions{})
	return err
}

func dialTLS(t *testing.T, target string, opts ...grpc.DialOption) *tagq.Client {
	t.Helper()
	c, err := tagq.Dial(target, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestDial_TLS(t *testing.T) {
	t.Parallel()
	certs, err := tagqdtest.NewCerts(t.TempDir())
	require.NoError(t, err)
	d := startTLS(t, certs, false)

	require.NoError(t, works(t, dialTLS(t, d.GRPC, tagq.WithTLS(certs.CA.File)), "tls-cafile"))
	require.NoError(t, works(t, dialTLS(t, d.GRPC, tagq.WithCertPool(certs.CA.Pool)), "tls-pool"))
	require.NoError(t, works(t, dialTLS(t, "localhost:"+portOf(d.GRPC), tagq.WithTLS(certs.CA.File)), "tls-name"))
	require.Error(t, works(t, dialTLS(t, d.GRPC), "tls-plain"), "plaintext Dial")
	require.ErrorContains(t, works(t, dialTLS(t, d.GRPC, tagq.WithTLS("")), "tls-system"), "certificate",
		"the system roots do not know the test CA")
	require.ErrorContains(t, works(t, dialTLS(t, d.GRPC, tagq.WithTLS(certs.CA.File), tagq.WithServerName("tagq.example")),
		"tls-wrongname"), "tagq.example")
}

func TestDial_ClientCertificate(t *testing.T) {
	t.Parallel()
	certs, err := tagqdtest.NewCerts(t.TempDir())
	require.NoError(t, err)
	d := startTLS(t, certs, true)

	require.Error(t, works(t, dialTLS(t, d.GRPC, tagq.WithTLS(certs.CA.File)), "mtls-none"))
	// In either order.
	require.NoError(t, works(t, dialTLS(t, d.GRPC, tagq.WithTLS(certs.CA.File),
		tagq.WithClientCert(certs.Client.CertFile, certs.Client.KeyFile)), "mtls-1"))
	require.NoError(t, works(t, dialTLS(t, d.GRPC, tagq.WithClientCert(certs.Client.CertFile, certs.Client.KeyFile),
		tagq.WithCertPool(certs.CA.Pool)), "mtls-2"))
}

func TestDial_TLSFilesThatDoNotLoad(t *testing.T) {
	t.Parallel()
	certs, err := tagqdtest.NewCerts(t.TempDir())
	require.NoError(t, err)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, opts := range [][]grpc.DialOption{
		{tagq.WithTLS(missing)},
		{tagq.WithTLS(certs.Server.KeyFile)}, // no certificate in it
		{tagq.WithTLS(certs.CA.File), tagq.WithClientCert(missing, certs.Client.KeyFile)},
		{tagq.WithTLS(certs.CA.File), tagq.WithClientCert(certs.Client.CertFile, certs.Server.KeyFile)},
		{tagq.WithClientCert(certs.Client.CertFile, "")},
	} {
		_, err := tagq.Dial("127.0.0.1:1", opts...)
		require.Error(t, err)
	}
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}
