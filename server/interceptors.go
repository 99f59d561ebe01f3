package server

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The unary interceptors, outermost first: logRequests, metrics.unary,
// errorStatus, recoverPanics. The ones outside errorStatus see the final
// status of every call, a panic included.

// recoverPanics turns a handler's panic into INTERNAL, so one bad request
// never takes the process down.
func recoverPanics(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ctx, "panic in handler", "method", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
				resp, err = nil, statusWith(codes.Internal, codeReasons[codes.Internal], "internal error", "", nil)
			}
		}()
		return handler(ctx, req)
	}
}

// errorStatus makes every error a gRPC status with ErrorInfo (toStatus). A
// call whose client went away or whose deadline passed reports that, not
// the storage error it may have caused.
func errorStatus(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err == nil {
		return resp, nil
	}
	if cerr := ctx.Err(); cerr != nil {
		if _, isStatus := status.FromError(err); !isStatus {
			err = cerr
		}
	}
	return nil, toStatus(err)
}

// logRequests writes one access-log line per call: OK and the client's own
// mistakes at debug, UNAVAILABLE at warn, the rest at error.
func logRequests(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		code := status.Code(err)
		attrs := []any{"method", info.FullMethod, "code", code.String(), "duration", time.Since(start)}
		if err != nil {
			attrs = append(attrs, "err", status.Convert(err).Message())
		}
		log.Log(ctx, logLevel(code), "rpc", attrs...)
		return resp, err
	}
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
