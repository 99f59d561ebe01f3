package main

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// blockingPoolSize is the pool of the long-poll client: the engine holds one
// connection per queue being waited on, so it bounds the queues one
// process can long-poll at once, not the waiting clients (they share a
// queue's watcher).
const blockingPoolSize = 2048

// redisClients are the clients tagqd talks to Redis with: one for commands
// and scripts, one for the long-poll watchers (a pool of its own, so
// waiting receives never take connections from commands), and how to let
// go of them.
type redisClients struct {
	cmd, blocking redis.UniversalClient
	embedded      bool // the clients talk to the embedded store (miniredis: no replicas)
	closers       []func()
}

// close closes the clients, then the embedded store if there is one.
func (b *redisClients) close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
	b.closers = nil
}

// openRedis connects to --redis-cluster, --redis-url, or else starts the
// embedded in-memory store (miniredis on loopback).
//
// Both clients keep go-redis's ReadTimeout: for XREAD BLOCK go-redis waits
// the block time plus 10 s, so long polls need no special timeout, and a
// dead connection is still noticed.
func openRedis(c config, log *slog.Logger) (*redisClients, error) {
	b := &redisClients{}
	switch {
	case c.redisCluster != "":
		addrs := strings.Split(c.redisCluster, ",")
		tlsConf, err := redisTLS(c, nil, log)
		if err != nil {
			return nil, err
		}
		mk := func(pool int) *redis.ClusterClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: pool, ContextTimeoutEnabled: true,
				Protocol: 2, Username: c.redisUsername, Password: c.redisPassword, TLSConfig: tlsConf,
				ReadTimeout: readTimeout(c)})
		}
		cmd, blocking := mk(0), mk(blockingPoolSize)
		b.cmd, b.blocking = cmd, blocking
		b.closers = append(b.closers, func() { _ = cmd.Close() }, func() { _ = blocking.Close() })
		log.Info("using Redis Cluster", "seeds", addrs, "tls", tlsConf != nil, "client_cert", c.redisCert != "", "user", c.redisUsername,
			"password", c.redisPassword != "")
	case c.redisURL != "":
		opt, err := redis.ParseURL(c.redisURL)
		if err != nil {
			// url.Parse's error quotes the URL, password and all.
			var uerr *url.Error
			if errors.As(err, &uerr) {
				err = uerr.Err
			}
			return nil, fmt.Errorf("--redis-url: %w", err)
		}
		if c.redisUsername != "" {
			if opt.Username != "" {
				return nil, errors.New("--redis-username: the --redis-url names a user already")
			}
			opt.Username = c.redisUsername
		}
		if c.redisPassword != "" {
			if opt.Password != "" {
				return nil, errors.New("--redis-password: the --redis-url has a password already")
			}
			opt.Password = c.redisPassword
		}
		if opt.TLSConfig, err = redisTLS(c, opt.TLSConfig, log); err != nil {
			return nil, err
		}
		switch {
		case opt.ReadTimeout == 0:
			opt.ReadTimeout = readTimeout(c)
		case opt.ReadTimeout > 0 && opt.ReadTimeout < readTimeout(c):
			return nil, fmt.Errorf("--redis-url: read_timeout %s is too short for --ack-timeout %s: give at least %s (or leave it out)",
				opt.ReadTimeout, c.ackTimeout, readTimeout(c))
		}
		b.open(opt)
		log.Info("using Redis", "addr", opt.Addr, "db", opt.DB, "tls", opt.TLSConfig != nil, "client_cert", c.redisCert != "", "user", opt.Username,
			"password", opt.Password != "")
	default:
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil { // 127.0.0.1, a free port
			return nil, fmt.Errorf("embedded store: %w", err)
		}
		b.closers = append(b.closers, m.Close)
		// Loopback only, and a password no other process knows: another
		// local user cannot reach the queues around tagqd's API.
		var secret [16]byte
		if _, err := rand.Read(secret[:]); err != nil {
			return nil, fmt.Errorf("embedded store: %w", err)
		}
		password := hex.EncodeToString(secret[:])
		m.RequireAuth(password)
		b.open(&redis.Options{Addr: m.Addr(), Password: password})
		b.embedded = true
		log.Warn("no --redis-url or --redis-cluster: using the embedded in-memory store; "+
			"every queue and message is lost when tagqd stops", "addr", m.Addr())
	}
	return b, nil
}

// readTimeout is the Redis clients' read timeout: a write's round trip
// carries its WAIT, so --ack-timeout plus the 3 s go-redis gives a call by
// default (a read timeout would fail the call after Redis had run it).
func readTimeout(c config) time.Duration {
	return c.ackTimeout + 3*time.Second
}

// redisTLS is the TLS configuration to Redis: base (a rediss:// URL's),
// turned on by --redis-tls, --redis-ca or --redis-cert, with --redis-ca's
// roots and --redis-cert/--redis-key as the client certificate (for a
// Redis with tls-auth-clients; reloaded when the files change, like the
// listeners' certificate, for new connections); nil for plaintext. Without
// a ServerName each connection verifies the host it dials (each node of a
// cluster its own).
func redisTLS(c config, base *tls.Config, log *slog.Logger) (*tls.Config, error) {
	if base == nil && !c.redisTLS && c.redisCA == "" && c.redisCert == "" {
		return nil, nil
	}
	if base == nil {
		base = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if c.redisCA != "" {
		pool, err := loadPool(c.redisCA)
		if err != nil {
			return nil, fmt.Errorf("--redis-ca: %w", err)
		}
		base.RootCAs = pool
	}
	if c.redisCert != "" {
		r, err := newCertReloaderOf("--redis-cert", c.redisCert, "--redis-key", c.redisKey, log)
		if err != nil {
			return nil, err
		}
		base.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return r.GetCertificate(nil)
		}
	}
	return base, nil
}

// open makes the command client and the long-poll client of opt.
//
// They speak RESP2 unless the URL asks for protocol=3: tagq uses no RESP3
// feature, and go-redis checks every RESP3 reply for pending push
// notifications (6 % of tagqd's CPU under load, W1).
func (b *redisClients) open(opt *redis.Options) {
	opt.ContextTimeoutEnabled = true
	if opt.Protocol == 0 {
		opt.Protocol = 2
	}
	bopt := *opt
	bopt.PoolSize = blockingPoolSize
	cmd, blocking := redis.NewClient(opt), redis.NewClient(&bopt)
	b.cmd, b.blocking = cmd, blocking
	b.closers = append(b.closers, func() { _ = cmd.Close() }, func() { _ = blocking.Close() })
}
