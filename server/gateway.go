package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/tagq/tagq/console"
	tagqgw "github.com/tagq/tagq/gen/gateway/tagq/v1"
	"github.com/tagq/tagq/gen/openapi"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"

	"github.com/tagq/tagq/tags"
)

// ReasonMalformedRequest is the ErrorInfo reason of a REST request the
// gateway cannot decode: invalid JSON, an unknown field, a value of the
// wrong type (bad base64 in a bytes field), an unparsable query parameter.
const ReasonMalformedRequest = tags.ReasonMalformedRequest

// JSON as the REST API speaks it: field names as in the protos
// (snake_case), every field present, unknown fields refused.
var jsonMarshaler = restJSON{HTTPBodyMarshaler: &runtime.HTTPBodyMarshaler{Marshaler: &runtime.JSONPb{
	MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
	UnmarshalOptions: restUnmarshal,
}}}

var restUnmarshal = protojson.UnmarshalOptions{DiscardUnknown: false}

// restJSON is grpc-gateway's JSON marshaler, but for how it decodes a
// request body into its message: grpc-gateway's decoder reads the body
// through a json.Decoder (whose buffer grows by doubling) into a copy
// (json.RawMessage) before protojson decodes it, three times the body at
// worst. This one reads the body into one buffer of its length (restBody)
// and decodes that: the body once, and the message.
type restJSON struct{ *runtime.HTTPBodyMarshaler }

func (m restJSON) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		pm, ok := v.(proto.Message)
		body, isBody := r.(*restBody)
		if !ok || !isBody {
			return m.HTTPBodyMarshaler.NewDecoder(r).Decode(v)
		}
		raw, err := body.readAll()
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			return io.EOF // no body: an empty request, as grpc-gateway takes it
		}
		if boundedJSON(raw, pm) { // a repeated field over its limit: refused undecoded (repeated.go)
			return nil
		}
		if err := restUnmarshal.Unmarshal(raw, pm); err != nil {
			// protojson quotes the bytes it could not read: the status
			// message must stay UTF-8.
			return errors.New(strings.ToValidUTF8(err.Error(), "\uFFFD"))
		}
		return nil
	})
}

// HTTPHandler serves the REST API (grpc-gateway over conn, a client
// connection to this server's gRPC listener dialled with
// GatewayDialOptions, so every REST call goes through the same
// interceptors), the tagq services in the Connect, gRPC-Web and gRPC
// protocols (over conn too: connect.go), /openapi.json, /healthz, /readyz, /metrics, and the web
// console at /ui/ (/ redirects there). Every error answer
// is grpc-gateway's JSON status with an ErrorInfo detail.
func (s *Server) HTTPHandler(ctx context.Context, conn *grpc.ClientConn) (http.Handler, error) {
	gw := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, jsonMarshaler),
		// A POST is never served as a GET (the fallback grpc-gateway does for form bodies).
		runtime.WithDisablePathLengthFallback(),
		runtime.WithErrorHandler(s.gatewayError),
		runtime.WithRoutingErrorHandler(routingError),
		// Authorization goes on as "authorization" metadata (grpc-gateway
		// does that for every request); the client certificate the HTTP
		// listener verified goes as gatewayCertMD, which no header may set.
		runtime.WithIncomingHeaderMatcher(gatewayHeader),
		runtime.WithMetadata(gatewayCertNames))
	lc := localConn{cc: conn, maxRequest: s.maxRequest} // requests by reference (localcodec.go)
	for _, err := range []error{
		tagqgw.RegisterQueueServiceHandlerClient(ctx, gw, tagqv1.NewQueueServiceClient(lc)),
		tagqgw.RegisterMessageServiceHandlerClient(ctx, gw, tagqv1.NewMessageServiceClient(lc)),
		tagqgw.RegisterRedriveServiceHandlerClient(ctx, gw, tagqv1.NewRedriveServiceClient(lc)),
		tagqgw.RegisterAccessServiceHandlerClient(ctx, gw, tagqv1.NewAccessServiceClient(lc)),
	} {
		if err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/", s.restGuard(gw, gw))
	// Connect, gRPC-Web and gRPC at /tagq.v1.<Service>/ (connect.go).
	for path, h := range s.connectHandlers(lc) {
		mux.Handle(path, h)
	}
	// The web console: public assets; its pages call the API above.
	mux.Handle("GET "+console.Prefix, console.Handler(console.Options{Authentication: s.auth != nil}))
	mux.Handle("GET /{$}", http.RedirectHandler(console.Prefix, http.StatusFound))
	mux.Handle("GET /ui", http.RedirectHandler(console.Prefix, http.StatusMovedPermanently))
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openapi.JSON)
	})
	// /healthz: the process answers (liveness). /readyz: and so does the
	// storage (readiness), from the same background reading as the gRPC
	// health service (health.go), so it answers at once.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-s.drain:
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		default:
		}
		if !s.ready.Ready() {
			http.Error(w, "backend unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	var metrics http.Handler = promhttp.HandlerFor(s.gather, promhttp.HandlerOpts{})
	if s.auth != nil {
		metrics = s.auth.httpAuthenticated(gw, metrics, false)
	}
	mux.Handle("GET /metrics", metrics)
	return mux, nil
}

// AdminOnly serves h only to admin principals when authentication is on
// (tagqd --pprof's /debug/pprof/), and to anyone when it is off.
func (s *Server) AdminOnly(h http.Handler) http.Handler {
	if s.auth == nil {
		return h
	}
	return s.auth.httpAuthenticated(runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, jsonMarshaler)), h, true)
}

