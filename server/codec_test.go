package server

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// rawCodec sends []byte requests as they are (to send what no protobuf
// encoder would) and decodes answers with the proto codec.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return proto.Unmarshal(data.Materialize(), v.(proto.Message))
}

// S14: a request that is not the method's protobuf message is
// INVALID_ARGUMENT with ErrorInfo (MALFORMED_REQUEST), not a bare INTERNAL.
func TestS14_UnreadableProtobufIsMalformedRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A field 1 (queue) of type bytes whose length runs past the end; a
	// tag with field number 0; a varint that never ends.
	for _, raw := range [][]byte{{0x0a, 0x10, 'x'}, {0x00, 0x01}, {0x08, 0xff, 0xff, 0xff}} {
		err := b.conn.Invoke(b.ctx, "/tagq.v1.QueueService/CreateQueue", &raw, &tagqv1.CreateQueueResponse{},
			grpc.ForceCodecV2(rawCodec{}))
		code, ei := info(t, err)
		require.Equal(t, codes.InvalidArgument, code, "%x: %v", raw, err)
		require.Equal(t, ReasonMalformedRequest, ei.GetReason())
		require.Contains(t, err.Error(), "tagq.v1.CreateQueueRequest")
	}
	lst, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{})
	require.NoError(t, err)
	require.Empty(t, lst.GetQueues(), "nothing was created")

	// A readable request with unknown fields is fine, and the mark a
	// client might send itself only gets the same refusal.
	ok := protowire.AppendTag(nil, 999, protowire.VarintType)
	ok = protowire.AppendVarint(ok, 1)
	ok = append(ok, 0x0a, 0x03, 0x0a, 0x01, 'q') // queue {name: "q"}
	require.NoError(t, b.conn.Invoke(b.ctx, "/tagq.v1.QueueService/CreateQueue", &ok, &tagqv1.CreateQueueResponse{},
		grpc.ForceCodecV2(rawCodec{})))
	forged := protowire.AppendTag(nil, unreadableField, protowire.BytesType)
	forged = protowire.AppendString(forged, "forged")
	err = b.conn.Invoke(b.ctx, "/tagq.v1.QueueService/GetQueue", &forged, &tagqv1.GetQueueResponse{}, grpc.ForceCodecV2(rawCodec{}))
	_, ei := info(t, err)
	require.Equal(t, ReasonMalformedRequest, ei.GetReason())
}

// The codec leaves answers and everything but tagq's unary requests to
// grpc-go's proto codec: a client decoding an unreadable answer still fails.
func TestRequestCodec_OnlyMarksTagqUnaryRequests(t *testing.T) {
	t.Parallel()
	c := requestCodec{base: rawProto{}}
	bad := mem.BufferSlice{mem.SliceBuffer([]byte{0x0a, 0x10})}
	require.Error(t, c.Unmarshal(bad, &tagqv1.CreateQueueResponse{}))
	require.Error(t, c.Unmarshal(bad, &tagqv1.ConsumeRequest{}), "a stream's message")
	req := &tagqv1.CreateQueueRequest{}
	require.NoError(t, c.Unmarshal(bad, req))
	require.Error(t, checkReadable(req))
	require.NoError(t, checkReadable(&tagqv1.CreateQueueRequest{}))
}

// rawProto is a minimal proto codec for the unit test.
type rawProto struct{}

func (rawProto) Name() string                         { return "proto" }
func (rawProto) Marshal(any) (mem.BufferSlice, error) { return nil, nil }
func (rawProto) Unmarshal(d mem.BufferSlice, v any) error {
	return proto.Unmarshal(d.Materialize(), v.(proto.Message))
}

// The codec marshals and unmarshals as proto does, small messages and
// large ones (buffers from grpcBuffers), a request split over buffers too.
func TestRequestCodec_RoundTrip(t *testing.T) {
	t.Parallel()
	c := requestCodec{base: rawProto{}}
	for _, size := range []int{10, 100 << 10} {
		in := &tagqv1.SendMessageRequest{Queue: "q", Body: bytes.Repeat([]byte{7}, size)}
		data, err := c.Marshal(in)
		require.NoError(t, err)
		want, err := proto.Marshal(in)
		require.NoError(t, err)
		got := data.Materialize()
		require.Equal(t, want, got)
		data.Free()
		// Split in three buffers, as a request read over several frames.
		split := mem.BufferSlice{mem.SliceBuffer(got[:1]), mem.SliceBuffer(got[1 : len(got)/2]), mem.SliceBuffer(got[len(got)/2:])}
		out := &tagqv1.SendMessageRequest{}
		require.NoError(t, c.Unmarshal(split, out))
		require.True(t, proto.Equal(in, out), "size %d", size)
	}
}
