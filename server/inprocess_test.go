package server

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// An in-process call records what a gRPC call does: its access-log line,
// its gRPC metrics, and its errors with ErrorInfo and the field naming
// what was missing; and it answers what a gRPC call answers. (Its span:
// TestTracing_ServerSpansContinueTheCallersTrace; its principal:
// TestAuth_GatewayPrincipal.)
func TestInProcess_AsAGRPCCall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q, m := tagqv1.NewQueueServiceClient(b.srv.InProcess()), tagqv1.NewMessageServiceClient(b.srv.InProcess())

	_, err := q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "orders"}})
	require.NoError(t, err)
	sent, err := m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "orders", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("one")}, {Id: "b", Body: []byte("two")}}})
	require.NoError(t, err)
	require.Len(t, sent.GetSuccessful(), 2)
	got, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "orders", MaxMessages: i32(10)})
	require.NoError(t, err, "stored for a gRPC client to read")
	require.Len(t, got.GetMessages(), 2)
	require.Equal(t, sent.GetSuccessful()[0].GetMessageId(), got.GetMessages()[0].GetMessageId())

	_, err = m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "nope"})
	code, ei := info(t, err)
	require.Equal(t, codes.NotFound, code)
	require.Equal(t, "queue", ei.GetMetadata()["field"])
	_, err = m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "orders", MaxMessages: i32(-1)})
	code, ei = info(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "max_messages", ei.GetMetadata()["field"])

	// The access log, as for gRPC's calls.
	logs := b.logs.String()
	for _, want := range []string{"method=/tagq.v1.QueueService/CreateQueue code=OK", "method=/tagq.v1.MessageService/SendMessageBatch code=OK",
		"method=/tagq.v1.MessageService/ReceiveMessage code=NotFound", "method=/tagq.v1.MessageService/ReceiveMessage code=InvalidArgument"} {
		require.Contains(t, logs, "msg=rpc "+want)
	}
	// The gRPC metrics.
	require.Equal(t, 1.0, handled(t, b, "CreateQueue", "OK"))
	require.Equal(t, 1.0, handled(t, b, "SendMessageBatch", "OK"))
	require.Equal(t, 1.0, handled(t, b, "ReceiveMessage", "OK"), "the gRPC client's")
	require.Equal(t, 1.0, handled(t, b, "ReceiveMessage", "NotFound"))
}

// handled is grpc_server_handled_total of a tagq method and code.
func handled(t *testing.T, b *testBundle, method, code string) float64 {
	t.Helper()
	mfs, err := b.reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "grpc_server_handled_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["grpc_method"] == method && labels["grpc_code"] == code {
				return mt.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// A request over MaxRequestBytes is refused as the gateway refuses it; a
// method tagq has not, a request of another type and streams are errors
// with ErrorInfo, never a panic.
func TestInProcess_Refusals(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.MaxRequestBytes = 1000 })
	conn := b.srv.InProcess()
	m := tagqv1.NewMessageServiceClient(conn)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)

	_, err = m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte(strings.Repeat("x", 2000))})
	code, ei := info(t, err)
	require.Equal(t, codes.ResourceExhausted, code)
	require.Equal(t, ReasonRequestTooLarge, ei.GetReason())

	err = conn.Invoke(b.ctx, "/tagq.v1.MessageService/NoSuchMethod", &tagqv1.SendMessageRequest{}, &tagqv1.SendMessageResponse{})
	code, _ = info(t, err)
	require.Equal(t, codes.Unimplemented, code)
	err = conn.Invoke(b.ctx, "/grpc.health.v1.Health/Check", &tagqv1.SendMessageRequest{}, &tagqv1.SendMessageResponse{})
	code, _ = info(t, err)
	require.Equal(t, codes.Unimplemented, code, "tagq's services only")

	err = conn.Invoke(b.ctx, tagqv1.MessageService_SendMessage_FullMethodName, &tagqv1.ReceiveMessageRequest{Queue: "q"}, &tagqv1.SendMessageResponse{})
	code, _ = info(t, err)
	require.Equal(t, codes.Internal, code, "a request of another method")
	err = conn.Invoke(b.ctx, tagqv1.MessageService_SendMessage_FullMethodName, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")}, &tagqv1.ReceiveMessageResponse{})
	code, _ = info(t, err)
	require.Equal(t, codes.Internal, code, "a reply of another method")

	_, err = conn.NewStream(b.ctx, &grpc.StreamDesc{ServerStreams: true}, "/tagq.v1.MessageService/Consume")
	code, _ = info(t, err)
	require.Equal(t, codes.Unimplemented, code)

	// A cancelled caller's call ends as a gRPC call's does.
	ctx, cancel := context.WithCancel(b.ctx)
	cancel()
	_, err = m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", WaitSeconds: i32(5)})
	code, _ = info(t, err)
	require.Equal(t, codes.Canceled, code)
}
