package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tagq/tagq/tags"
)

func TestToStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		err    error
		code   codes.Code
		reason string
		meta   map[string]string
	}{
		{"invalid argument with field", &tags.Error{Kind: tags.KindInvalidArgument, Reason: tags.ReasonInvalidName, Field: "queue.name", Message: "bad"},
			codes.InvalidArgument, tags.ReasonInvalidName, map[string]string{"field": "queue.name"}},
		{"not found with metadata", &tags.Error{Kind: tags.KindNotFound, Reason: tags.ReasonQueueNotFound, Metadata: map[string]string{"queue": "q"}},
			codes.NotFound, tags.ReasonQueueNotFound, map[string]string{"queue": "q"}},
		{"already exists", &tags.Error{Kind: tags.KindAlreadyExists, Reason: tags.ReasonTagAlreadyExists},
			codes.AlreadyExists, tags.ReasonTagAlreadyExists, nil},
		{"failed precondition", &tags.Error{Kind: tags.KindFailedPrecondition, Reason: tags.ReasonReceiptHandleStale},
			codes.FailedPrecondition, tags.ReasonReceiptHandleStale, nil},
		{"resource exhausted", &tags.Error{Kind: tags.KindResourceExhausted, Reason: tags.ReasonTooManyTags},
			codes.ResourceExhausted, tags.ReasonTooManyTags, nil},
		{"unavailable", &tags.Error{Kind: tags.KindUnavailable, Reason: tags.ReasonBackendUnavailable},
			codes.Unavailable, tags.ReasonBackendUnavailable, nil},
		{"unknown kind", &tags.Error{Kind: 42, Reason: tags.ReasonInternal}, codes.Internal, tags.ReasonInternal, nil},
		{"wrapped engine error", fmt.Errorf("ctx: %w", &tags.Error{Kind: tags.KindNotFound, Reason: tags.ReasonTagNotFound}),
			codes.NotFound, tags.ReasonTagNotFound, nil},
		{"canceled", context.Canceled, codes.Canceled, "CANCELLED", nil},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), codes.DeadlineExceeded, "DEADLINE_EXCEEDED", nil},
		{"redis network error", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
			codes.Unavailable, tags.ReasonBackendUnavailable, nil},
		{"an error nothing expected (a bug, not the backend)", errors.New("redis: can't parse reply"),
			codes.Internal, tags.ReasonInternal, nil},
		{"bare status", status.Error(codes.Unimplemented, "method X not implemented"), codes.Unimplemented, "UNIMPLEMENTED", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := toStatus(tc.err)
			code, ei := info(t, err)
			require.Equal(t, tc.code, code)
			require.Equal(t, tc.reason, ei.GetReason())
			if len(tc.meta) == 0 {
				require.Empty(t, ei.GetMetadata())
			} else {
				require.Equal(t, tc.meta, ei.GetMetadata())
			}
			var br *errdetails.BadRequest
			for _, d := range status.Convert(err).Details() {
				if d, ok := d.(*errdetails.BadRequest); ok {
					br = d
				}
			}
			if f := tc.meta["field"]; f != "" {
				require.NotNil(t, br, "a BadRequest names the field")
				require.Equal(t, f, br.GetFieldViolations()[0].GetField())
			} else {
				require.Nil(t, br)
			}
		})
	}
	require.NoError(t, toStatus(nil))
	// A full status passes through unchanged.
	full := statusWith(codes.NotFound, tags.ReasonQueueNotFound, "m", "", nil)
	require.Equal(t, full, toStatus(full))
}

func TestWithField_PrefixesACopy(t *testing.T) {
	t.Parallel()
	orig := &tags.Error{Kind: tags.KindInvalidArgument, Reason: tags.ReasonMessageTooLarge, Field: "body"}
	got, _ := tags.AsError(withField(orig, "entries[3]."))
	require.Equal(t, "entries[3].body", got.Field)
	require.Equal(t, "body", orig.Field, "the engine's error is not changed")
	noField := &tags.Error{Kind: tags.KindNotFound}
	require.Same(t, noField, withField(noField, "queue."))
}

func TestInterceptors_PanicIsInternalAndTheServerLivesOn(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	chain := []grpc.UnaryServerInterceptor{logRequests(log), errorStatus, recoverPanics(log)}
	call := func(h grpc.UnaryHandler) (any, error) {
		info := &grpc.UnaryServerInfo{FullMethod: "/tagq.v1.QueueService/GetQueue"}
		for i := len(chain) - 1; i >= 0; i-- {
			next, ic := h, chain[i]
			h = func(ctx context.Context, req any) (any, error) { return ic(ctx, req, info, next) }
		}
		return h(context.Background(), nil)
	}
	_, err := call(func(context.Context, any) (any, error) { panic("boom") })
	code, ei := info(t, err)
	require.Equal(t, codes.Internal, code)
	require.Equal(t, "INTERNAL", ei.GetReason())
	resp, err := call(func(context.Context, any) (any, error) { return "fine", nil })
	require.NoError(t, err)
	require.Equal(t, "fine", resp)
}

func TestErrorStatus_AnEndedCallReportsWhyItEnded(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := errorStatus(ctx, nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) {
		return nil, &tags.Error{Kind: tags.KindUnavailable, Reason: tags.ReasonBackendUnavailable, Message: "context canceled"}
	})
	code, ei := info(t, err)
	require.Equal(t, codes.Canceled, code)
	require.Equal(t, "CANCELLED", ei.GetReason())
}
