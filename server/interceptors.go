package server

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// metrics are the server's Prometheus metrics.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, waiting func() int) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tagq_grpc_requests_total", Help: "gRPC requests (REST included) by method and status code.",
		}, []string{"method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tagq_grpc_request_duration_seconds", Help: "gRPC request duration (long polls included).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20},
		}, []string{"method"}),
	}
	reg.MustRegister(m.requests, m.duration, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tagq_receives_waiting", Help: "Receives waiting (long polling) for a message in this process.",
	}, func() float64 { return float64(waiting()) }))
	return m
}

// unary is the one unary interceptor: it turns every error into a tagq
// status (with ErrorInfo), turns a panic into INTERNAL, logs and counts.
func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in handler", "method", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
			resp, err = nil, statusWith(codes.Internal, "INTERNAL", "internal error", "", nil)
		}
		code := status.Code(err)
		s.metrics.requests.WithLabelValues(info.FullMethod, code.String()).Inc()
		s.metrics.duration.WithLabelValues(info.FullMethod).Observe(time.Since(start).Seconds())
		level := slog.LevelDebug
		switch code {
		case codes.OK, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.FailedPrecondition, codes.Canceled:
		case codes.Unavailable:
			level = slog.LevelWarn
		default:
			level = slog.LevelError
		}
		s.log.Log(ctx, level, "rpc", "method", info.FullMethod, "code", code.String(), "duration", time.Since(start), "err", err)
	}()
	resp, err = handler(ctx, req)
	return resp, toStatus(err)
}
