package server

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/tagq/tagq/gen/openapi"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// Config configures a Server.
type Config struct {
	// Store is the engine. Required.
	Store *tags.Store
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// Registerer for the server's metrics; Gatherer serves /metrics.
	// Default: a new registry with the Go and process collectors.
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
}

// Server holds tagq's gRPC server and builds its HTTP handler.
type Server struct {
	store   *tags.Store
	log     *slog.Logger
	metrics *metrics
	gather  prometheus.Gatherer
	grpc    *grpc.Server
	health  *health.Server
}

// New builds the gRPC server with the Queue, Message and Redrive services,
// the standard health service (SERVING) and reflection.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registerer == nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
		cfg.Registerer, cfg.Gatherer = reg, reg
	}
	s := &Server{store: cfg.Store, log: cfg.Logger, metrics: newMetrics(cfg.Registerer, cfg.Store.Waiting), gather: cfg.Gatherer,
		health: health.NewServer()}
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(s.unary))
	tagqv1.RegisterQueueServiceServer(s.grpc, &queueService{store: cfg.Store})
	tagqv1.RegisterMessageServiceServer(s.grpc, &messageService{store: cfg.Store})
	tagqv1.RegisterRedriveServiceServer(s.grpc, &redriveService{store: cfg.Store})
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	return s
}

// GRPC is the gRPC server to serve on a listener.
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// Draining marks the server NOT_SERVING in the health service, so load
// balancers stop sending new work while it shuts down.
func (s *Server) Draining() { s.health.Shutdown() }

// JSON as the REST API speaks it: field names as in the protos
// (snake_case), every field present, unknown fields refused.
var jsonMarshaler = &runtime.HTTPBodyMarshaler{Marshaler: &runtime.JSONPb{
	MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
	UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
}}

// routingError answers a request no route matches with the same JSON
// status (and ErrorInfo) as every other error: 404 NOT_FOUND, or 405
// METHOD_NOT_ALLOWED for a known path with another method.
func routingError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	code, reason, msg := codes.NotFound, "NOT_FOUND", "no such API path: "+r.URL.Path
	if httpStatus == http.StatusMethodNotAllowed {
		code, reason, msg = codes.Unimplemented, "METHOD_NOT_ALLOWED", r.Method+" is not allowed on "+r.URL.Path
	}
	st, _ := status.FromError(statusWith(code, reason, msg, "", nil))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	b, _ := m.Marshal(st.Proto())
	_, _ = w.Write(b)
}

// HTTPHandler serves the REST API (grpc-gateway over conn, a client
// connection to this server's gRPC listener, so every REST call goes
// through the same interceptors), /openapi.json, /healthz and /metrics.
func (s *Server) HTTPHandler(ctx context.Context, conn *grpc.ClientConn) (http.Handler, error) {
	gw := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, jsonMarshaler),
		// A POST is never served as a GET (the fallback grpc-gateway does for form bodies).
		runtime.WithDisablePathLengthFallback(),
		runtime.WithRoutingErrorHandler(routingError))
	for _, register := range []func(context.Context, *runtime.ServeMux, *grpc.ClientConn) error{
		tagqv1.RegisterQueueServiceHandler, tagqv1.RegisterMessageServiceHandler, tagqv1.RegisterRedriveServiceHandler,
	} {
		if err := register(ctx, gw, conn); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/", gw)
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openapi.JSON)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.store.Ping(r.Context()); err != nil {
			http.Error(w, "backend unavailable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.gather, promhttp.HandlerOpts{}))
	return mux, nil
}
