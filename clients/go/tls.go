package tagq

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// tlsOption is a Dial option of this package for TLS: Dial gathers them
// into one set of transport credentials (so they combine in any order) and
// reports unreadable files as its error.
type tlsOption struct {
	grpc.EmptyDialOption
	apply func(*tlsSettings)
}

type tlsSettings struct {
	caFile            string
	pool              *x509.CertPool
	certFile, keyFile string
	serverName        string
}

// WithTLS makes Dial use TLS, verifying tagqd's certificate against the
// PEM CA certificates in caFile ("" for the system's roots). Use it for a
// tagqd started with --tls-cert and --tls-key.
func WithTLS(caFile string) grpc.DialOption {
	return tlsOption{apply: func(s *tlsSettings) { s.caFile = caFile }}
}

// WithCertPool makes Dial use TLS, verifying tagqd's certificate against
// pool.
func WithCertPool(pool *x509.CertPool) grpc.DialOption {
	return tlsOption{apply: func(s *tlsSettings) { s.pool = pool }}
}

// WithClientCert makes Dial use TLS and present the certificate (chain) in
// the PEM files certFile and keyFile: for a tagqd started with
// --tls-client-ca (mTLS). Combine it with WithTLS or WithCertPool unless
// tagqd's certificate comes from a system root.
func WithClientCert(certFile, keyFile string) grpc.DialOption {
	return tlsOption{apply: func(s *tlsSettings) { s.certFile, s.keyFile = certFile, keyFile }}
}

// WithServerName sets the name tagqd's certificate is checked for, when
// it is not the host of Dial's target (with TLS only).
func WithServerName(name string) grpc.DialOption {
	return tlsOption{apply: func(s *tlsSettings) { s.serverName = name }}
}

// splitTLS takes this package's TLS options out of opts and returns the
// transport credentials they make (nil if there are none).
func splitTLS(opts []grpc.DialOption) ([]grpc.DialOption, grpc.DialOption, error) {
	var s tlsSettings
	found := false
	rest := make([]grpc.DialOption, 0, len(opts))
	for _, o := range opts {
		if t, ok := o.(tlsOption); ok {
			t.apply(&s)
			found = true
			continue
		}
		rest = append(rest, o)
	}
	if !found {
		return rest, nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: s.pool, ServerName: s.serverName}
	if s.caFile != "" {
		pem, err := os.ReadFile(s.caFile)
		if err != nil {
			return nil, nil, fmt.Errorf("tagq: CA file: %w", err)
		}
		if conf.RootCAs == nil {
			conf.RootCAs = x509.NewCertPool()
		} else {
			conf.RootCAs = conf.RootCAs.Clone()
		}
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("tagq: CA file %s holds no PEM certificate", s.caFile)
		}
	}
	if s.certFile != "" || s.keyFile != "" {
		if s.certFile == "" || s.keyFile == "" {
			return nil, nil, fmt.Errorf("tagq: a client certificate needs both a certificate and a key file")
		}
		cert, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("tagq: client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return rest, grpc.WithTransportCredentials(credentials.NewTLS(conf)), nil
}
