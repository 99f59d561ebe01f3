package sqs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/server"
	"github.com/tagq/tagq/tags"
)

// Engine is what the endpoint asks of the storage engine directly, none
// of it data: which queue and tag a receipt handle names (tagq's handles
// are signed; this reads one, as the server's permission checks do), a
// queue's default tag's name and whether it is FIFO, and (GetQueueUrl,
// which any permission on a queue allows) whether a queue or tag exists.
// Every other action is a call of tagqd's gRPC methods (Config.Conn).
// *redisstore.Store implements it.
type Engine interface {
	HandleTarget(raw string) (queue, tag string, ok bool)
	GetQueue(ctx context.Context, name string) (*tags.Queue, error)
	GetTag(ctx context.Context, queue, tag string) (*tags.Tag, error)
}

// Config configures a Handler.
type Config struct {
	// Conn reaches tagqd's own gRPC methods in process
	// (server.Server.InProcess; or a connection to the gRPC server over a
	// server.GatewayListener), so every action passes the same
	// authentication, permissions, limits, metrics, access log and spans
	// as any other call. Required.
	Conn grpc.ClientConnInterface
	// Engine reads receipt handles and default tag names. Required.
	Engine Engine
	// Access, when set, turns authentication on: a request's Signature V4
	// must be made with the SigV4 secret of a tagq API key (its access key
	// id is the key's id), and the action runs as that key's principal.
	// Default nil: any well-formed signature, whatever the credentials.
	Access *access.Access
	// SigningKey is the key SigV4 secrets are derived from
	// (DeriveSecret). Required with Access; see LoadSigningKey.
	SigningKey []byte
	// AccountID is the account part of queue URLs and ARNs. Default
	// DefaultAccountID.
	AccountID string
	// MaxRequestBytes bounds a request body; one larger is refused (HTTP
	// 413) before it is parsed or its signature checked. Default
	// DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// InFlight, when set, is the count of request bytes in flight the
	// endpoint's bodies are held in (the gRPC server's: Server.InFlight,
	// --max-request-bytes-in-flight, one count over every protocol): a
	// body is counted from before it is read (as it is read, without a
	// Content-Length) until its request is answered, and one that does
	// not fit is refused unread with RequestThrottled and Retry-After.
	// Default nil: not counted.
	InFlight *server.InFlight
	// Registerer, when set, gets the endpoint's metrics: requests refused
	// for their signature or credentials, by error code
	// (tagq_sqs_auth_failures_total). Default nil: not exported.
	Registerer prometheus.Registerer
	// Logger gets a line per request the endpoint refuses itself (debug),
	// per failure of its own (warn), and about requests refused for their
	// signature or credentials (info, at most one line per
	// authLogInterval, with the count since the last). The actions it
	// forwards are in the gRPC server's access log. Default
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock signatures are dated against. Default time.Now.
	Now func() time.Time
}

// DefaultAccountID is the account of queue URLs and ARNs, as SQS
// emulators use.
const DefaultAccountID = "000000000000"

// DefaultMaxRequestBytes is the default Config.MaxRequestBytes: a batch of
// SQS's largest payload (1 MiB in all) written with JSON's worst escaping
// (6 bytes a character), with room for attributes and names.
const DefaultMaxRequestBytes = 8 << 20

// Handler serves the SQS API (http.Handler).
type Handler struct {
	q        tagqv1.QueueServiceClient
	m        tagqv1.MessageServiceClient
	rd       tagqv1.RedriveServiceClient
	engine   Engine
	acc      *access.Access
	key      []byte
	account  string
	maxBytes int64
	log      *slog.Logger
	now      func() time.Time
	attempts *attemptCache
	defaults *defaultTags
	inflight *server.InFlight // nil: bodies not counted
	authFail *authFailures
}

// New makes a Handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Conn == nil || cfg.Engine == nil {
		return nil, errors.New("sqs: Config.Conn and Config.Engine are required")
	}
	if cfg.Access != nil && len(cfg.SigningKey) < minSigningKey {
		return nil, errors.New("sqs: Config.SigningKey of 16 bytes or more is required with Config.Access")
	}
	if cfg.AccountID == "" {
		cfg.AccountID = DefaultAccountID
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	authFail := newAuthFailures(cfg.Logger, cfg.Now)
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(authFail.count); err != nil {
			return nil, err
		}
	}
	return &Handler{q: tagqv1.NewQueueServiceClient(cfg.Conn), m: tagqv1.NewMessageServiceClient(cfg.Conn),
		rd: tagqv1.NewRedriveServiceClient(cfg.Conn), engine: cfg.Engine, acc: cfg.Access, key: cfg.SigningKey,
		account: cfg.AccountID, maxBytes: cfg.MaxRequestBytes, log: cfg.Logger, now: cfg.Now,
		attempts: newAttemptCache(cfg.Now), defaults: newDefaultTags(cfg.Engine, cfg.Now),
		inflight: cfg.InFlight, authFail: authFail}, nil
}

