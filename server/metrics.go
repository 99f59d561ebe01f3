package server

import (
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/tagq/tagq/internal/version"
)

// metrics are the server's Prometheus metrics: the standard gRPC server
// series (grpc_server_started_total, grpc_server_handled_total,
// grpc_server_handling_seconds, grpc_server_msg_received_total,
// grpc_server_msg_sent_total, as go-grpc-middleware's provider names them,
// so existing gRPC dashboards work; REST calls count too, since the gateway
// calls the gRPC server), tagq_build_info, the process's waiting receives
// and open streams, and every queue's and tag's state (queuemetrics.go).
type metrics struct {
	grpc *grpcprom.ServerMetrics
}

func newMetrics(reg prometheus.Registerer, waiting func() int, streams func() int64, queues prometheus.Collector) (*metrics, error) {
	m := &metrics{grpc: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
		grpcprom.WithHistogramBuckets([]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20})))}
	info := version.Get()
	cs := []prometheus.Collector{m.grpc,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "tagq_build_info", Help: "tagqd's version, VCS revision and Go version (always 1).",
			ConstLabels: prometheus.Labels{"version": info.Version, "revision": info.Revision, "goversion": info.GoVersion},
		}, func() float64 { return 1 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "tagq_receives_waiting", Help: "Receives waiting (long polling) for a message in this process.",
		}, func() float64 { return float64(waiting()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "tagq_streams_open", Help: "Publish and Consume streams open in this process.",
		}, func() float64 { return float64(streams()) })}
	if queues != nil {
		cs = append(cs, queues)
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// initialize sets every method's counters to 0, so that rates and
// absent-series alerts work from the first scrape.
func (m *metrics) initialize(s *grpc.Server) { m.grpc.InitializeMetrics(s) }
