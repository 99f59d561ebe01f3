package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/tagq/tagq/access"
	"github.com/tagq/tagq/server"
	"github.com/tagq/tagq/sqs"
	"github.com/tagq/tagq/tags/redisstore"
)

// sqsListener serves the SQS-compatible endpoint (--sqs-addr) on lis: the
// SQS API, each action a call of the gRPC server's methods in process
// (server.Server.InProcess), with the HTTP listener's TLS and timeouts,
// each request's body counted in the request bytes in flight.
type sqsListener struct {
	lis  net.Listener
	srv  *http.Server
	tls  *tls.Config
	done chan struct{}
}

// newSQSListener builds the endpoint's handler and server (lis already
// bound and limited). With authentication on it loads the SigV4 signing
// key (--sqs-signing-key-file, else the one kept in Redis).
func newSQSListener(ctx context.Context, c config, rc *redisClients, lis net.Listener, srv *server.Server,
	store *redisstore.Store, acc *access.Access, tlsConf *tls.Config, log *slog.Logger) (*sqsListener, error) {
	// Bodies count in the process's request bytes in flight, as REST's and
	// Connect's do; the endpoint's metrics are on /metrics.
	cfg := sqs.Config{Conn: srv.InProcess(), Engine: store, Access: acc, Logger: log.With("component", "sqs"),
		InFlight: srv.InFlight(), Registerer: srv.Registerer()}
	if acc != nil {
		kctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		key, err := sqs.LoadSigningKey(kctx, rc.cmd, c.keyPrefix, c.sqsSigningKeyFile)
		cancel()
		if err != nil {
			if c.sqsSigningKeyFile != "" {
				return nil, fmt.Errorf("--sqs-signing-key-file: %w", err)
			}
			return nil, fmt.Errorf("SQS signing key: %w", err)
		}
		cfg.SigningKey = key
		if c.sqsSigningKeyFile == "" {
			log.Warn("the SQS endpoint's SigV4 signing key is kept in Redis: whoever can read Redis (a replica, a backup, "+
				"a read-only user) can derive every API key's SigV4 secret from it and the key hashes stored beside it, and call "+
				"the SQS endpoint as any principal, admins included; set --sqs-signing-key-file to keep it out of Redis",
				"redis_key", c.keyPrefix+":"+sqs.SigningKeyName)
		}
	}
	h, err := sqs.New(cfg)
	if err != nil {
		return nil, err
	}
	// As the HTTP listener's: a request must arrive whole within 60 s (the
	// handler lifts the read deadline once the body is read, so a 20 s long
	// poll is not cut), and a client gets 2 minutes to read its answer.
	hsrv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	l := &sqsListener{lis: lis, srv: hsrv, done: make(chan struct{})}
	if tlsConf != nil {
		l.tls = tlsConf.Clone()
		hsrv.TLSConfig = l.tls
	}
	return l, nil
}

// serve runs until stop; it returns once a graceful stop has finished.
func (l *sqsListener) serve() error {
	var err error
	if l.tls != nil {
		err = l.srv.ServeTLS(l.lis, "", "")
	} else {
		err = l.srv.Serve(l.lis)
	}
	if !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("sqs: %w", err)
	}
	<-l.done
	return nil
}

// stop lets requests in progress finish within timeout, then closes them.
func (l *sqsListener) stop(timeout time.Duration, log *slog.Logger) {
	go func() {
		defer close(l.done)
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := l.srv.Shutdown(sctx); err != nil {
			log.Warn("SQS requests still in progress after the shutdown timeout; closing them", "err", err)
			_ = l.srv.Close()
		}
	}()
}