// call is one request being served.
type call struct {
	ctx       context.Context // for the forwarded calls: the principal and trace context
	action    string
	base      string // scheme://host the client reached, for queue URLs
	region    string // the signature's, for ARNs
	principal string // "" with authentication off
	held      int64  // request bytes it holds in flight (Config.InFlight)
}

// ServeHTTP answers one SQS request in the protocol it came in.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := h.now()
	reqID := newRequestID()
	w.Header().Set("X-Amzn-Requestid", reqID)
	if r.URL.Path == CredentialsPath {
		h.serveCredentials(w, r)
		return
	}
	target := r.Header.Get("X-Amz-Target")
	isJSON := target != "" || strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-amz-json")
	c := &call{action: jsonAction(target)}
	defer h.release(c) // once answered
	res, err := h.serve(w, r, c, isJSON)
	if err != nil {
		e := fromStatus(err)
		h.logRefusal(r, c, e, start)
		if e.RetryAfter != "" {
			w.Header().Set("Retry-After", e.RetryAfter)
		}
		if isJSON {
			writeJSONError(w, e)
		} else {
			w.Header().Set("Content-Type", "text/xml")
			w.WriteHeader(e.Status)
			_ = writeQueryError(w, e, reqID)
		}
		return
	}
	// The answer is made whole, then written with its length: one write,
	// no chunked encoding.
	buf := answerBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledAnswer {
			buf.Reset()
			answerBuffers.Put(buf)
		}
	}()
	if isJSON {
		w.Header().Set("Content-Type", jsonContentType)
		if res == nil {
			buf.WriteString("{}")
		} else {
			enc := json.NewEncoder(buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(res)
		}
	} else {
		w.Header().Set("Content-Type", "text/xml")
		_ = writeQueryResult(buf, c.action, reqID, res)
	}
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = w.Write(buf.Bytes())
}

// answerBuffers hold answers being made; one grown past maxPooledAnswer
// (a receive of large messages) is left to the garbage collector.
var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledAnswer = 256 << 10

// serve authenticates, reads and runs a request. Everything its headers
// say is checked before a byte of its body is read (the signature's form,
// date and scope; with authentication on, that its access key id names a
// key), and the body is held in flight (Config.InFlight) before it is
// read; then the body's hash and the signature itself are checked.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, c *call, isJSON bool) (any, error) {
	if r.Method != http.MethodPost && (isJSON || r.Method != http.MethodGet) {
		return nil, errMethodNotAllowed("%s is not allowed: SQS requests are POSTs (or, in the query protocol, GETs)", clip(r.Method))
	}
	sig, e := parseSignature(r, h.now(), isJSON)
	if e != nil {
		return nil, h.authFail.refused(r, "", e)
	}
	var key *access.Key
	if h.acc != nil {
		var err error
		if key, err = h.keyOf(r, sig); err != nil {
			return nil, err
		}
	}
	body, err := h.readBody(w, r, c)
	if err != nil {
		return nil, err
	}
	if e := sig.checkBody(r, body); e != nil {
		return nil, h.authFail.refused(r, sig.accessKey, e)
	}
	if key != nil {
		if e := sig.verify(r, body, DeriveSecret(h.key, key.ID, key.Hash)); e != nil {
			return nil, h.authFail.refused(r, sig.accessKey, e)
		}
		c.principal = key.Principal
	}
	var req *request
	if isJSON {
		if c.action == "" {
			return nil, errInvalidAction("X-Amz-Target must be AmazonSQS.<Action>, got %q", clip(r.Header.Get("X-Amz-Target")))
		}
		if req, err = parseJSON(body); err != nil {
			return nil, err
		}
	} else {
		form, ferr := queryForm(r, body)
		if ferr != nil {
			return nil, ferr
		}
		if c.action, req, err = parseQuery(form); err != nil {
			return nil, err
		}
		// The legacy form: a request to the queue's URL names no QueueUrl.
		if req.QueueURL == "" && strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 1 {
			req.QueueURL = r.URL.Path
		}
	}
	c.region = sig.region
	c.base = "http://" + r.Host
	if r.TLS != nil {
		c.base = "https://" + r.Host
	}
	c.ctx = h.outgoing(r, c.principal)
	if c.action == "SendMessage" || c.action == "SendMessageBatch" {
		// Its messages may carry the attributes reserved for this endpoint
		// (data types, trace headers: messages.go).
		c.ctx = server.AsSQSEndpoint(c.ctx)
	}
	run, ok := actions[c.action]
	if !ok {
		return nil, errInvalidAction("The action %s is not valid for this endpoint.", clip(c.action))
	}
	return run(h, c, req)
}

