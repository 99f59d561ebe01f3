package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/tagqdtest"
)

// runAt runs one command line in-process against the tagqd at target.
func runAt(target string, args ...string) (string, string, int) {
	return runBare("", append([]string{"--addr", target}, args...)...)
}

func TestCLI_TLSFlags(t *testing.T) {
	certs, err := tagqdtest.NewCerts(t.TempDir())
	require.NoError(t, err)
	for _, mtls := range []bool{false, true} {
		d, err := tagqdtest.Start(tagqdtest.Binary, certs.TLSArgs(mtls)...)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = d.Stop() })

		_, errs, code := runAt(d.GRPC, "queue", "list")
		require.Equal(t, 1, code, "plaintext to a TLS tagqd")
		require.Contains(t, errs, "--ca")
		if mtls {
			_, errs, code = runAt(d.GRPC, "--ca", certs.CA.File, "queue", "list")
			require.Equal(t, 1, code, "no client certificate")
			require.Contains(t, errs, "--cert")
			_, errs, code = runAt(d.GRPC, "--ca", certs.CA.File, "--cert", certs.Client.CertFile, "queue", "list")
			require.Equal(t, 2, code, "--cert without --key: %s", errs)
		}
		args := []string{"--ca", certs.CA.File}
		if mtls {
			args = append(args, "--cert", certs.Client.CertFile, "--key", certs.Client.KeyFile)
		}
		out, errs, code := runAt(d.GRPC, append(args, "queue", "create", "cli-tls")...)
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, "cli-tls")

		// The same from the environment.
		t.Setenv("TAGQ_CA", certs.CA.File)
		if mtls {
			t.Setenv("TAGQ_CERT", certs.Client.CertFile)
			t.Setenv("TAGQ_KEY", certs.Client.KeyFile)
		}
		out, errs, code = runAt(d.GRPC, "queue", "get", "cli-tls")
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, "cli-tls")
		for _, name := range []string{"TAGQ_CA", "TAGQ_CERT", "TAGQ_KEY"} {
			t.Setenv(name, "")
		}
	}
}
