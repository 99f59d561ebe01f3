package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tagq/tagq/tags"
)

// The unary interceptors, outermost first: logRequests, metrics.unary,
// errorStatus, recoverPanics. The ones outside errorStatus see the final
// status of every call, a panic included.

// recoverPanics turns a handler's panic into INTERNAL, so one bad request
// never takes the process down, and logs it (panics).
func recoverPanics(log *slog.Logger) grpc.UnaryServerInterceptor { return recoverPanicsTo(log, panics) }

func recoverPanicsTo(log *slog.Logger, pl *panicLog) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				pl.report(ctx, log, info.FullMethod, p)
				resp, err = nil, statusWith(codes.Internal, codeReasons[codes.Internal], "internal error", "", nil)
			}
		}()
		return handler(ctx, req)
	}
}

// panics logs the handlers' panics, unary and streaming alike: a flood of
// requests that panic yields one stack trace per 10 s.
var panics = newPanicLog(10*time.Second, time.Now)

// panicLog logs every panic in one line with its method and value, and
// with a stack trace at most once per interval: the stacks it leaves out
// are counted, and the count goes with the next stack it logs.
type panicLog struct {
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	next    time.Time // the next stack may be logged from then on
	leftOut int       // stacks left out since the last one logged
}

func newPanicLog(every time.Duration, now func() time.Time) *panicLog {
	return &panicLog{every: every, now: now}
}

// report logs panic p of a call of method. Call it from the deferred
// function that recovered p, so that the stack is the panicking one.
func (pl *panicLog) report(ctx context.Context, log *slog.Logger, method string, p any) {
	pl.mu.Lock()
	t := pl.now()
	stack := !t.Before(pl.next)
	leftOut := pl.leftOut
	if stack {
		pl.next, pl.leftOut = t.Add(pl.every), 0
	} else {
		pl.leftOut++
	}
	pl.mu.Unlock()
	attrs := []any{"method", method, "panic", tags.Clip(fmt.Sprint(p), maxLoggedPanic)}
	if stack {
		attrs = append(attrs, "stack", string(debug.Stack()), "stacks_left_out", leftOut)
	} else {
		attrs = append(attrs, "stack", "left out: at most one stack per "+pl.every.String())
	}
	log.ErrorContext(ctx, "panic in handler", attrs...)
}

// maxLoggedPanic bounds the panic value in the log (it may quote input).
const maxLoggedPanic = 1024

// errorStatus makes every error a gRPC status with ErrorInfo (toStatus). A
// call whose client went away or whose deadline passed reports that, not
// the storage error it may have caused. A request the codec could not read
// is refused before its handler runs (checkReadable). A QUEUE_NOT_FOUND or
// TAG_NOT_FOUND names the request field that holds the missing name
// (notFoundField).
func errorStatus(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := checkReadable(req); err != nil {
		return nil, err
	}
	resp, err := handler(ctx, req)
	if err == nil {
		return resp, nil
	}
	return nil, finalStatus(ctx, notFoundField(req, err))
}

// finalStatus is the status a call (unary or stream) ends with: err with
// ErrorInfo, or the client's cancel or deadline when the call ended for it.
func finalStatus(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if _, isStatus := status.FromError(err); !isStatus {
			err = cerr
		}
	}
	return toStatus(err)
}

// logRequests writes one access-log line per call: OK and the client's own
// mistakes at debug, UNAVAILABLE at warn, the rest at error; with the
// failure behind an error (its cause, which clients are not told).
func logRequests(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		logCall(ctx, log, "rpc", info.FullMethod, start, err)
		return resp, err
	}
}

// logCall writes a call's access-log line (msg "rpc" or "stream").
func logCall(ctx context.Context, log *slog.Logger, msg, method string, start time.Time, err error) {
	code := status.Code(err)
	attrs := []any{"method", method, "code", code.String(), "duration", time.Since(start)}
	if err != nil {
		attrs = append(attrs, "err", status.Convert(err).Message())
		if cause := causeOf(err); cause != "" {
			attrs = append(attrs, "cause", cause)
		}
	}
	log.Log(ctx, logLevel(code), msg, attrs...)
}

func logLevel(code codes.Code) slog.Level {
	switch code {
	case codes.OK, codes.Canceled, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists,
		codes.FailedPrecondition, codes.ResourceExhausted, codes.OutOfRange, codes.Unimplemented,
		codes.DeadlineExceeded, codes.PermissionDenied, codes.Unauthenticated, codes.Aborted:
		return slog.LevelDebug
	case codes.Unavailable:
		return slog.LevelWarn
	}
	return slog.LevelError
}
