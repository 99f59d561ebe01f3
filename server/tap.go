package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"

	"github.com/tagq/tagq/access"
)

// tapAuthTimeout bounds the Redis read that refreshes the access data when
// the tap finds it stale (once a refresh interval at most; see
// access.Access.Current).
const tapAuthTimeout = 2 * time.Second

// tap runs in gRPC's transport as a call opens, on its headers, before a
// byte of its message is read (grpc.InTapHandle): a call refused here
// costs its caller's message nothing but the reading and dropping of
// bytes, and gRPC answers it with the status returned, ErrorInfo included.
//
//   - With authentication on, the caller's credentials are checked (the
//     interceptors check them again, with the permission the request
//     needs): no credentials, or a key or certificate tagq does not know,
//     is UNAUTHENTICATED before its message is received. The check reads
//     the access data in memory; once a refresh interval it waits for one
//     Redis GET (access.Access.Current), on the connection's reading
//     goroutine.
//   - A call is not admitted while the process holds its most request
//     bytes (inflight): RESOURCE_EXHAUSTED, TOO_MANY_REQUEST_BYTES.
//
// The health service is open to both. The REST gateway's and Connect's
// calls (on the in-process connection) were checked by the HTTP listener
// before their bodies were read, and counted there.
func (s *Server) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if isGateway(ctx) {
		return ctx, nil
	}
	if methodRules[info.FullMethodName].open {
		return ctx, nil
	}
	if s.auth != nil {
		actx, cancel := context.WithTimeout(ctx, tapAuthTimeout)
		p, snap, err := s.auth.authenticate(actx)
		cancel()
		if err != nil {
			return ctx, toStatus(err)
		}
		// The interceptors take the caller from here rather than
		// authenticate it a second time.
		ctx = context.WithValue(ctx, tappedKey{}, tapped{p: p, snap: snap})
	}
	if s.inflight.full() {
		s.refused.WithLabelValues("grpc").Inc()
		return ctx, s.inflight.refusal()
	}
	return ctx, nil
}

// tappedKey holds the caller the tap authenticated (tapped) in a call's
// context.
type tappedKey struct{}

type tapped struct {
	p    *access.Principal
	snap *access.Snapshot
}

// isGateway reports whether ctx is a call on the in-process connection of
// the REST gateway and Connect.
func isGateway(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return false
	}
	_, gw := p.AuthInfo.(gatewayInfo)
	return gw
}

// holdRequest counts a gRPC client's unary request in flight from its
// decoding until it is answered. REST and Connect calls are counted by
// their bodies.
func (s *Server) holdRequest(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	m, ok := req.(proto.Message)
	if !ok || isGateway(ctx) {
		return handler(ctx, req)
	}
	n := int64(proto.Size(m))
	s.inflight.add(n)
	defer s.inflight.add(-n)
	return handler(ctx, req)
}

// inflightMetrics are the gauge of request bytes in flight and the count
// of calls refused for them, by protocol (grpc, rest, connect, publish:
// Publish frames, sqs: the SQS endpoint's requests), which f counts in.
func newInflightMetrics(f *InFlight) (prometheus.Collector, *prometheus.CounterVec) {
	gauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tagq_request_bytes_in_flight",
		Help: "Bytes of requests this process holds: bodies being read and requests being served (--max-request-bytes-in-flight)."},
		func() float64 { return float64(f.n.Load()) })
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tagq_requests_refused_in_flight_total",
		Help: "Calls (and Publish frames) refused with TOO_MANY_REQUEST_BYTES, by protocol."}, []string{"protocol"})
	for _, p := range []string{"grpc", "rest", "connect", "publish", "sqs"} {
		refused.WithLabelValues(p)
	}
	f.refused = refused
	return gauge, refused
}
