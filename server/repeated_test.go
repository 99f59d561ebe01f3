package server

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tagq/tagq/gen/connect/tagq/v1/tagqv1connect"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// emptyEntries is a SendMessageBatchRequest for queue "q" with n empty
// entries, as protobuf: two bytes an entry.
func emptyEntries(n int) []byte {
	b := []byte{0x0a, 0x01, 'q'}
	for range n {
		b = append(b, 0x12, 0x00)
	}
	return b
}

// emptyEntriesJSON is the same as JSON (without the queue: REST has it in
// its path).
func emptyEntriesJSON(queue string, n int) string {
	var b strings.Builder
	b.WriteString("{")
	if queue != "" {
		fmt.Fprintf(&b, `"queue": %q, `, queue)
	}
	b.WriteString(`"entries": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("{}")
	}
	b.WriteString("]}")
	return b.String()
}

// allocated is what fn allocates, in bytes.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A batch of 5 million empty entries (10 MB) is refused by the codec
// before it builds them: BATCH_TOO_LARGE naming entries, at a cost of the
// bytes joined once (decoding them took 530 MB); the same in JSON (10 MB:
// 650 MB) at no cost.
func TestRepeated_RefusedBeforeDecoding(t *testing.T) {
	raw := emptyEntries(5_000_000)
	c := requestCodec{base: rawProto{}}
	req := &tagqv1.SendMessageBatchRequest{}
	n := allocated(func() { require.NoError(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(raw)}, req)) })
	require.Less(t, n, uint64(2*len(raw)), "allocated %d bytes: gRPC's buffers joined, and little more", n)
	require.Empty(t, req.GetEntries())
	require.Equal(t, "q", req.GetQueue(), "the fields that are not repeated are kept")
	code, ei := info(t, checkReadable(req))
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, tags.ReasonBatchTooLarge, ei.GetReason())
	require.Equal(t, "entries", ei.GetMetadata()["field"])

	js := []byte(emptyEntriesJSON("q", 5_000_000))
	jreq := &tagqv1.SendMessageBatchRequest{}
	n = allocated(func() { require.True(t, boundedJSON(js, jreq)) })
	require.Less(t, n, uint64(1<<20), "allocated %d bytes", n)
	_, ei = info(t, checkReadable(jreq))
	require.Equal(t, tags.ReasonBatchTooLarge, ei.GetReason())

	// At the limit, nothing is refused.
	for _, b := range [][]byte{emptyEntries(tags.MaxBatchEntries)} {
		require.False(t, boundedProto(b, &tagqv1.SendMessageBatchRequest{}))
	}
	require.False(t, boundedJSON([]byte(emptyEntriesJSON("q", tags.MaxBatchEntries)), &tagqv1.SendMessageBatchRequest{}))
}

// Every protocol refuses a batch over 100 entries (and an entry over 32
// attributes) as its decoding would have, before building it: gRPC,
// REST, Connect (JSON and protobuf) and a Publish frame (answered, the
// stream going on); Consume settlements beyond what a stream can hold end
// the stream. Batches at the limits pass.
func TestRepeated_EveryProtocol(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	check := func(err error, reason, field string) {
		t.Helper()
		code, ei := info(t, err)
		require.Equal(t, codes.InvalidArgument, code, "%v", err)
		require.Equal(t, reason, ei.GetReason(), "%v", err)
		require.Equal(t, field, ei.GetMetadata()["field"], "%v", err)
	}
	// gRPC.
	raw := emptyEntries(101)
	err = b.conn.Invoke(b.ctx, "/tagq.v1.MessageService/SendMessageBatch", &raw, &tagqv1.SendMessageBatchResponse{},
		grpc.ForceCodecV2(rawCodec{}))
	check(err, tags.ReasonBatchTooLarge, "entries")
	raw = []byte{0x0a, 0x01, 'q'}
	for range 101 {
		raw = protowire.AppendTag(raw, 2, protowire.BytesType)
		raw = protowire.AppendString(raw, "m")
	}
	err = b.conn.Invoke(b.ctx, "/tagq.v1.MessageService/PeekMessage", &raw, &tagqv1.PeekMessageResponse{}, grpc.ForceCodecV2(rawCodec{}))
	check(err, tags.ReasonBatchTooLarge, "message_ids")
	attrs := map[string]*tagqv1.MessageAttribute{}
	for i := range 33 {
		attrs[fmt.Sprint("a", i)] = &tagqv1.MessageAttribute{Value: &tagqv1.MessageAttribute_StringValue{StringValue: "x"}}
	}
	many := &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("x")}, {Id: "b", Body: []byte("x"), Attributes: attrs}}}
	_, err = b.m.SendMessageBatch(b.ctx, many)
	check(err, tags.ReasonInvalidAttribute, "entries[1].attributes")

	// REST.
	code, body := b.do(t, "POST", "/v1/queues/q/messages:batchSend", emptyEntriesJSON("", 101))
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, tags.ReasonBatchTooLarge)
	require.Contains(t, body, `"field":"entries"`)
	// Connect, JSON and protobuf.
	req, err := http.NewRequest("POST", b.rest.URL+"/tagq.v1.MessageService/SendMessageBatch", strings.NewReader(emptyEntriesJSON("q", 101)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	code, body = doRaw(t, req)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "invalid_argument")
	cm := tagqv1connect.NewMessageServiceClient(http.DefaultClient, b.rest.URL)
	big := &tagqv1.SendMessageBatchRequest{Queue: "q"}
	for i := range 101 {
		big.Entries = append(big.Entries, &tagqv1.SendMessageBatchEntry{Id: fmt.Sprint(i), Body: []byte("x")})
	}
	_, err = cm.SendMessageBatch(b.ctx, connect.NewRequest(big))
	cc, cei := connectErrInfo(t, err)
	require.Equal(t, connect.CodeInvalidArgument, cc)
	require.Equal(t, tags.ReasonBatchTooLarge, cei.GetReason())
	_, err = tagqv1connect.NewMessageServiceClient(http.DefaultClient, b.rest.URL, connect.WithProtoJSON()).
		SendMessageBatch(b.ctx, connect.NewRequest(big))
	cc, cei = connectErrInfo(t, err)
	require.Equal(t, connect.CodeInvalidArgument, cc)
	require.Equal(t, tags.ReasonBatchTooLarge, cei.GetReason())

	// A Publish frame is answered with the refusal, its seq kept, and the
	// stream goes on.
	pub, err := b.m.Publish(b.ctx)
	require.NoError(t, err)
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 9, Queue: "q", Entries: big.Entries}))
	frame, err := pub.Recv()
	require.NoError(t, err)
	require.Equal(t, uint64(9), frame.GetSeq())
	require.Equal(t, tags.ReasonBatchTooLarge, frame.GetError().GetReason())
	require.Equal(t, "entries", frame.GetError().GetField())
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 10, Queue: "q", Entries: big.Entries[:100]}))
	frame, err = pub.Recv()
	require.NoError(t, err)
	require.Nil(t, frame.GetError())
	require.Len(t, frame.GetSuccessful(), 100, "100 entries pass")
	require.NoError(t, pub.CloseSend())

	// Consume: more acks than a stream may hold end it.
	cons, err := b.m.Consume(b.ctx)
	require.NoError(t, err)
	require.NoError(t, cons.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "q"}}))
	acks := make([]uint64, MaxMaxOutstandingMessages+1)
	require.NoError(t, cons.Send(&tagqv1.ConsumeRequest{Acks: acks}))
	for {
		if _, err = cons.Recv(); err != nil {
			break
		}
	}
	check(err, tags.ReasonBatchTooLarge, "acks")

	// At the limits: taken.
	_, err = b.m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: big.Entries[:100]})
	require.NoError(t, err)
	delete(attrs, "a0")
	_, err = b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"), Attributes: attrs})
	require.NoError(t, err)
	js, err := protojson.Marshal(&tagqv1.SendMessageBatchRequest{Entries: big.Entries[:100]})
	require.NoError(t, err)
	code, body = b.do(t, "POST", "/v1/queues/q/messages:batchSend", string(js))
	require.Equal(t, http.StatusOK, code, body)
}

// connectErrInfo is a Connect error's code and ErrorInfo.
func connectErrInfo(t *testing.T, err error) (connect.Code, *errdetails.ErrorInfo) {
	t.Helper()
	var ce *connect.Error
	require.ErrorAs(t, err, &ce)
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if ei, ok := v.(*errdetails.ErrorInfo); ok {
				return ce.Code(), ei
			}
		}
	}
	t.Fatalf("no ErrorInfo in %v", err)
	return 0, nil
}

func doRaw(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.String()
}

// The count costs a normal batch little: decoding 100 entries of 1 KiB
// with two attributes each, with the count (Unmarshal) and without it.
func BenchmarkRepeated_Decode(b *testing.B) {
	req := &tagqv1.SendMessageBatchRequest{Queue: "bench"}
	for i := range 100 {
		req.Entries = append(req.Entries, &tagqv1.SendMessageBatchEntry{Id: fmt.Sprint(i), Body: bytes.Repeat([]byte("x"), 1024),
			Attributes: map[string]*tagqv1.MessageAttribute{
				"a": {Value: &tagqv1.MessageAttribute_StringValue{StringValue: "one"}},
				"b": {Value: &tagqv1.MessageAttribute_StringValue{StringValue: "two"}}}})
	}
	raw, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	js, err := protojson.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("proto/unmarshal", func(b *testing.B) {
		for b.Loop() {
			_ = proto.Unmarshal(raw, &tagqv1.SendMessageBatchRequest{})
		}
	})
	b.Run("proto/count+unmarshal", func(b *testing.B) {
		for b.Loop() {
			m := &tagqv1.SendMessageBatchRequest{}
			if !boundedProto(raw, m) {
				_ = proto.Unmarshal(raw, m)
			}
		}
	})
	b.Run("proto/count", func(b *testing.B) {
		p := countPlans["tagq.v1.SendMessageBatchRequest"]
		for b.Loop() {
			if p.checkProto(raw) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("json/count", func(b *testing.B) {
		p := countPlans["tagq.v1.SendMessageBatchRequest"]
		for b.Loop() {
			if p.checkJSON(js) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("json/unmarshal", func(b *testing.B) {
		for b.Loop() {
			_ = protojson.Unmarshal(js, &tagqv1.SendMessageBatchRequest{})
		}
	})
	b.Run("json/count+unmarshal", func(b *testing.B) {
		for b.Loop() {
			m := &tagqv1.SendMessageBatchRequest{}
			if !boundedJSON(js, m) {
				_ = protojson.Unmarshal(js, m)
			}
		}
	})
}

// A client that sends the refusal mark's field itself gets a refusal it
// names (a limit of tagq's) or MALFORMED_REQUEST, always with ErrorInfo.
func TestRepeated_ForgedMark(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for mark, reason := range map[string]string{
		"tagq.v1.SendMessageBatchRequest.entries\x00entries": tags.ReasonBatchTooLarge,
		"something else": ReasonMalformedRequest,
	} {
		raw := protowire.AppendTag([]byte{0x0a, 0x01, 'q'}, refusedField, protowire.BytesType)
		raw = protowire.AppendString(raw, mark)
		err := b.conn.Invoke(b.ctx, "/tagq.v1.MessageService/SendMessageBatch", &raw, &tagqv1.SendMessageBatchResponse{},
			grpc.ForceCodecV2(rawCodec{}))
		code, ei := info(t, err)
		require.Equal(t, codes.InvalidArgument, code)
		require.Equal(t, reason, ei.GetReason())
	}
}

// A request over a limit whose bytes go bad after the field that is over
// it is refused as over the limit, without a panic.
func TestRepeated_OverTheLimitThenGarbage(t *testing.T) {
	t.Parallel()
	for _, tail := range [][]byte{{0xff}, {0x0a}, {0x0a, 0x10, 'x'}, {0x80}} {
		m := &tagqv1.SendMessageBatchRequest{}
		require.True(t, boundedProto(append(emptyEntries(101), tail...), m))
		_, ei := info(t, checkReadable(m))
		require.Equal(t, tags.ReasonBatchTooLarge, ei.GetReason())
	}
}
