package server

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	"github.com/tagq/tagq/tags"
)

// Domain is the ErrorInfo domain of every tagq error.
const Domain = "tagq"

var kindCodes = map[tags.Kind]codes.Code{
	tags.KindInvalidArgument:    codes.InvalidArgument,
	tags.KindNotFound:           codes.NotFound,
	tags.KindAlreadyExists:      codes.AlreadyExists,
	tags.KindFailedPrecondition: codes.FailedPrecondition,
	tags.KindResourceExhausted:  codes.ResourceExhausted,
	tags.KindUnavailable:        codes.Unavailable,
	tags.KindInternal:           codes.Internal,
	tags.KindUnimplemented:      codes.Unimplemented,
}

// codeReasons are the ErrorInfo reasons of statuses that do not come from
// the engine (gRPC itself, the gateway, a cancelled call): the code's
// canonical name, as google.rpc.Code spells it.
var codeReasons = map[codes.Code]string{
	codes.Canceled:           "CANCELLED",
	codes.Unknown:            "UNKNOWN",
	codes.InvalidArgument:    "INVALID_ARGUMENT",
	codes.DeadlineExceeded:   "DEADLINE_EXCEEDED",
	codes.NotFound:           "NOT_FOUND",
	codes.AlreadyExists:      "ALREADY_EXISTS",
	codes.PermissionDenied:   "PERMISSION_DENIED",
	codes.ResourceExhausted:  "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION",
	codes.Aborted:            "ABORTED",
	codes.OutOfRange:         "OUT_OF_RANGE",
	codes.Unimplemented:      "UNIMPLEMENTED",
	codes.Internal:           "INTERNAL",
	codes.Unavailable:        "UNAVAILABLE",
	codes.DataLoss:           "DATA_LOSS",
	codes.Unauthenticated:    "UNAUTHENTICATED",
}

// fieldError is an INVALID_ARGUMENT the server finds itself.
func fieldError(reason, field, format string, args ...any) error {
	return &tags.Error{Kind: tags.KindInvalidArgument, Reason: reason, Field: field, Message: fmt.Sprintf(format, args...)}
}

// withField prefixes an engine error's field with the request path of the
// argument it came from (e.g. "queue." or "entries[3].").
func withField(err error, prefix string) error {
	if e, ok := tags.AsError(err); ok && e.Field != "" && prefix != "" {
		c := *e
		c.Field = prefix + e.Field
		return &c
	}
	return err
}

// toStatus turns any error into a gRPC status error carrying ErrorInfo
// (and BadRequest when a field is at fault):
//   - a *tags.Error keeps its reason, field and metadata, with the code of
//     its kind;
//   - a status keeps its code and message (ErrorInfo added if missing);
//   - context.Canceled / DeadlineExceeded become CANCELLED /
//     DEADLINE_EXCEEDED;
//   - anything else is judged by tags.StorageError: a failure to reach
//     the storage over the network is UNAVAILABLE /
//     BACKEND_UNAVAILABLE; an error nothing expected is INTERNAL (a bug:
//     clients should not retry it), logged with its cause.
//
// Clients never see the failure behind an error (an engine error's Cause,
// a storage error's text: they name internal addresses); the status
// returned carries it for the access log (causedError).
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	var ce *causedError
	if errors.As(err, &ce) {
		return err
	}
	if e, ok := tags.AsError(err); ok {
		code, ok := kindCodes[e.Kind]
		if !ok {
			code = codes.Internal
		}
		return withCause(statusWith(code, e.Reason, e.Text(), e.Field, e.Metadata), e.Cause)
	}
	if st, ok := status.FromError(err); ok {
		return withErrorInfo(st, "")
	}
	switch {
	case errors.Is(err, context.Canceled):
		return statusWith(codes.Canceled, codeReasons[codes.Canceled], "the request was cancelled", "", nil)
	case errors.Is(err, context.DeadlineExceeded):
		return statusWith(codes.DeadlineExceeded, codeReasons[codes.DeadlineExceeded], "the request's deadline passed", "", nil)
	}
	e := tags.StorageError(err)
	return withCause(statusWith(kindCodes[e.Kind], e.Reason, e.Text(), "", nil), err)
}

// causedError is a status error that also holds the failure behind it,
// for the server's log (logRequests); gRPC sends the status alone.
type causedError struct {
	st    *status.Status
	cause error
}

func (e *causedError) Error() string              { return e.st.Err().Error() }
func (e *causedError) GRPCStatus() *status.Status { return e.st }

// withCause returns the status error st holding cause, if any.
func withCause(st error, cause error) error {
	if cause == nil {
		return st
	}
	return &causedError{st: status.Convert(st), cause: cause}
}

// causeOf is the failure behind err for the log, or "".
func causeOf(err error) string {
	var ce *causedError
	if errors.As(err, &ce) {
		return ce.cause.Error()
	}
	return ""
}

// withErrorInfo returns st as an error, adding an ErrorInfo with reason (or,
// when reason is "", the code's canonical name) unless it has one.
func withErrorInfo(st *status.Status, reason string) error {
	if st.Code() == codes.OK {
		return nil
	}
	if errorInfo(st) != nil {
		return st.Err()
	}
	if reason == "" {
		reason = codeReasons[st.Code()]
	}
	return statusWith(st.Code(), reason, st.Message(), "", nil)
}

// errorInfo is st's ErrorInfo detail, or nil.
func errorInfo(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// Bounds on what a status carries, whatever went into it: the message
// and every metadata value (the field included) are clipped, so no input
// comes back megabytes long in the message or the trailer. Echoed input is
// clipped shorter where it is quoted (tags.MaxEcho); these catch the rest.
const (
	maxStatusMessage = 1024
	maxMetadataValue = 512
)

// catalogueCheck, when set (the server's tests), sees the code and reason
// of every status the server makes, to hold them to the error catalogue
// (proto/tagq/v1/errors.yaml).
var catalogueCheck func(code codes.Code, reason string)

// statusWith builds a status with ErrorInfo{reason, domain "tagq",
// metadata + "field"} and, when a field is at fault, a BadRequest naming it.
func statusWith(code codes.Code, reason, msg, field string, meta map[string]string) error {
	if catalogueCheck != nil {
		catalogueCheck(code, reason)
	}
	msg = tags.Clip(msg, maxStatusMessage)
	field = tags.Clip(field, maxMetadataValue)
	md := make(map[string]string, len(meta)+1)
	for k, v := range meta {
		md[k] = tags.Clip(v, maxMetadataValue)
	}
	if field != "" {
		md["field"] = field
	}
	st := status.New(code, msg)
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: reason, Domain: Domain, Metadata: md}}
	if field != "" {
		details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: field, Description: msg, Reason: reason}}})
	}
	if withD, err := st.WithDetails(details...); err == nil {
		st = withD
	}
	return st.Err()
}
