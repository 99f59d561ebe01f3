package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/stats"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// DefaultMaxRequestBytes is the default Config.MaxRequestBytes: a full
// batch (100 entries) of messages of the largest size a queue allows
// (1 MiB), plus room for ids, attributes and framing. gRPC's own default of
// 4 MiB would refuse a batch of 20 default-sized (256 KiB) messages.
const DefaultMaxRequestBytes = tags.MaxBatchEntries*tags.MaxMaxMessageBytes + 4<<20

// Config configures a Server.
type Config struct {
	// Store is the engine. Required.
	Store tags.Storage
	// Logger receives the access log (one line per call; OK at debug) and
	// panics. Default: slog.Default().
	Logger *slog.Logger
	// Registerer gets the server's metrics (metrics.go, queuemetrics.go).
	// Default: a new registry with the Go and process collectors.
	Registerer prometheus.Registerer
	// Gatherer is what /metrics serves. Default: Registerer when it is also
	// a Gatherer (a *prometheus.Registry), else prometheus.DefaultGatherer.
	Gatherer prometheus.Gatherer
	// MaxRequestBytes bounds one gRPC request (and a REST request once
	// decoded). Default: DefaultMaxRequestBytes.
	MaxRequestBytes int
	// MaxRequestBytesInFlight bounds the bytes of requests the process
	// holds at once, over every protocol (inflight.go): beyond it calls
	// are refused with RESOURCE_EXHAUSTED (TOO_MANY_REQUEST_BYTES,
	// retry_after_ms). Default DefaultMaxRequestBytesInFlight; negative:
	// no limit.
	MaxRequestBytesInFlight int64
	// MaxStreamsPerConnection bounds the concurrent calls (streams, long
	// polls and unary calls alike) on one client connection (HTTP/2's
	// SETTINGS_MAX_CONCURRENT_STREAMS: a client beyond it waits for a
	// call to end). Default DefaultMaxStreamsPerConnection.
	MaxStreamsPerConnection uint32
	// MaxStreams bounds the Publish and Consume streams open in the
	// process: one beyond it ends at once with RESOURCE_EXHAUSTED
	// (TOO_MANY_STREAMS). Default DefaultMaxStreams; negative: no limit.
	// (Connections per listener: LimitListener.)
	MaxStreams int
	// MaxHealthWatches bounds the gRPC health service's Watch streams open
	// in the process (which need no credentials), apart from MaxStreams;
	// one connection holds at most MaxHealthWatchesPerConnection (limits.go).
	// Default DefaultMaxHealthWatches.
	MaxHealthWatches int
	// QueueMetricsInterval is how old the per-queue and per-tag series
	// may get before a scrape reads them again. Default 5 s; negative:
	// no per-queue series.
	QueueMetricsInterval time.Duration
	// QueueMetricsMaxTags bounds the tag series exported (queues in name
	// order; tagq_metrics_truncated tells when some were left out).
	// Default DefaultQueueMetricsMaxTags.
	QueueMetricsMaxTags int
	// TracerProvider, when set, gets a server span of every call
	// (OpenTelemetry, W3C trace context from the caller). Default: none,
	// and no cost.
	TracerProvider trace.TracerProvider
	// DrainGrace is how long a Consume stream still takes acks after the
	// server starts shutting down, before its unsettled messages go back.
	// Default 2 s.
	DrainGrace time.Duration
	// Access, when set, turns authentication on (S18): every call needs
	// credentials and a permission (methodRules), /metrics an
	// authenticated principal. Default nil: no authentication.
	Access *access.Access
	// TLS, when set, serves gRPC over TLS with it (certificate reload and
	// client certificates included); the gateway's in-process connection
	// (GatewayListener) needs none. Default nil: plaintext.
	TLS *tls.Config
	// HealthInterval is how often a background loop pings the storage for
	// the gRPC health service and /readyz, which answer from its last
	// reading (health.go). Default DefaultHealthInterval.
	HealthInterval time.Duration
}

