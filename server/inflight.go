package server

import (
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"google.golang.org/grpc/codes"

	"github.com/tagq/tagq/tags"
)

// ReasonTooManyRequestBytes is the ErrorInfo reason of a call refused
// because the process holds Config.MaxRequestBytesInFlight request bytes
// (RESOURCE_EXHAUSTED, with retry_after_ms).
const ReasonTooManyRequestBytes = tags.ReasonTooManyRequestBytes

// DefaultMaxRequestBytesInFlight is the default
// Config.MaxRequestBytesInFlight: room for two of the largest requests,
// with decoding's copies about 1 GiB of memory at worst.
const DefaultMaxRequestBytesInFlight = 256 << 20

// retryAfterMs is the retry_after_ms of a call refused for request bytes:
// long enough for the calls holding them (large ones, at most a few
// hundred milliseconds of work each) to finish.
const retryAfterMs = 500

// Request bytes in flight. One process-wide count of the bytes of the
// requests this server holds, whatever their protocol:
//
//   - REST and Connect: a body's length is taken before a byte of it is
//     read (as it is read, when it has no Content-Length) and given back
//     once the call is answered. A body that does not fit is refused
//     unread.
//   - gRPC: each unary request and each Publish frame, from its decoding
//     until it is answered. gRPC reads a message before any code of ours
//     learns its size, so a call is admitted before its message arrives:
//     a new call (stream) is refused while the count is at the limit (the
//     transport tap), as is a Publish frame (in its answer; the stream
//     goes on).
//
// A request larger than the whole limit still runs when nothing else is in
// flight. What the count leaves out: the bytes gRPC's transport holds while
// it receives the messages of calls admitted, each at most
// Config.MaxRequestBytes. (They cannot be counted by the transport's buffer
// pool: grpc-go drops the buffers of a stream that ends unread without
// giving them back, so such a count would only grow.)
type inflight struct {
	max int64 // <= 0: no limit
	n   atomic.Int64
}

// reserve takes n bytes when they fit under the limit, or when nothing
// else is in flight.
func (f *inflight) reserve(n int64) bool {
	for {
		cur := f.n.Load()
		if f.max > 0 && cur > 0 && cur+n > f.max {
			return false
		}
		if f.n.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// grow takes n more bytes for a body that holds own already (one read as
// it arrives): they fit under the limit, or nothing else is in flight.
func (f *inflight) grow(own, n int64) bool {
	for {
		cur := f.n.Load()
		if f.max > 0 && cur > own && cur+n > f.max {
			return false
		}
		if f.n.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// add counts n bytes (negative: gives them back) without asking.
func (f *inflight) add(n int64) { f.n.Add(n) }

// full reports whether the limit is reached: no new call is admitted.
func (f *inflight) full() bool { return f.max > 0 && f.n.Load() >= f.max }

// refusal is the status of a call refused for request bytes.
func (f *inflight) refusal() error {
	limit := strconv.FormatInt(f.max, 10)
	return statusWith(codes.ResourceExhausted, ReasonTooManyRequestBytes,
		"this server holds "+limit+" bytes of requests in flight, its most: retry in "+strconv.Itoa(retryAfterMs)+
			" ms, or on another replica", "", map[string]string{"limit": limit, "retry_after_ms": strconv.Itoa(retryAfterMs)})
}

// HeldBody is a request body of a front in this process counted in the
// request bytes in flight (HoldBody).
type HeldBody struct {
	s       *Server
	b       *restBody
	refused prometheus.Counter
}

// HoldBody counts the body of r, a request to a front in this process
// other than REST and Connect (the SQS endpoint), in the request bytes in
// flight, as restGuard counts theirs: its Content-Length before a byte of
// it is read, or as it is read when it has none (r.Body is replaced by
// the counting reader). A body that does not fit is refused: HoldBody
// returns the refusal (RESOURCE_EXHAUSTED, TOO_MANY_REQUEST_BYTES) before
// a byte is read; without a length, reading fails and Refused says so.
// Release the body once the request is answered. protocol labels
// tagq_requests_refused_in_flight_total. The front's calls into the
// server (InProcess) are then not counted again.
func (s *Server) HoldBody(r *http.Request, protocol string) (*HeldBody, error) {
	h := &HeldBody{s: s, b: s.newBody(r.Body, r.ContentLength, func() {}), refused: s.refused.WithLabelValues(protocol)}
	if !h.b.admit() {
		h.refused.Inc()
		return nil, s.inflight.refusal()
	}
	r.Body = h.b
	return h, nil
}

// Refused is the refusal to answer when reading the body failed because
// it did not fit in flight, else nil.
func (h *HeldBody) Refused() error {
	h.b.mu.Lock()
	refused := h.b.refused
	h.b.mu.Unlock()
	if !refused {
		return nil
	}
	return h.s.inflight.refusal()
}

// Release gives back the bytes the body holds in flight, and counts its
// refusal if it was refused as it was read.
func (h *HeldBody) Release() {
	h.b.release()
	if h.Refused() != nil {
		h.refused.Inc()
	}
}
