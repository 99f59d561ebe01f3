package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	oklog "github.com/oklog/run"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/redrive"
	"github.com/tagq/tagq/server"
	"github.com/tagq/tagq/tags/redisstore"
)

// run serves until ctx ends (a signal) or a listener fails, then shuts
// down. It writes the TAGQ_READY line to stdout once every listener is
// bound.
func run(ctx context.Context, c config, log *slog.Logger, stdout io.Writer) error {
	tlsConf, err := serverTLS(c, log) // first: a bad file is the error to see
	if err != nil {
		return err
	}
	if c.handleKeyFile != "" {
		if _, err := redisstore.ReadHandleKeyFile(c.handleKeyFile); err != nil {
			return fmt.Errorf("--handle-key-file: %w", err)
		}
	}
	rc, err := openRedis(c, log)
	if err != nil {
		return err
	}
	defer rc.close() // last: after every actor has stopped

	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	acks, err := installAcks(startCtx, c, rc, log)
	if err != nil {
		cancel()
		return err
	}
	defer acks.Close()
	// The embedded store (miniredis) does PEL and stream work in time
	// linear in the PEL or the stream: in-flight messages go in the tags'
	// zsets (its PELs hold only reads between their two steps), and the
	// scripts avoid what it does slowly (redisstore.Config.Embedded).
	store, err := redisstore.New(startCtx, redisstore.Config{Client: rc.cmd, Blocking: rc.blocking, Prefix: c.keyPrefix, Logger: log, TestClock: c.testClock,
		StalledRead: c.stalledRead, HandleKeyFile: c.handleKeyFile, Embedded: rc.embedded, InFlightZset: rc.embedded, Acks: acks,
		MemoryLimitRatio: c.memoryRatio(), MemoryLimitBytes: c.memLimit, MemoryCheckInterval: c.memInterval,
		NoRates: c.noRates})
	cancel()
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	queueMetrics := c.queueMetricsInterval
	if queueMetrics == 0 {
		queueMetrics = -1 // off
	}
	acc, err := openAccess(ctx, c, rc.cmd, acks, log)
	if err != nil {
		return err
	}
	maxStreams := c.maxStreams
	if maxStreams == 0 {
		maxStreams = -1 // no limit
	}
	maxInFlight := c.maxInFlight
	if maxInFlight == 0 {
		maxInFlight = -1 // no limit
	}
	scfg := server.Config{Store: store, Logger: log, QueueMetricsInterval: queueMetrics, QueueMetricsMaxTags: c.queueMetricsMaxTags,
		Access: acc, MaxStreams: maxStreams, MaxStreamsPerConnection: c.maxStreamsPerConn, MaxRequestBytesInFlight: maxInFlight}
	if tlsConf != nil {
		scfg.TLS = tlsConf.Clone() // gRPC's credentials add h2 to its ALPN protocols
	}
	tp, err := newTracerProvider(ctx, log)
	if err != nil {
		return err
	}
	if tp != nil {
		scfg.TracerProvider = tp
		defer func() { // after the servers: their last spans go too
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				log.Warn("tracing: spans not exported at shutdown", "err", err)
			}
		}()
	}
	srv, err := server.New(scfg)
	if err != nil {
		return err
	}

	glis, err := net.Listen("tcp", c.grpcAddr)
	if err != nil {
		return fmt.Errorf("--grpc-addr: %w", err)
	}
	defer glis.Close()
	glis = srv.LimitListener(glis, "grpc", c.maxConnections)
	hlis, err := net.Listen("tcp", c.httpAddr)
	if err != nil {
		return fmt.Errorf("--http-addr: %w", err)
	}
	defer hlis.Close()
	hlis = srv.LimitListener(hlis, "http", c.maxConnections)
	var slis net.Listener
	if c.sqsOffForAuth {
		log.Info("SQS endpoint off: with --auth it runs only when --sqs-addr (TAGQ_SQS_ADDR) is given")
	}
	if c.sqsAddr != "" {
		if slis, err = net.Listen("tcp", c.sqsAddr); err != nil {
			return fmt.Errorf("--sqs-addr: %w", err)
		}
		defer slis.Close()
		slis = srv.LimitListener(slis, "sqs", c.maxConnections)
	}
	// The gateway calls our own gRPC server, so REST requests go through
	// the same interceptors (errors, metrics, access log). It does so over
	// an in-process listener: the HTTP listener has already done TLS (and
	// mTLS) with the REST client, and no port takes plaintext gRPC. The
	// server trusts the client certificate the gateway names only on it.
	bufl := bufconn.Listen(gatewayBuffer)
	defer bufl.Close()
	gwlis := server.GatewayListener(bufl)
	conn, err := grpc.NewClient("passthrough:///tagqd-gateway",
		append(srv.GatewayDialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return bufl.DialContext(ctx) }))...)
	if err != nil {
		return fmt.Errorf("gateway connection: %w", err)
	}
	defer conn.Close()
	handler, err := srv.HTTPHandler(context.WithoutCancel(ctx), conn)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	var sqsl *sqsListener
	if slis != nil {
		if sqsl, err = newSQSListener(ctx, c, rc, slis, srv, store, acc, tlsConf, log); err != nil {
			return err
		}
	}
	if c.pprof {
		handler = withPprof(handler, srv.AdminOnly)
		log.Info("serving Go profiles at /debug/pprof/")
	}
	// ReadTimeout bounds a whole request, body included, so a slow body
	// cannot hold a connection: 60 s takes the largest REST body (about
	// 140 MB) at 2.5 MB/s. Go's server would also cancel a request still
	// running when it passes; the REST handler lifts it once the body is
	// read, so long polls outlast it (other routes, /debug/pprof/profile
	// included, get 60 s). WriteTimeout bounds a client that reads its
	// answer slowly; a long poll may take 20 s and more under load.
	hsrv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	// HTTP/2 without TLS too (h2c, prior knowledge): Connect and gRPC
	// streams (Publish, Consume) need HTTP/2.
	hsrv.Protocols = new(http.Protocols)
	hsrv.Protocols.SetHTTP1(true)
	hsrv.Protocols.SetHTTP2(true)
	hsrv.Protocols.SetUnencryptedHTTP2(true)

	store.Start()
	worker := redrive.New(redrive.Config{Store: store, Logger: log})
	worker.Start()

	// The actors, in shutdown order: oklog.Group interrupts them in the order
	// they were added once the first returns, so interrupts start their
	// stop and return, and each execute waits for its stop to finish.
	var g oklog.Group
	{ // Signals: the first to return, on SIGINT/SIGTERM.
		stop, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			<-stop.Done()
			if ctx.Err() != nil {
				log.Info("shutting down", "timeout", c.shutdownTimeout)
			}
			return nil
		}, func(error) { cancel() })
	}
	{ // The engine: NOT_SERVING, then wake every waiting receive (they
		// return empty) and stop the janitor and the redrive worker.
		quit, stopped := make(chan struct{}), make(chan struct{})
		g.Add(func() error {
			<-quit
			select {
			case <-stopped:
			case <-time.After(c.shutdownTimeout):
				log.Warn("the engine's background work did not stop in time")
			}
			return nil
		}, func(error) {
			srv.Draining()
			close(quit)
			go func() {
				_ = store.Close()
				worker.Stop()
				close(stopped)
			}()
		})
	}
	{ // gRPC: no new calls; calls in progress get the timeout to finish.
		done := make(chan struct{})
		g.Add(func() error {
			gwErr := make(chan error, 1)
			go func() { gwErr <- srv.GRPC().Serve(gwlis) }()
			if err := srv.GRPC().Serve(glis); err != nil {
				return fmt.Errorf("grpc: %w", err)
			}
			<-done
			if err := <-gwErr; err != nil {
				return fmt.Errorf("grpc (gateway): %w", err)
			}
			return nil
		}, func(error) {
			go func() {
				defer close(done)
				graceful := make(chan struct{})
				go func() { srv.GRPC().GracefulStop(); close(graceful) }()
				select {
				case <-graceful:
				case <-time.After(c.shutdownTimeout):
					log.Warn("gRPC calls still in progress after the shutdown timeout; cancelling them")
					srv.GRPC().Stop()
				}
			}()
		})
	}
	{ // HTTP: the same, for REST.
		done := make(chan struct{})
		g.Add(func() error {
			serve := func() error { return hsrv.Serve(hlis) }
			if tlsConf != nil {
				// ServeTLS offers HTTP/2 and HTTP/1.1 by ALPN.
				hsrv.TLSConfig = tlsConf.Clone()
				serve = func() error { return hsrv.ServeTLS(hlis, "", "") }
			}
			if err := serve(); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("http: %w", err)
			}
			<-done
			return nil
		}, func(error) {
			go func() {
				defer close(done)
				sctx, cancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
				defer cancel()
				if err := hsrv.Shutdown(sctx); err != nil {
					log.Warn("REST calls still in progress after the shutdown timeout; closing them", "err", err)
					_ = hsrv.Close()
				}
			}()
		})
	}

	if sqsl != nil { // SQS: as HTTP.
		g.Add(sqsl.serve, func(error) { sqsl.stop(c.shutdownTimeout, log) })
	}

	log.Info("grpc listening", "addr", glis.Addr().String(), "tls", tlsConf != nil, "mtls", c.tlsClientCA != "", "auth", c.auth)
	log.Info("http listening", "addr", hlis.Addr().String(), "tls", tlsConf != nil, "mtls", c.tlsClientCA != "", "auth", c.auth)
	ready := fmt.Sprintf("TAGQ_READY grpc=%s http=%s", loopback(glis.Addr()), loopback(hlis.Addr()))
	if slis != nil {
		log.Info("sqs listening", "addr", slis.Addr().String(), "tls", tlsConf != nil, "mtls", c.tlsClientCA != "", "auth", c.auth)
		ready += " sqs=" + loopback(slis.Addr())
	}
	fmt.Fprintln(stdout, ready)

	err = g.Run()
	if err != nil {
		log.Error("server failed", "err", err)
	} else {
		log.Info("stopped")
	}
	return err
}