// DefaultQueueMetricsMaxTags is the default Config.QueueMetricsMaxTags:
// 10,000 tags make about 80,000 series.
const DefaultQueueMetricsMaxTags = 10000

// DefaultMaxStreamsPerConnection is the default
// Config.MaxStreamsPerConnection.
const DefaultMaxStreamsPerConnection = 1000

func (c *Config) validate() error {
	if c.Store == nil {
		return errors.New("server: Config.Store is required")
	}
	if c.MaxRequestBytes < 0 {
		return errors.New("server: Config.MaxRequestBytes must not be negative")
	}
	if c.QueueMetricsMaxTags < 0 {
		return errors.New("server: Config.QueueMetricsMaxTags must not be negative")
	}
	if c.DrainGrace < 0 {
		return errors.New("server: Config.DrainGrace must not be negative")
	}
	if c.HealthInterval < 0 {
		return errors.New("server: Config.HealthInterval must not be negative")
	}
	return nil
}

// Server holds tagq's gRPC server and builds its HTTP handler.
type Server struct {
	store      tags.Storage
	log        *slog.Logger
	gather     prometheus.Gatherer
	maxRequest int
	grpc       *grpc.Server
	health     *health.Server
	ready      *readiness
	drainOnce  sync.Once
	drain      chan struct{}
	messages   *messageService
	// queueMetrics is nil when Config.QueueMetricsInterval is negative.
	queueMetrics *queueCollector
	auth         *authn // nil: authentication off
	conns        *connMetrics
	reg          prometheus.Registerer  // Config.Registerer
	inflight     *InFlight              // request bytes in flight (inflight.go)
	refused      *prometheus.CounterVec // calls refused for them, by protocol
	// unary is the unary interceptor chain and stats the stats handlers,
	// of gRPC's calls and in-process ones; methods are the tagq services'
	// unary methods by full name, for the in-process calls (inprocess.go).
	unary   grpc.UnaryServerInterceptor
	stats   []stats.Handler
	methods map[string]methodHandler
}