// readBody reads the whole body, at most maxBytes of it, held in flight
// first (its length; as it is read without one), and lifts the
// connection's read deadline afterwards (a long poll may outlast it; Go's
// server would cancel the request when it passes). No memory is taken for
// a body before it is held.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, c *call) ([]byte, error) {
	if r.ContentLength > h.maxBytes {
		return nil, errTooLarge("the request body of %d bytes is over the limit of %d", r.ContentLength, h.maxBytes)
	}
	var body []byte
	var err error
	if r.ContentLength > 0 {
		if !h.hold(c, r.ContentLength) {
			return nil, h.throttled()
		}
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(&heldReader{r: http.MaxBytesReader(w, r.Body, h.maxBytes), h: h, c: c})
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, errNotHeld):
		return nil, h.throttled()
	case errors.As(err, &mbe):
		return nil, errTooLarge("the request body is over the limit of %d bytes", h.maxBytes)
	case err != nil:
		return nil, errInvalidParameter("the request body could not be read whole: %v", err)
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return body, nil
}

// hold takes n more bytes in flight for c's body; false: they do not fit
// (nothing taken).
func (h *Handler) hold(c *call, n int64) bool {
	if h.inflight == nil {
		return true
	}
	if !h.inflight.Grow(c.held, n) {
		return false
	}
	c.held += n
	return true
}

// release gives back what c holds in flight.
func (h *Handler) release(c *call) {
	if c.held > 0 {
		h.inflight.Release(c.held)
		c.held = 0
	}
}

// throttled is the refusal of a body that does not fit in flight.
func (h *Handler) throttled() *Error {
	h.inflight.Refused("sqs")
	limit := h.inflight.Limit()
	e := errThrottled("this server holds %d bytes of requests in flight, its most: retry in %d ms, or on another replica (tagq: %s)",
		limit, server.RequestBytesRetryAfter.Milliseconds(), server.ReasonTooManyRequestBytes)
	e.RetryAfter = server.RetryAfterHeader
	return e
}

// heldReader reads a body without a length, holding each read in flight
// before it is kept; errNotHeld once one does not fit.
type heldReader struct {
	r io.Reader
	h *Handler
	c *call
}

var errNotHeld = errors.New("request bytes in flight at their most")

func (b *heldReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 && !b.h.hold(b.c, int64(n)) {
		return 0, errNotHeld
	}
	return n, err
}

// queryForm is a query-protocol request's parameters: the form body of a
// POST, then the URL's query string.
func queryForm(r *http.Request, body []byte) (url.Values, error) {
	// Counted before they are parsed: url.ParseQuery keeps every one.
	if strings.Count(r.URL.RawQuery, "&")+bytes.Count(body, []byte("&")) >= maxQueryParams {
		return nil, tooManyParams()
	}
	form, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, errInvalidParameter("the query string is not URL-encoded: %s", clip(err.Error()))
	}
	if r.Method == http.MethodPost && len(body) > 0 {
		if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
			return nil, errInvalidParameter("a query-protocol request's body is application/x-www-form-urlencoded, not %q", clip(ct))
		}
		bf, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errInvalidParameter("the request body is not a URL-encoded form: %s", clip(err.Error()))
		}
		for k, v := range form {
			if _, ok := bf[k]; !ok {
				bf[k] = v
			}
		}
		form = bf
	}
	return form, nil
}

// keyOf is the API key a signature's access key id names (of a principal
// that exists): the key whose SigV4 secret must have made it.
func (h *Handler) keyOf(r *http.Request, sig *signature) (*access.Key, error) {
	snap, err := h.acc.Current(r.Context())
	if err != nil {
		return nil, err
	}
	k := snap.Key(sig.accessKey)
	if k == nil || snap.Principal(k.Principal) == nil {
		return nil, h.authFail.refused(r, sig.accessKey, errInvalidClientKey(
			"The security token included in the request is invalid: access key id %q names no tagq API key", clip(sig.accessKey)))
	}
	return k, nil
}

// forwardedHeaders are the request headers passed on to the gRPC server:
// the W3C trace context.
var forwardedHeaders = []string{"Traceparent", "Tracestate", "Baggage"}

// outgoing is the context of the calls a request makes: the request's
// (the client leaving cancels them), the principal it authenticated as,
// and its trace context.
func (h *Handler) outgoing(r *http.Request, principal string) context.Context {
	md := metadata.MD{}
	for _, k := range forwardedHeaders {
		if v := r.Header.Values(k); len(v) > 0 {
			md.Append(k, v...)
		}
	}
	ctx := metadata.NewOutgoingContext(r.Context(), md)
	if principal != "" {
		ctx = server.AsPrincipal(ctx, principal)
	}
	return ctx
}

// logRefusal logs a request that failed: at debug when the client was at
// fault, at warn when the service was.
func (h *Handler) logRefusal(r *http.Request, c *call, e *Error, start time.Time) {
	level := slog.LevelDebug
	if e.Server {
		level = slog.LevelWarn
	}
	h.log.Log(r.Context(), level, "sqs request failed", "action", c.action, "code", e.Code, "status", e.Status,
		"principal", c.principal, "duration", h.now().Sub(start), "message", tags.Clip(e.Message, 300))
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	s := hex.EncodeToString(b[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}