// installAcks makes acknowledged writes wait for --ack-replicas replicas
// (S20; package durable). The embedded store has none: nothing to wait for.
func installAcks(ctx context.Context, c config, rc *redisClients, log *slog.Logger) (*durable.Acks, error) {
	replicas := c.ackReplicas
	if rc.embedded {
		replicas = 0
	}
	if replicas == 0 && !rc.embedded {
		log.Warn("--ack-replicas 0: writes are acknowledged once the Redis master has them; " +
			"a failover to a replica that had not received them loses them")
	}
	acks, err := durable.Install(ctx, rc.cmd, durable.Config{Replicas: replicas, Timeout: c.ackTimeout, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--ack-replicas: %w", err)
	}
	if replicas > 0 {
		log.Info("acknowledged writes wait for Redis replicas", "replicas", replicas, "timeout", c.ackTimeout)
	}
	return acks, nil
}

// gatewayBuffer is the buffer of each direction of the gateway's
// in-process connection.
const gatewayBuffer = 1 << 20

// loopback is an address to dial for a listener bound to addr.
func loopback(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// withPprof adds Go's profiles at /debug/pprof/ (tagqd --pprof), for
// admin principals only when authentication is on (guard).
func withPprof(h http.Handler, guard func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.Handle("/debug/pprof/", guard(http.HandlerFunc(pprof.Index)))
	mux.Handle("/debug/pprof/profile", guard(http.HandlerFunc(pprof.Profile)))
	mux.Handle("/debug/pprof/trace", guard(http.HandlerFunc(pprof.Trace)))
	return mux
}