// New builds the gRPC server with the Queue, Message and Redrive services,
// the standard health service (SERVING until Draining, and while the
// storage answers; kept current by a background loop until Draining) and
// reflection.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registerer == nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
		cfg.Registerer = reg
	}
	if cfg.Gatherer == nil {
		if g, ok := cfg.Registerer.(prometheus.Gatherer); ok {
			cfg.Gatherer = g
		} else {
			cfg.Gatherer = prometheus.DefaultGatherer
		}
	}
	if cfg.MaxRequestBytes == 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxStreamsPerConnection == 0 {
		cfg.MaxStreamsPerConnection = DefaultMaxStreamsPerConnection
	}
	if cfg.MaxStreams == 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.MaxHealthWatches <= 0 {
		cfg.MaxHealthWatches = DefaultMaxHealthWatches
	}
	if cfg.MaxRequestBytesInFlight == 0 {
		cfg.MaxRequestBytesInFlight = DefaultMaxRequestBytesInFlight
	}
	if cfg.QueueMetricsInterval == 0 {
		cfg.QueueMetricsInterval = 5 * time.Second
	}
	if cfg.QueueMetricsMaxTags == 0 {
		cfg.QueueMetricsMaxTags = DefaultQueueMetricsMaxTags
	}
	if cfg.DrainGrace == 0 {
		cfg.DrainGrace = 2 * time.Second
	}
	if cfg.HealthInterval == 0 {
		cfg.HealthInterval = DefaultHealthInterval
	}
	s := &Server{store: cfg.Store, log: cfg.Logger, gather: cfg.Gatherer, reg: cfg.Registerer, maxRequest: cfg.MaxRequestBytes,
		health: health.NewServer(), drain: make(chan struct{}), conns: newConnMetrics(),
		inflight: &InFlight{max: cfg.MaxRequestBytesInFlight}, methods: map[string]methodHandler{}}
	inflightGauge, refused := newInflightMetrics(s.inflight)
	s.refused = refused
	s.messages = &messageService{store: cfg.Store, log: cfg.Logger, settler: newSettler(cfg.Store, cfg.Logger),
		drain: s.drain, drainGrace: cfg.DrainGrace, inflight: s.inflight, refused: refused.WithLabelValues("publish")}
	var queues prometheus.Collector
	if cfg.QueueMetricsInterval > 0 {
		s.queueMetrics = newQueueCollector(cfg.Store, cfg.QueueMetricsInterval, cfg.QueueMetricsMaxTags)
		queues = s.queueMetrics
	}
	m, err := newMetrics(cfg.Registerer, cfg.Store.Waiting, s.messages.streams.Load, queues)
	if err != nil {
		return nil, err
	}
	watches := newWatchLimit(cfg.MaxHealthWatches)
	for _, c := range []prometheus.Collector{s.conns.open, s.conns.refused, inflightGauge, refused, watches.open} {
		if err := cfg.Registerer.Register(c); err != nil {
			return nil, err
		}
	}
	streams := &streamLimit{max: int64(cfg.MaxStreams)}
	unary := []grpc.UnaryServerInterceptor{logRequests(cfg.Logger), m.grpc.UnaryServerInterceptor(), errorStatus, recoverPanics(cfg.Logger)}
	stream := []grpc.StreamServerInterceptor{logStreams(cfg.Logger), m.grpc.StreamServerInterceptor(), streamErrorStatus, recoverStreamPanics(cfg.Logger)}
	if cfg.Access != nil {
		s.auth = &authn{acc: cfg.Access, store: cfg.Store}
		unary, stream = append(unary, s.auth.unary), append(stream, s.auth.stream)
	}
	unary = append(unary, s.holdRequest)
	stream = append(stream, streams.interceptor) // after authentication: a stranger holds no slot
	// Health Watch needs no credentials: its own bounds, per connection too.
	stream = append(stream, watches.interceptor)
	// The unary chain and the stats handlers serve gRPC's calls and the
	// in-process ones alike (inprocess.go).
	s.unary = chainUnary(unary)
	if cfg.TracerProvider != nil {
		s.stats = append(s.stats, tracing(cfg.TracerProvider))
	}
	opts := []grpc.ServerOption{
		grpc.Creds(newTransportCreds(cfg.TLS)),
		grpc.UnaryInterceptor(s.unary),
		grpc.ChainStreamInterceptor(stream...),
		// A message over it is refused by the length its 5-byte prefix
		// announces, unread: RESOURCE_EXHAUSTED, but without ErrorInfo
		// (TestOversizedGRPCMessage). grpc-go checks the length in its
		// parser and writes the status itself, in serverStream.RecvMsg,
		// before any code of ours sees the error: for unary calls too
		// (1.84 runs them on the stream path) and whatever a handler
		// returns after (a status is written once). The tap runs before
		// the prefix arrives, a stats handler cannot change a status, and
		// the codec never gets the message. Giving it ErrorInfo would take
		// a higher transport limit and the check in the codec: reading
		// every oversized message whole, which this limit is here to avoid.
		grpc.MaxRecvMsgSize(cfg.MaxRequestBytes),
		grpc.MaxConcurrentStreams(cfg.MaxStreamsPerConnection),
		// Credentials and request bytes in flight are checked on a call's
		// headers, before its message is read (tap.go).
		grpc.InTapHandle(s.tap),
		experimental.BufferPool(grpcBuffers),
		grpc.UnknownServiceHandler(unknownMethod),
		// Long-lived workers serve the RPCs: a fresh goroutine per RPC grew
		// its stack on every call (copystack was 5 % of tagqd's CPU, W1).
		// When all are busy (long polls), gRPC starts a goroutine as before.
		grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0))),
		// A connection must finish its handshake (TLS included) and HTTP/2
		// preface within 20 s, not gRPC's 120 s.
		grpc.ConnectionTimeout(20 * time.Second),
		// Pings find dead peers: a client silent for a minute is pinged and
		// dropped if it does not answer in 20 s, so a consumer whose
		// machine vanished does not hold a stream (and its credit) until
		// TCP gives up. A connection with no call for 15 minutes is closed
		// (clients reconnect as needed). Clients may ping every 10 s, with
		// or without calls.
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: 15 * time.Minute,
			Time: time.Minute, Timeout: 20 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	}
	for _, sh := range s.stats {
		opts = append(opts, grpc.StatsHandler(sh))
	}
	s.grpc = grpc.NewServer(opts...)
	qs, rs, as := &queueService{store: cfg.Store, auth: s.auth}, &redriveService{store: cfg.Store}, &accessService{acc: cfg.Access}
	tagqv1.RegisterQueueServiceServer(s.grpc, qs)
	tagqv1.RegisterMessageServiceServer(s.grpc, s.messages)
	tagqv1.RegisterRedriveServiceServer(s.grpc, rs)
	tagqv1.RegisterAccessServiceServer(s.grpc, as)
	s.keepMethods(&tagqv1.QueueService_ServiceDesc, qs)
	s.keepMethods(&tagqv1.MessageService_ServiceDesc, s.messages)
	s.keepMethods(&tagqv1.RedriveService_ServiceDesc, rs)
	s.keepMethods(&tagqv1.AccessService_ServiceDesc, as)
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	m.initialize(s.grpc)
	// The whole server ("") and each tagq service by name.
	// The first reading before New returns, then one every HealthInterval
	// until Draining.
	s.ready = newReadiness(s.health, cfg.Store, cfg.Logger, []string{"", tagqv1.QueueService_ServiceDesc.ServiceName,
		tagqv1.MessageService_ServiceDesc.ServiceName, tagqv1.RedriveService_ServiceDesc.ServiceName,
		tagqv1.AccessService_ServiceDesc.ServiceName})
	s.ready.ready.Store(true) // so a first failed ping is logged
	s.ready.probe(context.Background())
	go s.ready.run(s.drain, cfg.HealthInterval)
	return s, nil
}

