package sqs

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tagq/tagq/tags"
)

// Error is an SQS error, as both protocols answer it: the query
// protocol's code (ErrorResponse/Error/Code, and the JSON protocol's
// x-amzn-query-error header, from which the SDKs take the code), the JSON
// protocol's __type (the shape name in SQS's service model), the HTTP
// status, and whether the sender is at fault.
type Error struct {
	Code    string // e.g. AWS.SimpleQueueService.NonExistentQueue
	Type    string // e.g. QueueDoesNotExist
	Status  int
	Server  bool // the fault is the service's (Receiver), not the caller's (Sender)
	Message string
	// RetryAfter, when set, is the answer's Retry-After header (seconds).
	RetryAfter string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// jsonType is the JSON protocol's __type: SQS's namespace and the shape.
func (e *Error) jsonType() string {
	if modeled[e.Type] {
		return "com.amazonaws.sqs#" + e.Type
	}
	return "com.amazon.coral.service#" + e.Type
}

// fault is the x-amzn-query-error fault, and the query ErrorResponse's Type.
func (e *Error) fault() string {
	if e.Server {
		return "Receiver"
	}
	return "Sender"
}

// modeled: error shapes of SQS's service model (the others are AWS's
// common errors).
var modeled = map[string]bool{}

// sqsErr defines an error kind: its code, shape and status.
func sqsErr(code, typ string, status int, isModeled bool) func(format string, args ...any) *Error {
	if isModeled {
		modeled[typ] = true
	}
	return func(format string, args ...any) *Error {
		return &Error{Code: code, Type: typ, Status: status, Server: status >= 500, Message: fmt.Sprintf(format, args...)}
	}
}

// The errors this endpoint answers. Codes, shapes and statuses are those
// of SQS's service model (botocore's and aws-sdk-go-v2's) and of AWS's
// common errors.
var (
	errQueueDoesNotExist    = sqsErr("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", 400, true)
	errQueueNameExists      = sqsErr("QueueAlreadyExists", "QueueNameExists", 400, true)
	errInvalidAttributeName = sqsErr("InvalidAttributeName", "InvalidAttributeName", 400, true)
	errInvalidAttrValue     = sqsErr("InvalidAttributeValue", "InvalidAttributeValue", 400, true)
	errInvalidContents      = sqsErr("InvalidMessageContents", "InvalidMessageContents", 400, true)
	errReceiptHandle        = sqsErr("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 404, true)
	errNotInflight          = sqsErr("AWS.SimpleQueueService.MessageNotInflight", "MessageNotInflight", 400, true)
	errIdsNotDistinct       = sqsErr("AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "BatchEntryIdsNotDistinct", 400, true)
	errEmptyBatch           = sqsErr("AWS.SimpleQueueService.EmptyBatchRequest", "EmptyBatchRequest", 400, true)
	errBadBatchID           = sqsErr("AWS.SimpleQueueService.InvalidBatchEntryId", "InvalidBatchEntryId", 400, true)
	errTooManyEntries       = sqsErr("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "TooManyEntriesInBatchRequest", 400, true)
	errBatchTooLong         = sqsErr("AWS.SimpleQueueService.BatchRequestTooLong", "BatchRequestTooLong", 400, true)
	errUnsupported          = sqsErr("AWS.SimpleQueueService.UnsupportedOperation", "UnsupportedOperation", 400, true)
	errOverLimit            = sqsErr("OverLimit", "OverLimit", 403, true)
	errThrottled            = sqsErr("RequestThrottled", "RequestThrottled", 403, true)
	errResourceNotFound     = sqsErr("ResourceNotFoundException", "ResourceNotFoundException", 404, true)
	errInvalidAddress       = sqsErr("InvalidAddress", "InvalidAddress", 404, true)

	errInvalidParameter  = sqsErr("InvalidParameterValue", "InvalidParameterValue", 400, false)
	errMissingParameter  = sqsErr("MissingParameter", "MissingParameter", 400, false)
	errInvalidAction     = sqsErr("InvalidAction", "InvalidAction", 400, false)
	errMissingAction     = sqsErr("MissingAction", "MissingAction", 400, false)
	errSerialization     = sqsErr("SerializationException", "SerializationException", 400, false)
	errTooLarge          = sqsErr("RequestEntityTooLarge", "RequestEntityTooLarge", http.StatusRequestEntityTooLarge, false)
	errAccessDenied      = sqsErr("AccessDenied", "AccessDeniedException", 403, false)
	errMissingAuth       = sqsErr("MissingAuthenticationToken", "MissingAuthenticationToken", 403, false)
	errIncompleteSig     = sqsErr("IncompleteSignature", "IncompleteSignature", 400, false)
	errInvalidClientKey  = sqsErr("InvalidClientTokenId", "InvalidClientTokenId", 403, false)
	errSignatureMismatch = sqsErr("SignatureDoesNotMatch", "SignatureDoesNotMatch", 403, false)
	errInternal          = sqsErr("InternalError", "InternalError", 500, false)
	errUnavailable       = sqsErr("ServiceUnavailable", "ServiceUnavailable", 503, false)
	errMethodNotAllowed  = sqsErr("InvalidAction", "InvalidAction", http.StatusMethodNotAllowed, false)
)

func invalidValue(param, value, reason string) *Error {
	return errInvalidParameter("Value %s for parameter %s is invalid. Reason: %s", value, param, reason)
}

func missing(param string) *Error {
	return errMissingParameter("The request must contain the parameter %s.", param)
}

func invalidAddress(raw string) *Error {
	return errInvalidAddress("The address %s is not valid for this endpoint: a queue URL is <scheme>://<host>/<account>/<queue name>.", clip(raw))
}

func queueNotFound(name string) *Error {
	return errQueueDoesNotExist("The specified queue does not exist: %s.", clip(name))
}

// fromStatus is the SQS error for an error of tagqd's gRPC server (a
// status with ErrorInfo), keeping tagq's reason and field in the message.
// An *Error passes unchanged; a context's error is the call's deadline or
// the client leaving.
func fromStatus(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errUnavailable("the request ended before it was answered: %v", err)
	}
	if te, ok := tags.AsError(err); ok { // the engine's own (GetQueueUrl), its Cause left out
		return byReason(codes.Unknown, te.Reason)("%s", te.Text())
	}
	st := status.Convert(err)
	reason, field := "", ""
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			reason, field = ei.GetReason(), ei.GetMetadata()["field"]
		}
	}
	msg := st.Message()
	if reason != "" {
		msg += " (tagq: " + reason
		if field != "" {
			msg += ", field " + field
		}
		msg += ")"
	}
	return byReason(st.Code(), reason)("%s", msg)
}

// byReason picks the SQS error kind for a tagq status code and reason.
func byReason(code codes.Code, reason string) func(string, ...any) *Error {
	switch reason {
	case tags.ReasonQueueNotFound, tags.ReasonTagNotFound:
		return errQueueDoesNotExist
	case tags.ReasonQueueAlreadyExists, tags.ReasonTagAlreadyExists:
		return errQueueNameExists
	case tags.ReasonInvalidReceiptHandle:
		return errReceiptHandle
	case tags.ReasonReceiptHandleStale:
		return errNotInflight
	case tags.ReasonMoveNotFound:
		return errResourceNotFound
	case tags.ReasonQueueFull, tags.ReasonStorageFull, tags.ReasonTooManyTags:
		return errOverLimit
	case tags.ReasonQuotaExceeded, tags.ReasonTooManyRequestBytes:
		return errThrottled
	case tags.ReasonUnauthenticated:
		return errInvalidClientKey
	case tags.ReasonPermissionDenied:
		return errAccessDenied
	case tags.ReasonNotImplemented:
		return errUnsupported
	case tags.ReasonBackendUnavailable, tags.ReasonServerShuttingDown:
		return errUnavailable
	case tags.ReasonInternal:
		return errInternal
	}
	switch code {
	case codes.NotFound:
		return errQueueDoesNotExist
	case codes.AlreadyExists:
		return errQueueNameExists
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return errInvalidParameter
	case codes.PermissionDenied:
		return errAccessDenied
	case codes.Unauthenticated:
		return errInvalidClientKey
	case codes.ResourceExhausted:
		return errOverLimit
	case codes.Unimplemented:
		return errUnsupported
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Aborted:
		return errUnavailable
	}
	return errInternal
}

// entryError is a batch entry's failure (BatchResultErrorEntry).
type entryError struct {
	ID          string `json:"Id" xml:"Id"`
	SenderFault bool   `json:"SenderFault" xml:"SenderFault"`
	Code        string `json:"Code" xml:"Code"`
	Message     string `json:"Message,omitempty" xml:"Message,omitempty"`
}

func entryFailed(id string, e *Error) entryError {
	return entryError{ID: id, SenderFault: !e.Server, Code: e.Code, Message: e.Message}
}

// entryFromTagq is a batch entry tagq refused (its BatchResultError).
func entryFromTagq(id, reason, message, field string) entryError {
	msg := message + " (tagq: " + reason
	if field != "" {
		msg += ", field " + field
	}
	msg += ")"
	// A batch entry's error is the caller's (a bad entry) unless its
	// reason says otherwise.
	return entryFailed(id, byReason(codes.InvalidArgument, reason)("%s", msg))
}
