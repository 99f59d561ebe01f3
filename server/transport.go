package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// GatewayListener wraps the in-process listener the REST gateway's gRPC
// connection is served on. The server knows a connection accepted from it
// by its Go type, which no network client can produce: such a connection
// needs no TLS (the HTTP listener did TLS with the REST client), and on
// it, and only on it, the client-certificate names the HTTP listener
// verified are taken from the gateway's metadata.
func GatewayListener(l net.Listener) net.Listener { return gatewayListener{l} }

type gatewayListener struct{ net.Listener }

func (l gatewayListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &gatewayConn{c}, nil
}

type gatewayConn struct{ net.Conn }

// gatewayInfo is the AuthInfo of the gateway's connection.
type gatewayInfo struct{ credentials.CommonAuthInfo }

func (gatewayInfo) AuthType() string { return "tagq-gateway" }

// transportCreds are the gRPC server's transport credentials: TLS (with
// the certificate reload and mTLS of the config given) or plaintext on
// network listeners, and gatewayInfo on the gateway's connection. With
// TLS done here rather than by a tls.Listener, handlers see the client's
// verified certificate (peer.AuthInfo is credentials.TLSInfo).
type transportCreds struct {
	net credentials.TransportCredentials
}

func newTransportCreds(cfg *tls.Config) credentials.TransportCredentials {
	if cfg == nil {
		return &transportCreds{net: insecure.NewCredentials()}
	}
	return &transportCreds{net: credentials.NewTLS(cfg)} // NewTLS clones cfg and offers h2 by ALPN
}

func (c *transportCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if _, ok := conn.(*gatewayConn); ok {
		return conn, gatewayInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
	}
	return c.net.ServerHandshake(conn)
}

func (c *transportCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("tagq: server credentials cannot dial")
}

func (c *transportCreds) Info() credentials.ProtocolInfo { return c.net.Info() }

func (c *transportCreds) Clone() credentials.TransportCredentials {
	return &transportCreds{net: c.net.Clone()}
}

//nolint:staticcheck // part of the interface
func (c *transportCreds) OverrideServerName(string) error { return nil }