// unknownMethod answers a call of a method no service has, with ErrorInfo
// like every other error.
func unknownMethod(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	return statusWith(codes.Unimplemented, codeReasons[codes.Unimplemented], "unknown method "+method, "", nil)
}

// InFlight is the process's count of request bytes in flight
// (Config.MaxRequestBytesInFlight), for a front of its own that reads
// request bodies (the SQS endpoint) to hold them in as REST and Connect do.
func (s *Server) InFlight() *InFlight { return s.inflight }

// Registerer is where the server's metrics are registered (what /metrics
// serves, with the default Config.Gatherer), for a front's own metrics.
func (s *Server) Registerer() prometheus.Registerer { return s.reg }

// GRPC is the gRPC server to serve on a listener.
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// Draining marks the server NOT_SERVING in the health service, so load
// balancers stop sending new work while it shuts down, and ends the
// streams: Publish streams answer the frames they have and Consume streams
// stop pushing, take acks for DrainGrace, then give back what is unsettled
// (both end UNAVAILABLE, SERVER_SHUTTING_DOWN). Safe to call more than once.
func (s *Server) Draining() {
	s.health.Shutdown()
	s.drainOnce.Do(func() { close(s.drain) })
}

// GatewayDialOptions are the call options the gateway's connection to this
// server needs (on top of its transport credentials): requests as large as
// the server takes, and answers of any size (a receive of 100 messages of
// 1 MiB is larger than gRPC's default 4 MiB).
func (s *Server) GatewayDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallSendMsgSize(s.maxRequest), grpc.MaxCallRecvMsgSize(math.MaxInt32))}
}
