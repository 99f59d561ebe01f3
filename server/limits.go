package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"

	"github.com/tagq/tagq/tags"
)

// Limits on what clients may hold open: connections per listener
// (LimitListener) and Publish and Consume streams per process
// (Config.MaxStreams). Concurrent calls per connection are gRPC's own
// MaxConcurrentStreams (Config.MaxStreamsPerConnection). Each refuses at
// once, never queues: a client over a limit learns it and can go to
// another replica, rather than wait unanswered.

// ReasonTooManyStreams is the ErrorInfo reason of a Publish or Consume
// stream refused because the process has Config.MaxStreams open
// (RESOURCE_EXHAUSTED).
const ReasonTooManyStreams = tags.ReasonTooManyStreams

// DefaultMaxStreams is the default Config.MaxStreams.
const DefaultMaxStreams = 10000

// Health Watch streams. The gRPC health service needs no credentials (load
// balancers and clients' health checking use it), so its Watch streams
// are bounded apart from Publish and Consume streams, which a stranger
// then cannot crowd out: at most MaxHealthWatchesPerConnection on one
// connection (a client watches a service or two) and
// Config.MaxHealthWatches in the process; one beyond ends at once with
// RESOURCE_EXHAUSTED (TOO_MANY_STREAMS). tagq_health_watches_open counts
// them. (An open Watch costs about 10 KB: 8,000 of them took 77 MB.)
const (
	DefaultMaxHealthWatches       = 1000
	MaxHealthWatchesPerConnection = 8
)

const healthWatch = "/grpc.health.v1.Health/Watch"

// connMetrics count a listener's connections.
type connMetrics struct {
	open    *prometheus.GaugeVec
	refused *prometheus.CounterVec
}

func newConnMetrics() *connMetrics {
	m := &connMetrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tagq_connections",
			Help: "Client connections open on a listener (grpc, http)."}, []string{"listener"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tagq_connections_refused_total",
			Help: "Client connections closed at once because the listener had --max-connections open."}, []string{"listener"}),
	}
	for _, l := range []string{"grpc", "http"} { // series from the first scrape
		m.open.WithLabelValues(l)
		m.refused.WithLabelValues(l)
	}
	return m
}

// LimitListener wraps a listener of tagqd's (name: "grpc" or "http", the
// metrics' listener label) so that it holds at most max connections at a
// time (0: no limit): one accepted beyond that is closed at once and
// counted in tagq_connections_refused_total, and accepting goes on.
// tagq_connections counts those open.
func (s *Server) LimitListener(l net.Listener, name string, max int) net.Listener {
	return &limitListener{Listener: l, max: int64(max), open: s.conns.open.WithLabelValues(name),
		refused: s.conns.refused.WithLabelValues(name)}
}

type limitListener struct {
	net.Listener
	max     int64
	n       atomic.Int64
	open    prometheus.Gauge
	refused prometheus.Counter
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if n := l.n.Add(1); l.max > 0 && n > l.max {
			l.n.Add(-1)
			l.refused.Inc() // counted before the client can see the close
			_ = c.Close()
			continue
		}
		l.open.Inc()
		return &limitedConn{Conn: c, l: l}, nil
	}
}

type limitedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.n.Add(-1)
		c.l.open.Dec()
	})
	return err
}

// streamLimit refuses a Publish or Consume stream beyond max open in the
// process (max <= 0: no limit).
type streamLimit struct {
	max  int64
	open atomic.Int64
}

func (l *streamLimit) interceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if l.max <= 0 || (info.FullMethod != "/tagq.v1.MessageService/Publish" && info.FullMethod != "/tagq.v1.MessageService/Consume") {
		return handler(srv, ss)
	}
	if l.open.Add(1) > l.max {
		l.open.Add(-1)
		limit := strconv.FormatInt(l.max, 10)
		return statusWith(codes.ResourceExhausted, ReasonTooManyStreams,
			"this server has "+limit+" Publish and Consume streams open, its most: open the stream again later or on another replica",
			"", map[string]string{"limit": limit})
	}
	defer l.open.Add(-1)
	return handler(srv, ss)
}

// watchLimit bounds health Watch streams, per connection and in all.
type watchLimit struct {
	max  int
	open prometheus.Gauge

	mu     sync.Mutex
	n      int
	byConn map[string]int
}

func newWatchLimit(max int) *watchLimit {
	return &watchLimit{max: max, byConn: map[string]int{},
		open: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tagq_health_watches_open",
			Help: "gRPC health Watch streams open in this process (at most 8 on a connection, 1,000 in all)."})}
}

func (l *watchLimit) interceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if info.FullMethod != healthWatch {
		return handler(srv, ss)
	}
	conn := connOf(ss.Context())
	l.mu.Lock()
	perConn := l.byConn[conn] >= MaxHealthWatchesPerConnection
	if perConn || l.n >= l.max {
		l.mu.Unlock()
		limit, where := l.max, "this server has"
		if perConn {
			limit, where = MaxHealthWatchesPerConnection, "this connection has"
		}
		return statusWith(codes.ResourceExhausted, ReasonTooManyStreams,
			fmt.Sprintf("%s %d health Watch streams open, its most", where, limit), "", map[string]string{"limit": strconv.Itoa(limit)})
	}
	l.n++
	l.byConn[conn]++
	l.mu.Unlock()
	l.open.Inc()
	defer func() {
		l.mu.Lock()
		l.n--
		if l.byConn[conn]--; l.byConn[conn] == 0 {
			delete(l.byConn, conn)
		}
		l.mu.Unlock()
		l.open.Dec()
	}()
	return handler(srv, ss)
}

// connOf names the connection a call came on: its two addresses.
func connOf(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	local := ""
	if p.LocalAddr != nil {
		local = p.LocalAddr.String()
	}
	return p.Addr.String() + "|" + local
}
