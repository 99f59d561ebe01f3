package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// certReloadInterval is how often, at most, a handshake looks at the
// certificate files' metadata for a change.
const certReloadInterval = time.Second

// certReloader serves the certificate of --tls-cert/--tls-key and loads it
// again when either file changes (size, modification time or the file
// itself, as when a symlink is swapped), checked at most once per
// certReloadInterval on a handshake. A change that does not load (a
// half-written pair, a key that does not match) is logged and the
// certificate in use stays.
type certReloader struct {
	certFile, keyFile string
	flags             [2]string // the flags that named the files, for errors
	log               *slog.Logger
	now               func() time.Time

	mu        sync.Mutex
	cert      *tls.Certificate
	seen      [2]os.FileInfo // the files as last looked at (loaded or refused)
	lastCheck time.Time
}

// newCertReloader loads the pair of --tls-cert and --tls-key once: an
// error names the flag at fault.
func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	return newCertReloaderOf("--tls-cert", certFile, "--tls-key", keyFile, log)
}

// newCertReloaderOf is newCertReloader for the pair named by certFlag and
// keyFlag.
func newCertReloaderOf(certFlag, certFile, keyFlag, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, flags: [2]string{certFlag, keyFlag}, log: log, now: time.Now}
	infos, err := r.stat()
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", certFlag, keyFlag, err)
	}
	r.cert, r.seen, r.lastCheck = &cert, infos, r.now()
	return r, nil
}

func (r *certReloader) stat() ([2]os.FileInfo, error) {
	var infos [2]os.FileInfo
	for i, f := range []struct{ flag, path string }{{r.flags[0], r.certFile}, {r.flags[1], r.keyFile}} {
		fi, err := os.Stat(f.path)
		if err != nil {
			return infos, fmt.Errorf("%s: %w", f.flag, err)
		}
		infos[i] = fi
	}
	return infos, nil
}

func sameFile(a, b os.FileInfo) bool {
	return a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size() && os.SameFile(a, b)
}

// GetCertificate is tls.Config.GetCertificate.
func (r *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); now.Sub(r.lastCheck) >= certReloadInterval {
		r.lastCheck = now
		r.maybeReload()
	}
	return r.cert, nil
}

// maybeReload loads the pair again if a file changed since last seen.
func (r *certReloader) maybeReload() {
	infos, err := r.stat()
	if err != nil {
		r.log.Warn("TLS certificate files unreadable; still serving the loaded certificate", "err", err)
		return
	}
	if sameFile(infos[0], r.seen[0]) && sameFile(infos[1], r.seen[1]) {
		return
	}
	r.seen = infos // a refused pair is retried once a file changes again
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		r.log.Warn("TLS certificate files changed but do not load; still serving the loaded certificate", "err", err)
		return
	}
	r.cert = &cert
	attrs := []any{"cert", r.certFile}
	if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil {
		attrs = append(attrs, "serial", leaf.SerialNumber.String(), "not_after", leaf.NotAfter)
	}
	r.log.Info("TLS certificate reloaded", attrs...)
}

// serverTLS is the TLS configuration of both listeners, or nil without
// --tls-cert. With --tls-client-ca, clients must present a certificate
// that CA signed.
func serverTLS(c config, log *slog.Logger) (*tls.Config, error) {
	if c.tlsCert == "" { // parseFlags saw that the three come together
		return nil, nil
	}
	r, err := newCertReloader(c.tlsCert, c.tlsKey, log)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
	if c.tlsClientCA != "" {
		pool, err := loadPool(c.tlsClientCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// loadPool reads a PEM file of CA certificates.
func loadPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}
