package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// metrics are the server's Prometheus metrics. REST calls count too: the
// gateway calls the gRPC server.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, waiting func() int, streams func() int64) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tagq_grpc_requests_total", Help: "gRPC requests (REST included) by method and status code.",
		}, []string{"method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tagq_grpc_request_duration_seconds", Help: "gRPC request duration (long polls included).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20},
		}, []string{"method"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tagq_receives_waiting", Help: "Receives waiting (long polling) for a message in this process.",
	}, func() float64 { return float64(waiting()) }), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tagq_streams_open", Help: "Publish and Consume streams open in this process.",
	}, func() float64 { return float64(streams()) })} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// unary counts each call by method and code and times it.
func (m *metrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	m.requests.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
	m.duration.WithLabelValues(info.FullMethod).Observe(time.Since(start).Seconds())
	return resp, err
}

// stream counts each stream by method and code when it ends, and times it.
func (m *metrics) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	err := handler(srv, ss)
	m.requests.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
	m.duration.WithLabelValues(info.FullMethod).Observe(time.Since(start).Seconds())
	return err
}
