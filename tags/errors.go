package tags

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/tagq/tagq/internal/durable"
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

// Error is every error the engine returns on purpose. Field names the
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

// echo is input quoted in an error: clipped to MaxEcho.
func echo(s string) string { return Clip(s, MaxEcho) }

func invalid(reason, field, format string, args ...any) *Error {
	return &Error{Kind: KindInvalidArgument, Reason: reason, Field: field, Message: fmt.Sprintf(format, args...)}
}

func queueNotFound(q string) *Error {
	q = echo(q)
	return &Error{Kind: KindNotFound, Reason: ReasonQueueNotFound, Message: fmt.Sprintf("queue %q does not exist", q),
		Metadata: map[string]string{"queue": q}}
}

func tagNotFound(q, t string) *Error {
	q, t = echo(q), echo(t)
	return &Error{Kind: KindNotFound, Reason: ReasonTagNotFound, Message: fmt.Sprintf("tag %q of queue %q does not exist", t, q),
		Metadata: map[string]string{"queue": q, "tag": t}}
}

// noDefaultTag answers a receive that names no tag on a queue created
// without a default tag. It is NOT_FOUND rather than a default tag made on
// the spot: a tag made by a stray tagless call would hold every later
// message until retention, the backlog NoDefaultTag exists to avoid.
func noDefaultTag(q string) *Error {
	q = echo(q)
	return &Error{Kind: KindNotFound, Reason: ReasonTagNotFound, Field: "tag",
		Message:  fmt.Sprintf("queue %q has no default tag (it was created with no_default_tag): name the tag to read", q),
		Metadata: map[string]string{"queue": q, "tag": ""}}
}

// StorageError is the error for a failed call to Redis. A failure to reach
// or use the storage that may pass (BackendFailure) is UNAVAILABLE /
// BACKEND_UNAVAILABLE: clients retry it. Anything else (a script error, a
// reply of a type the code did not expect) is a bug in tagq, not the
// backend's state: INTERNAL, so that clients do not retry it forever and
// the log shows it. Clients learn no more than that; the failure (which
// may name addresses) is the Cause, for the server's log.
func StorageError(err error) *Error {
	if de, ok := durable.AsError(err); ok {
		return replicationError(de)
	}
	if BackendFailure(err) {
		return &Error{Kind: KindUnavailable, Reason: ReasonBackendUnavailable, Message: "storage backend unavailable", Cause: err}
	}
	return &Error{Kind: KindInternal, Reason: ReasonInternal, Message: "internal error", Cause: err}
}

// replicationError is a write the replicas did not confirm (S20):
// REPLICATION_TIMEOUT when it was sent (it may have been stored),
// REPLICAS_UNAVAILABLE when it was refused before it was sent.
func replicationError(de *durable.Error) *Error {
	md := map[string]string{"replicas_wanted": strconv.Itoa(de.Wanted)}
	if !de.Sent {
		return &Error{Kind: KindUnavailable, Reason: ReasonReplicasUnavailable, Metadata: md, Cause: de,
			Message: fmt.Sprintf("Redis has fewer than the %d replica(s) each write must reach: nothing was stored; retry once they are back", de.Wanted)}
	}
	md["replicas_acked"] = strconv.Itoa(de.Acked)
	return &Error{Kind: KindUnavailable, Reason: ReasonReplicationTimeout, Metadata: md, Cause: de,
		Message: fmt.Sprintf("the write reached Redis but %d of the %d replica(s) it must reach confirmed it in time: "+
			"it may have been stored; retry (a send with a deduplication id is then stored once)", de.Acked, de.Wanted)}
}

// Redis error replies that mean the backend cannot serve now or was set
// up wrong (as opposed to a bug in a script or a wrong command).
var unavailablePrefixes = []string{"OOM", "LOADING", "BUSY", "MASTERDOWN", "READONLY", "CLUSTERDOWN",
	"TRYAGAIN", "NOREPLICAS", "MISCONF", "NOAUTH", "WRONGPASS", "NOPERM", "MOVED", "ASK"}

// BackendFailure says whether err, from a Redis call, is a failure to reach
// or use the storage: a network or TLS error, a closed, exhausted or timed
// out connection pool, a connection that ended, or a Redis reply saying it
// cannot serve now (loading, out of memory, failing over, cluster down,
// refused credentials).
func BackendFailure(err error) bool {
	var ne net.Error
	var rerr redis.Error
	var cve *tls.CertificateVerificationError
	var rhe tls.RecordHeaderError
	var errno syscall.Errno
	switch {
	case err == nil:
		return false
	case errors.As(err, &ne), errors.As(err, &cve), errors.As(err, &rhe), errors.As(err, &errno),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted):
		return true
	case errors.As(err, &rerr):
		msg := strings.TrimPrefix(rerr.Error(), "ERR ")
		for _, p := range unavailablePrefixes {
			if strings.HasPrefix(msg, p+" ") || msg == p {
				return true
			}
		}
		return false
	}
	// go-redis's own connection-state errors ("redis: connection not
	// available", "redis: connection pool: …", "redis: cluster has no
	// nodes") have no exported value to compare with.
	msg := err.Error()
	for _, p := range []string{"redis: connection", "redis: cluster", "redis: all sentinels", "redis: client is closed",
		"redis: timed out", "redis: autopipeline"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// KindUnimplemented marks a feature of the API that is not built yet.
const KindUnimplemented Kind = 100
