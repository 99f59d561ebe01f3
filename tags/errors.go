package tags

import (
	"errors"
	"fmt"
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

// Reasons are the ErrorInfo reasons of DESIGN.md §2.
const (
	ReasonQueueNotFound         = "QUEUE_NOT_FOUND"
	ReasonQueueAlreadyExists    = "QUEUE_ALREADY_EXISTS"
	ReasonTagNotFound           = "TAG_NOT_FOUND"
	ReasonTagAlreadyExists      = "TAG_ALREADY_EXISTS"
	ReasonInvalidName           = "INVALID_NAME"
	ReasonInvalidArgumentRange  = "INVALID_ARGUMENT_RANGE"
	ReasonMessageTooLarge       = "MESSAGE_TOO_LARGE"
	ReasonInvalidAttribute      = "INVALID_ATTRIBUTE"
	ReasonReservedAttribute     = "RESERVED_ATTRIBUTE"
	ReasonBatchTooLarge         = "BATCH_TOO_LARGE"
	ReasonDuplicateBatchEntryID = "DUPLICATE_BATCH_ENTRY_ID"
	ReasonInvalidReceiptHandle  = "INVALID_RECEIPT_HANDLE"
	ReasonReceiptHandleStale    = "RECEIPT_HANDLE_STALE"
	ReasonTooManyTags           = "TOO_MANY_TAGS"
	ReasonBackendUnavailable    = "BACKEND_UNAVAILABLE"
	ReasonInvalidFilter         = "INVALID_FILTER"
	ReasonImmutableField        = "IMMUTABLE_FIELD"
	ReasonInternal              = "INTERNAL"
	ReasonNotASourceQueue       = "NOT_A_SOURCE_QUEUE"
	ReasonRedriveCycle          = "REDRIVE_CYCLE"
	ReasonDeadLetterQueueInUse  = "DEAD_LETTER_QUEUE_IN_USE"
	ReasonNotADeadLetterQueue   = "NOT_A_DEAD_LETTER_QUEUE"
	// ReasonQueueFull: a send beyond a queue's cap with overflow
	// OverflowRejectNew (RESOURCE_EXHAUSTED).
	ReasonQueueFull = "QUEUE_FULL"
	// ReasonStorageFull: Redis is near its memory limit and sends are
	// refused until it is not (RESOURCE_EXHAUSTED).
	ReasonStorageFull = "STORAGE_FULL"
)

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

// unavailable is BACKEND_UNAVAILABLE for a failure to reach the storage:
// clients learn no more than that; the failure (which names addresses)
// is the Cause, for the server's log.
func unavailable(err error) *Error {
	return &Error{Kind: KindUnavailable, Reason: ReasonBackendUnavailable, Message: "storage backend unavailable", Cause: err}
}

// KindUnimplemented marks a feature of the API that is not built yet.
const KindUnimplemented Kind = 100

// ReasonNotImplemented goes with KindUnimplemented.
const ReasonNotImplemented = "NOT_IMPLEMENTED"
