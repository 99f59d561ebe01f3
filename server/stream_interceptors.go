package server

import (
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// The stream interceptors mirror the unary ones (interceptors.go), in the
// same order: logStreams, metrics.stream, streamErrorStatus,
// recoverStreamPanics.

func recoverStreamPanics(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				panics.report(ss.Context(), log, info.FullMethod, p)
				err = statusWith(codes.Internal, codeReasons[codes.Internal], "internal error", "", nil)
			}
		}()
		return handler(srv, ss)
	}
}

// streamErrorStatus gives a stream's final error ErrorInfo, as errorStatus
// does for unary calls.
func streamErrorStatus(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := handler(srv, ss); err != nil {
		return finalStatus(ss.Context(), err)
	}
	return nil
}

func logStreams(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		logCall(ss.Context(), log, "stream", info.FullMethod, start, err)
		return err
	}
}
