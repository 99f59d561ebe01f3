package server

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

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

// RequestBytesRetryAfter is how long a caller refused for request bytes
// is told to wait (retry_after_ms, a google.rpc.RetryInfo detail, an HTTP
// Retry-After header): long enough for the calls holding them (large ones,
// at most a few hundred milliseconds of work each) to finish.
const RequestBytesRetryAfter = 500 * time.Millisecond

// retryAfterMs is RequestBytesRetryAfter in ErrorInfo's metadata.
var retryAfterMs = strconv.FormatInt(RequestBytesRetryAfter.Milliseconds(), 10)

// RetryAfterHeader is RequestBytesRetryAfter as an HTTP Retry-After
// value: whole seconds, rounded up.
var RetryAfterHeader = strconv.FormatInt(int64((RequestBytesRetryAfter+time.Second-1)/time.Second), 10)

// InFlight is the count of request bytes in flight. One process-wide count
// of the bytes of the requests this server holds, whatever their protocol
// (Server.InFlight; a front of its own, the SQS endpoint, takes and gives
// back its bodies' bytes with Reserve, Grow and Release as REST and
// Connect do):
//
//   - REST, Connect and SQS: a body's length is taken before a byte of it
//     is read (as it is read, when it has no Content-Length) and given back
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
type InFlight struct {
	max     int64 // <= 0: no limit
	n       atomic.Int64
	refused *prometheus.CounterVec // by protocol (newInflightMetrics)
}

// Reserve takes n bytes when they fit under the limit, or when nothing
// else is in flight; false: they do not fit, and nothing was taken.
func (f *InFlight) Reserve(n int64) bool {
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

// Grow takes n more bytes for a body that holds held already (one read as
// it arrives): they fit under the limit, or nothing else is in flight.
func (f *InFlight) Grow(held, n int64) bool {
	for {
		cur := f.n.Load()
		if f.max > 0 && cur > held && cur+n > f.max {
			return false
		}
		if f.n.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// Release gives back n bytes taken by Reserve or Grow.
func (f *InFlight) Release(n int64) { f.n.Add(-n) }

// Refused counts a call of protocol (its label in
// tagq_requests_refused_in_flight_total) refused for request bytes.
func (f *InFlight) Refused(protocol string) {
	if f.refused != nil {
		f.refused.WithLabelValues(protocol).Inc()
	}
}

// Limit is the limit in bytes (<= 0: none).
func (f *InFlight) Limit() int64 { return f.max }

// add counts n bytes (negative: gives them back) without asking.
func (f *InFlight) add(n int64) { f.n.Add(n) }

// full reports whether the limit is reached: no new call is admitted.
func (f *InFlight) full() bool { return f.max > 0 && f.n.Load() >= f.max }

// refusal is the status of a call refused for request bytes: ErrorInfo
// with retry_after_ms, and a google.rpc.RetryInfo.
func (f *InFlight) refusal() error {
	limit := strconv.FormatInt(f.max, 10)
	err := statusWith(codes.ResourceExhausted, ReasonTooManyRequestBytes,
		"this server holds "+limit+" bytes of requests in flight, its most: retry in "+retryAfterMs+
			" ms, or on another replica", "", map[string]string{"limit": limit, "retry_after_ms": retryAfterMs})
	st := status.Convert(err)
	if withRetry, e := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(RequestBytesRetryAfter)}); e == nil {
		return withRetry.Err()
	}
	return err
}
