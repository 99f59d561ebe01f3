package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tagq/tagq/tags"
)

// ErrorInfo reasons of REST requests refused before they are decoded.
const (
	// ReasonRequestTooLarge: a body over the REST limit (restBodyLimit),
	// or one that decodes to a request over MaxRequestBytes (HTTP 413).
	ReasonRequestTooLarge = tags.ReasonRequestTooLarge
	// ReasonUnsupportedMediaType: a POST, PUT or PATCH, or any request
	// with a body, whose Content-Type is not application/json (HTTP 415).
	ReasonUnsupportedMediaType = tags.ReasonUnsupportedMediaType
)

// restBodyLimit is the largest REST body: the JSON of a request of
// MaxRequestBytes, whose bytes fields base64 makes 4/3 as long, with
// room for the JSON around them. The decoded request is held to
// MaxRequestBytes by the gateway's gRPC connection (GatewayDialOptions).
func restBodyLimit(maxRequest int) int64 {
	return int64(maxRequest)/3*4 + 1<<20
}

// restGuard is what every REST API call passes before the gateway reads
// it:
//
//   - CSRF: a POST, PUT or PATCH, and any request with a body, must say
//     Content-Type: application/json (parameters such as charset allowed),
//     else 415. A web page cannot send that to another origin without a
//     CORS preflight, which tagqd never grants, so it cannot drive the API
//     from a browser (a form posting text/plain, or nothing, to :purge).
//   - Credentials: with authentication on, a request with a body whose
//     Authorization header (or client certificate) names no principal is
//     refused with 401 before a byte of the body is read (the gRPC server
//     checks every call's credentials and permission again).
//   - Size: a body over restBodyLimit is refused with 413, before or while
//     it is read (http.MaxBytesReader), never decoded whole into memory.
//   - Bytes in flight: a body's length is counted in flight before it is
//     read (as it is read, without a Content-Length) until the call is
//     answered; one that does not fit is refused unread with 429,
//     TOO_MANY_REQUEST_BYTES and Retry-After (inflight.go).
//   - Time: once the body is read, the connection's read deadline (the
//     http.Server's ReadTimeout, which bounds slow bodies) is lifted: Go's
//     server cancels a request whose deadline passes while it waits for a
//     client close, and a long poll must outlast it.
func (s *Server) restGuard(mux *runtime.ServeMux, next http.Handler) http.Handler {
	limit := restBodyLimit(s.maxRequest)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hasBody := r.ContentLength != 0
		if hasBody || r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
			ct := r.Header.Get("Content-Type")
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
				restRefuse(mux, w, r, http.StatusUnsupportedMediaType, statusWith(codes.InvalidArgument, ReasonUnsupportedMediaType,
					fmt.Sprintf("%s needs Content-Type: application/json, got %q", r.Method, echo(ct)), "",
					map[string]string{"content_type": echo(ct)}))
				return
			}
		}
		if s.auth != nil && hasBody {
			if _, err := s.auth.authenticateHTTP(r); err != nil {
				st := toStatus(err)
				restRefuse(mux, w, r, runtime.HTTPStatusFromCode(status.Code(st)), st)
				return
			}
		}
		if r.ContentLength > limit {
			restRefuse(mux, w, r, http.StatusRequestEntityTooLarge, tooLarge(limit))
			return
		}
		rc := http.NewResponseController(w)
		if !hasBody {
			_ = rc.SetReadDeadline(time.Time{})
			next.ServeHTTP(w, r)
			return
		}
		body := s.newBody(http.MaxBytesReader(w, r.Body, limit), r.ContentLength, func() { _ = rc.SetReadDeadline(time.Time{}) })
		if !body.admit() {
			s.refused.WithLabelValues("rest").Inc()
			w.Header().Set("Retry-After", RetryAfterHeader)
			restRefuse(mux, w, r, http.StatusTooManyRequests, s.inflight.refusal())
			return
		}
		defer body.release()
		r.Body = body
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), restBodyKey{}, body)))
	})
}

// tooLarge is the status of a REST request over limit bytes.
func tooLarge(limit int64) error {
	return statusWith(codes.ResourceExhausted, ReasonRequestTooLarge,
		fmt.Sprintf("the request is larger than the %d bytes the server takes", limit), "",
		map[string]string{"limit": strconv.FormatInt(limit, 10)})
}

// restRefuse answers a REST request with httpStatus and the JSON status
// of err, as the gateway answers its errors.
func restRefuse(mux *runtime.ServeMux, w http.ResponseWriter, r *http.Request, httpStatus int, err error) {
	runtime.DefaultHTTPErrorHandler(r.Context(), mux, jsonMarshaler, w, r,
		&runtime.HTTPStatusError{HTTPStatus: httpStatus, Err: err})
}

type restBodyKey struct{}

// restBody is a REST or Connect request's body as it is read: it counts
// the body in flight (its length before it is read; as it is read when it
// has no length), notes a body over the limit or one that did not fit in
// flight (for gatewayError), and calls done once it is read.
type restBody struct {
	r    io.ReadCloser
	done func()
	f    *InFlight
	size int64 // the Content-Length, -1: unknown
	busy error // what Read returns when the body does not fit in flight

	once     sync.Once
	mu       sync.Mutex
	held     int64 // counted in flight
	tooLarge bool
	limit    int64
	refused  bool // did not fit in flight
}

// newBody wraps a request's body of size bytes (-1: unknown).
func (s *Server) newBody(r io.ReadCloser, size int64, done func()) *restBody {
	return &restBody{r: r, done: done, f: s.inflight, size: size, busy: errTooManyRequestBytes}
}

// errTooManyRequestBytes ends the reading of a body without a length that
// does not fit in flight.
var errTooManyRequestBytes = errors.New("too many request bytes in flight")

// admit counts a body of known length in flight, before it is read (once:
// again is a no-op); false: it does not fit.
func (b *restBody) admit() bool {
	if b.size <= 0 || b.held > 0 {
		return true // counted as read, or already
	}
	if !b.f.Reserve(b.size) {
		return false
	}
	b.held = b.size
	return true
}

// release gives back what the body holds in flight.
func (b *restBody) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.f.Release(b.held)
	b.held = 0
}

func (b *restBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 && b.size < 0 {
		b.mu.Lock()
		ok := b.f.Grow(b.held, int64(n))
		if ok {
			b.held += int64(n)
		} else {
			b.refused = true
		}
		b.mu.Unlock()
		if !ok {
			n, err = 0, b.busy
		}
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			b.mu.Lock()
			b.tooLarge, b.limit = true, mbe.Limit
			b.mu.Unlock()
		}
		b.once.Do(b.done)
	}
	return n, err
}

func (b *restBody) Close() error { return b.r.Close() }

// readAll reads the whole body: into one buffer of its length when it has
// one (no buffer growth, no copy), as io.ReadAll otherwise.
func (b *restBody) readAll() ([]byte, error) {
	if b.size <= 0 {
		return io.ReadAll(b)
	}
	buf := make([]byte, b.size)
	if _, err := io.ReadFull(b, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// refusedInFlight reports whether the body of the request ctx belongs to
// did not fit in flight.
func refusedInFlight(ctx context.Context) bool {
	b, _ := ctx.Value(restBodyKey{}).(*restBody)
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

// overLimit reports whether the body of the request ctx belongs to went
// over the limit, and the limit.
func overLimit(ctx context.Context) (int64, bool) {
	b, _ := ctx.Value(restBodyKey{}).(*restBody)
	if b == nil {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit, b.tooLarge
}
