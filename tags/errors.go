package tags

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"unicode/utf8"
)

// Kind classifies an Error the way a gRPC status code would.
type Kind int

// Error kinds; the server maps each to a gRPC code.
const (
	KindInvalidArgument Kind = iota + 1
	KindNotFound
	KindAlreadyExists
	KindFailedPrecondition
	KindResourceExhausted
	KindUnavailable
	KindInternal
)

// The ErrorInfo reasons (Reason…) and the catalogue (Reasons) are in
// reasons_gen.go, made from proto/tagq/v1/errors.yaml.

// Error is every error a storage returns on purpose. Field names the
// offending input field, as a path relative to the call's argument (e.g.
// "visibility_timeout_seconds", "entries[2].body"); callers may prefix it.
type Error struct {
	Kind    Kind
	Reason  string
	Field   string
	Message string
	// Metadata is extra ErrorInfo metadata (e.g. "queue", "limit").
	Metadata map[string]string
	// Cause is the failure behind the error (a Redis error naming the
	// server's address, say): in Error, for logs, never in Text, which is
	// what clients are told.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Text() + ": " + e.Cause.Error()
	}
	return e.Text()
}

// Text is the error as a client may see it: reason, message and field,
// without the Cause.
func (e *Error) Text() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Reason, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Reason, e.Message)
}

// AsError returns err as an *Error if it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ReasonOf returns err's reason, or "" when err is not an *Error.
func ReasonOf(err error) string {
	if e, ok := AsError(err); ok {
		return e.Reason
	}
	return ""
}

// MaxEcho is how much of a client's input an error quotes back: enough to
// recognise it, never the megabytes someone may send.
const MaxEcho = 100

// Clip shortens s to at most n bytes (cut at a UTF-8 boundary) and marks
// the cut with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Echo is input quoted in an error: clipped to MaxEcho.
func Echo(s string) string { return Clip(s, MaxEcho) }

// Invalid is an INVALID_ARGUMENT error with reason about field, its
// message made from format and args.
func Invalid(reason, field, format string, args ...any) *Error {
	return &Error{Kind: KindInvalidArgument, Reason: reason, Field: field, Message: fmt.Sprintf(format, args...)}
}

// QueueNotFound answers a call on queue q, which does not exist.
func QueueNotFound(q string) *Error {
	q = Echo(q)
	return &Error{Kind: KindNotFound, Reason: ReasonQueueNotFound, Message: fmt.Sprintf("queue %q does not exist", q),
		Metadata: map[string]string{"queue": q}}
}

// TagNotFound answers a call on tag t of queue q, which does not exist.
func TagNotFound(q, t string) *Error {
	q, t = Echo(q), Echo(t)
	return &Error{Kind: KindNotFound, Reason: ReasonTagNotFound, Message: fmt.Sprintf("tag %q of queue %q does not exist", t, q),
		Metadata: map[string]string{"queue": q, "tag": t}}
}

// NoDefaultTag answers a receive that names no tag on a queue created
// without a default tag. It is NOT_FOUND rather than a default tag made on
// the spot: a tag made by a stray tagless call would hold every later
// message until retention, the backlog NoDefaultTag exists to avoid.
func NoDefaultTag(q string) *Error {
	q = Echo(q)
	return &Error{Kind: KindNotFound, Reason: ReasonTagNotFound, Field: "tag",
		Message:  fmt.Sprintf("queue %q has no default tag (it was created with no_default_tag): name the tag to read", q),
		Metadata: map[string]string{"queue": q, "tag": ""}}
}

// NotASourceQueue answers a dead-lettering on queue q, which has no
// redrive policy.
func NotASourceQueue(q string) *Error {
	return &Error{Kind: KindFailedPrecondition, Reason: ReasonNotASourceQueue,
		Message:  "queue " + q + " has no redrive policy: there is no dead-letter queue to send messages to",
		Metadata: map[string]string{"queue": q}}
}

// StaleHandle answers a settlement of message id by tag with a handle
// that is not its latest receive's.
func StaleHandle(id, tag string) *Error {
	return &Error{Kind: KindFailedPrecondition, Reason: ReasonReceiptHandleStale, Field: "receipt_handle",
		Message:  fmt.Sprintf("message %s was received again by tag %q, deleted, or expired since this handle was issued", id, tag),
		Metadata: map[string]string{"message_id": id, "tag": tag}}
}

// StorageError is the error for a failed call to the storage backend that
// is not an *Error already. A failure to reach the backend that may pass
// (BackendFailure) is UNAVAILABLE / BACKEND_UNAVAILABLE: clients retry it.
// Anything else is a bug in tagq, not the backend's state: INTERNAL, so
// that clients do not retry it forever and the log shows it. Clients learn
// no more than that; the failure (which may name addresses) is the Cause,
// for the server's log. A storage whose backend has failures of its own
// (the Redis engine's error replies, say) maps them before they leave it.
func StorageError(err error) *Error {
	if BackendFailure(err) {
		return Unavailable(err)
	}
	return &Error{Kind: KindInternal, Reason: ReasonInternal, Message: "internal error", Cause: err}
}

// Unavailable is the error of a backend that cannot be reached or used
// now, for cause: UNAVAILABLE / BACKEND_UNAVAILABLE.
func Unavailable(cause error) *Error {
	return &Error{Kind: KindUnavailable, Reason: ReasonBackendUnavailable, Message: "storage backend unavailable", Cause: cause}
}

// BackendFailure says whether err is a failure to reach a backend over
// the network, whatever the backend: a network or TLS error, a connection
// refused, reset or closed, a reply cut short.
func BackendFailure(err error) bool {
	var ne net.Error
	var cve *tls.CertificateVerificationError
	var rhe tls.RecordHeaderError
	var errno syscall.Errno
	return err != nil && (errors.As(err, &ne) || errors.As(err, &cve) || errors.As(err, &rhe) || errors.As(err, &errno) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed))
}

// KindUnimplemented marks a feature of the API that is not built yet.
const KindUnimplemented Kind = 100
