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

// The stream interceptors mirror the unary ones (interceptors.go), in the
// same order: logStreams, metrics.stream, streamErrorStatus,
// recoverStreamPanics.

func recoverStreamPanics(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ss.Context(), "panic in handler", "method", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
				err = statusWith(codes.Internal, codeReasons[codes.Internal], "internal error", "", nil)
			}
		}()
		return handler(srv, ss)
	}
}

// streamErrorStatus gives a stream's final error ErrorInfo, as errorStatus
// does for unary calls.
func streamErrorStatus(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	err := handler(srv, ss)
	if err == nil {
		return nil
	}
	if cerr := ss.Context().Err(); cerr != nil {
		if _, isStatus := status.FromError(err); !isStatus {
			err = cerr
		}
	}
	if err == context.Canceled {
		err = status.Error(codes.Canceled, "the client cancelled the stream")
	}
	return toStatus(err)
}

func logStreams(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		code := status.Code(err)
		attrs := []any{"method", info.FullMethod, "code", code.String(), "duration", time.Since(start)}
		if err != nil {
			attrs = append(attrs, "err", status.Convert(err).Message())
		}
		log.Log(ss.Context(), logLevel(code), "stream", attrs...)
		return err
	}
}
