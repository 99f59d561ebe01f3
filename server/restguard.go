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
//   - Size: a body over restBodyLimit is refused with 413, before or while
//     it is read (http.MaxBytesReader), never decoded whole into memory.
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
		body := &restBody{r: http.MaxBytesReader(w, r.Body, limit), done: func() { _ = rc.SetReadDeadline(time.Time{}) }}
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

// restBody is a REST request's body as the gateway reads it: it notes a
// body over the limit (for gatewayError) and calls done once it is read.
type restBody struct {
	r    io.ReadCloser
	done func()

	once     sync.Once
	mu       sync.Mutex
	tooLarge bool
	limit    int64
}

func (b *restBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
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
