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
// (and BadRequest when a field is at fault).
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok && len(s.Details()) > 0 {
		return err // already a full tagq status
	}
	switch {
	case errors.Is(err, context.Canceled):
		return statusWith(codes.Canceled, "CANCELLED", "the request was cancelled", "", nil)
	case errors.Is(err, context.DeadlineExceeded):
		return statusWith(codes.DeadlineExceeded, "DEADLINE_EXCEEDED", "the request's deadline passed", "", nil)
	}
	e, ok := tags.AsError(err)
	if !ok {
		return statusWith(codes.Unavailable, tags.ReasonBackendUnavailable, "storage backend unavailable: "+err.Error(), "", nil)
	}
	code, ok := kindCodes[e.Kind]
	if !ok {
		code = codes.Internal
	}
	return statusWith(code, e.Reason, e.Error(), e.Field, e.Metadata)
}

func statusWith(code codes.Code, reason, msg, field string, meta map[string]string) error {
	md := map[string]string{}
	for k, v := range meta {
		md[k] = v
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
