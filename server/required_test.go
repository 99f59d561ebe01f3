package server

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// tagqUnaryMethods are the unary methods of tagq's services, by full gRPC
// method name, with their request and response types.
func tagqUnaryMethods(t *testing.T) map[string][2]protoreflect.MessageType {
	t.Helper()
	out := map[string][2]protoreflect.MessageType{}
	for _, fd := range []protoreflect.FileDescriptor{tagqv1.File_tagq_v1_queue_proto,
		tagqv1.File_tagq_v1_message_proto, tagqv1.File_tagq_v1_redrive_proto} {
		for i := 0; i < fd.Services().Len(); i++ {
			svc := fd.Services().Get(i)
			for j := 0; j < svc.Methods().Len(); j++ {
				m := svc.Methods().Get(j)
				if m.IsStreamingClient() || m.IsStreamingServer() {
					continue
				}
				in, err := protoregistry.GlobalTypes.FindMessageByName(m.Input().FullName())
				require.NoError(t, err)
				resp, err := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
				require.NoError(t, err)
				out["/"+string(svc.FullName())+"/"+string(m.Name())] = [2]protoreflect.MessageType{in, resp}
			}
		}
	}
	require.GreaterOrEqual(t, len(out), 20)
	return out
}

// S14: no RPC dereferences a message field the request left out. Every
// unary method, called with an empty request, answers with a status that
// carries ErrorInfo and is not INTERNAL or UNKNOWN, and nothing panics.
func TestS14_EveryRPCTakesAnEmptyRequestWithoutPanicking(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for method, types := range tagqUnaryMethods(t) {
		err := b.conn.Invoke(b.ctx, method, types[0].New().Interface(), types[1].New().Interface())
		if err == nil {
			continue // e.g. ListQueues: an empty request is a fine one
		}
		code, _ := info(t, err)
		require.NotContains(t, []codes.Code{codes.Internal, codes.Unknown}, code, "%s: %v", method, err)
	}
	require.NotContains(t, b.logs.String(), "panic")
}

// S14: a request without a message field it needs is INVALID_ARGUMENT
// naming that field.
func TestS14_MissingRequiredMessageIsInvalidArgumentNamingIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		call  func() error
		field string
	}{
		{"CreateQueue without queue", func() error {
			_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{})
			return err
		}, "queue"},
		{"UpdateQueue with a mask and no queue", func() error {
			_, err := b.q.UpdateQueue(b.ctx, &tagqv1.UpdateQueueRequest{
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delay_seconds", "visibility_timeout_seconds",
					"receive_wait_seconds", "message_retention_seconds", "max_message_bytes"}}})
			return err
		}, "queue"},
		{"CreateTag without tag", func() error {
			_, err := b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "q"})
			return err
		}, "tag"},
	} {
		code, ei := info(t, tc.call())
		require.Equal(t, codes.InvalidArgument, code, tc.name)
		require.Equal(t, "INVALID_ARGUMENT_RANGE", ei.GetReason(), tc.name)
		require.Equal(t, tc.field, ei.GetMetadata()["field"], tc.name)
	}
	require.NotContains(t, b.logs.String(), "panic")
	// Nothing was written: the queue has its default tag only.
	lst, err := b.q.ListTags(b.ctx, &tagqv1.ListTagsRequest{Queue: "q"})
	require.NoError(t, err)
	require.Len(t, lst.GetTags(), 1)
	q, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
	require.EqualValues(t, 30, q.GetQueue().GetVisibilityTimeoutSeconds(), "unchanged")
}
