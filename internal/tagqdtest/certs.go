package tagqdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority made for a test.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate in PEM.
	File string
	Pool *x509.CertPool
	dir  string
}

// NewCA makes a CA and writes its certificate to dir/name-ca.pem.
func NewCA(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name + " test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{Cert: cert, key: key, File: filepath.Join(dir, name+"-ca.pem"), Pool: x509.NewCertPool(), dir: dir}
	ca.Pool.AddCert(cert)
	return ca, writePEM(ca.File, "CERTIFICATE", der)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

// Leaf is a certificate a CA signed, with its key, in PEM files.
type Leaf struct {
	Cert              *x509.Certificate
	CertFile, KeyFile string
	TLS               tls.Certificate
}

// Server signs a server certificate for 127.0.0.1, ::1 and localhost and
// writes it to dir/name.pem and dir/name-key.pem.
func (ca *CA) Server(name string) (*Leaf, error) {
	return ca.sign(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// Client signs a client certificate with common name cn.
func (ca *CA) Client(name, cn string) (*Leaf, error) {
	return ca.sign(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) sign(name string, tmpl *x509.Certificate) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	l := &Leaf{Cert: cert, CertFile: filepath.Join(ca.dir, name+".pem"), KeyFile: filepath.Join(ca.dir, name+"-key.pem"),
		TLS: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}
	if err := writePEM(l.CertFile, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return l, writePEM(l.KeyFile, "PRIVATE KEY", kder)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// Certs is a test's PKI: a CA, a server certificate for loopback and a
// client certificate, all in one directory.
type Certs struct {
	CA     *CA
	Server *Leaf
	Client *Leaf
}

// NewCerts makes Certs in dir.
func NewCerts(dir string) (*Certs, error) {
	ca, err := NewCA(dir, "tagq")
	if err != nil {
		return nil, err
	}
	srv, err := ca.Server("server")
	if err != nil {
		return nil, err
	}
	cl, err := ca.Client("client", "tagq-test-client")
	if err != nil {
		return nil, err
	}
	return &Certs{CA: ca, Server: srv, Client: cl}, nil
}

// TLSArgs are the tagqd flags to serve TLS with c's server certificate,
// and to require client certificates of c's CA when mtls.
func (c *Certs) TLSArgs(mtls bool) []string {
	args := []string{"--tls-cert", c.Server.CertFile, "--tls-key", c.Server.KeyFile}
	if mtls {
		args = append(args, "--tls-client-ca", c.CA.File)
	}
	return args
}
