package server

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// S14: a MessageAttribute with neither string_value nor binary_value is
// INVALID_ATTRIBUTE naming it (per entry in a batch), not an empty string.
func TestS14_AttributeWithoutAValueIsInvalidAttribute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)

	_, err = b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"),
		Attributes: map[string]*tagqv1.MessageAttribute{"k": {}}})
	code, ei := info(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "INVALID_ATTRIBUTE", ei.GetReason())
	require.Equal(t, "attributes[k]", ei.GetMetadata()["field"])

	out, err := b.m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "bad", Body: []byte("x"), Attributes: map[string]*tagqv1.MessageAttribute{"k": {}}},
		{Id: "good", Body: []byte("y"), Attributes: map[string]*tagqv1.MessageAttribute{
			"s": {Value: &tagqv1.MessageAttribute_StringValue{}},
			"b": {Value: &tagqv1.MessageAttribute_BinaryValue{}}}},
	}})
	require.NoError(t, err)
	require.Len(t, out.GetFailed(), 1)
	require.Equal(t, "INVALID_ATTRIBUTE", out.GetFailed()[0].GetReason())
	require.Equal(t, "entries[0].attributes[k]", out.GetFailed()[0].GetField())
	require.Len(t, out.GetSuccessful(), 1)

	recv, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Len(t, recv.GetMessages(), 1, "only the good entry was stored")
	attrs := recv.GetMessages()[0].GetAttributes()
	require.IsType(t, &tagqv1.MessageAttribute_StringValue{}, attrs["s"].GetValue(), "an empty string is a value")
	require.IsType(t, &tagqv1.MessageAttribute_BinaryValue{}, attrs["b"].GetValue(), "empty bytes are a value")
}