// gatewayHeader is grpc-gateway's default header matcher (permanent
// headers and Grpc-Metadata-* go on as metadata) except that no header
// may become gatewayCertMD or gatewayPrincipalMD.
func gatewayHeader(key string) (string, bool) {
	md, ok := runtime.DefaultHeaderMatcher(key)
	if ok && gatewayOnlyMD(md) {
		return "", false
	}
	return md, ok
}

// gatewayCertNames passes the names of the REST client's verified
// certificate to the gRPC server (peerCertNames).
func gatewayCertNames(_ context.Context, r *http.Request) metadata.MD {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil
	}
	names := certNames(r.TLS.VerifiedChains[0][0])
	md := metadata.MD{}
	for _, n := range names {
		if isValidMetadataValue(n) {
			md.Append(gatewayCertMD, n)
		}
	}
	return md
}

// isValidMetadataValue: printable ASCII, as gRPC metadata takes.
func isValidMetadataValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// gatewayError answers every failed REST call. Errors from the gRPC server
// already carry ErrorInfo; the gateway's own (a body it cannot decode, the
// loopback connection failing) get one here. A body over the limit, or
// one that decodes to a request over MaxRequestBytes (which localConn
// refuses to send), is 413 REQUEST_TOO_LARGE; a body without a length that
// did not fit in flight is 429 TOO_MANY_REQUEST_BYTES.
func (s *Server) gatewayError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	var httpErr *runtime.HTTPStatusError
	st := status.Convert(err)
	switch limit, over := overLimit(ctx); {
	case over:
		err = &runtime.HTTPStatusError{HTTPStatus: http.StatusRequestEntityTooLarge, Err: tooLarge(limit)}
	case refusedInFlight(ctx):
		s.refused.WithLabelValues("rest").Inc()
		w.Header().Set("Retry-After", RetryAfterHeader)
		err = &runtime.HTTPStatusError{HTTPStatus: http.StatusTooManyRequests, Err: s.inflight.refusal()}
	case st.Code() == codes.ResourceExhausted && errorInfo(st) == nil:
		err = &runtime.HTTPStatusError{HTTPStatus: http.StatusRequestEntityTooLarge, Err: tooLarge(int64(s.maxRequest))}
	case errorInfo(st).GetReason() == ReasonRequestTooLarge:
		err = &runtime.HTTPStatusError{HTTPStatus: http.StatusRequestEntityTooLarge, Err: err}
	}
	if errors.As(err, &httpErr) {
		err = &runtime.HTTPStatusError{HTTPStatus: httpErr.HTTPStatus, Err: s.gatewayStatus(ctx, httpErr.Err)}
	} else {
		err = s.gatewayStatus(ctx, err)
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err)
}

func (s *Server) gatewayStatus(ctx context.Context, err error) error {
	st := status.Convert(err)
	if errorInfo(st) != nil {
		return st.Err()
	}
	reason := ""
	switch st.Code() {
	case codes.InvalidArgument:
		// The gRPC server's INVALID_ARGUMENTs have ErrorInfo already; one
		// without is the gateway failing to decode the request.
		reason = ReasonMalformedRequest
	case codes.Unavailable:
		// The gateway's connection to the gRPC server failed; its message
		// names the server's internal address: for the log only.
		s.log.WarnContext(ctx, "REST gateway: gRPC server unavailable", "err", st.Message())
		st = status.New(codes.Unavailable, "the API server is unavailable")
	}
	return withErrorInfo(st, reason)
}

// routingError answers a request no route matches: 404 NOT_FOUND, or 405
// METHOD_NOT_ALLOWED for a known path with another method.
func routingError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	var err error
	switch httpStatus {
	case http.StatusNotFound:
		err = statusWith(codes.NotFound, "NOT_FOUND", "no such API path: "+echo(r.URL.Path), "", nil)
	case http.StatusMethodNotAllowed:
		err = statusWith(codes.Unimplemented, tags.ReasonMethodNotAllowed, echo(r.Method)+" is not allowed on "+echo(r.URL.Path), "", nil)
	default:
		err = statusWith(codes.InvalidArgument, ReasonMalformedRequest, http.StatusText(httpStatus), "", nil)
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, &runtime.HTTPStatusError{HTTPStatus: httpStatus, Err: err})
}
