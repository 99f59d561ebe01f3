package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// End-to-end tests of bounded memory: queues without a default tag, caps
// with their overflow policies, and the Redis memory watch.

func TestE2E_NoDefaultTagAndCapsOverGRPCAndREST(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()

		// REST: no_default_tag is a query parameter; the queue's caps are
		// attributes in the body.
		out := d.restOK("POST", "/v1/queues?no_default_tag=true",
			`{"name": "orders", "max_retained_messages": "2", "overflow_policy": "OVERFLOW_POLICY_REJECT_NEW"}`)
		require.Equal(t, "", jget(out, "queue", "default_tag_name"))
		require.Nil(t, jget(out, "queue", "state", "default_tag"))
		require.Equal(t, "2", jget(out, "queue", "max_retained_messages"))
		require.Equal(t, "OVERFLOW_POLICY_REJECT_NEW", jget(out, "queue", "overflow_policy"))
		d.restOK("POST", "/v1/queues/orders/tags", `{"name": "billing"}`)
		code, body := d.rest("POST", "/v1/queues/orders/messages:receive", `{}`)
		require.Equal(t, 404, code)
		r, field := reason(body)
		require.Equal(t, "TAG_NOT_FOUND", r)
		require.Equal(t, "tag", field)

		sent := d.restOK("POST", "/v1/queues/orders/messages:batchSend", fmt.Sprintf(`{"entries": [
			{"id": "1", "body": %q}, {"id": "2", "body": %q}, {"id": "3", "body": %q}]}`, b64("a"), b64("b"), b64("c")))
		require.Len(t, sent["successful"], 2)
		require.Equal(t, "3", jget(sent, "failed", 0, "id"))
		require.Equal(t, "QUEUE_FULL", jget(sent, "failed", 0, "reason"))
		code, body = d.rest("POST", "/v1/queues/orders/messages", fmt.Sprintf(`{"body": %q}`, b64("d")))
		require.Equal(t, 429, code, "RESOURCE_EXHAUSTED: %v", body)
		r, _ = reason(body)
		require.Equal(t, "QUEUE_FULL", r)

		// gRPC: the same refusal, with ErrorInfo naming the queue.
		_, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "orders", Body: []byte("e")})
		c, r, _ := grpcReason(t, err)
		require.Equal(t, codes.ResourceExhausted, c)
		require.Equal(t, "QUEUE_FULL", r)

		// UpdateQueue switches to dropping the oldest; GetQueue shows it.
		one := int64(1)
		up, err := d.q.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{
			Queue:      &tagqv1.Queue{Name: "orders", MaxRetainedMessages: &one, OverflowPolicy: tagqv1.OverflowPolicy_OVERFLOW_POLICY_DROP_OLDEST},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"max_retained_messages", "overflow_policy"}}})
		require.NoError(t, err)
		require.Equal(t, int64(1), up.GetQueue().GetMaxRetainedMessages())
		_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "orders", Body: []byte("f")})
		require.NoError(t, err)
		got, err := d.q.GetQueue(ctx, &tagqv1.GetQueueRequest{Name: "orders"})
		require.NoError(t, err)
		st := got.GetQueue().GetState()
		require.Equal(t, int64(1), st.GetRetainedMessages())
		require.Equal(t, int64(1), st.GetRetainedBytes())
		require.Equal(t, int64(2), st.GetDroppedTotal())
		tag, err := d.q.GetTag(ctx, &tagqv1.GetTagRequest{Queue: "orders", Name: "billing"})
		require.NoError(t, err)
		require.Equal(t, int64(2), tag.GetTag().GetState().GetExpiredTotal(), "billing never read a and b")
		require.Equal(t, int64(1), tag.GetTag().GetState().GetAvailable())

		// Bad caps are refused naming the field.
		_, err = d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "bad", MaxRetainedBytes: &one}})
		c, r, field = grpcReason(t, err)
		require.Equal(t, codes.InvalidArgument, c)
		require.Equal(t, "INVALID_ARGUMENT_RANGE", r)
		require.Equal(t, "queue.max_retained_bytes", field)
		_, err = d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{NoDefaultTag: true,
			Queue: &tagqv1.Queue{Name: "bad", DefaultTagName: "x"}})
		_, _, field = grpcReason(t, err)
		require.Equal(t, "default_tag_name", field)
	})
}

// tagqd over a private redis-server whose maxmemory the test sets: sends
// are refused with STORAGE_FULL (unary, REST and Publish frames) while
// used_memory is over the threshold; receives and deletes go on; sends
// resume when it is not.
func TestE2E_MemoryWatchRefusesSendsNearMaxmemory(t *testing.T) {
	port := freePort(t)
	startRedis(t, "--port", strconv.Itoa(port), "--maxmemory", "1gb")
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	d := start(t, backend{name: "private"}, "--redis-url", "redis://127.0.0.1:"+strconv.Itoa(port)+"/0",
		"--redis-memory-interval", "100ms")
	d.restOK("POST", "/v1/queues", `{"name": "q"}`)
	_, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("before")})
	require.NoError(t, err, "a fresh Redis is far below 90% of 1 GB")

	// A maxmemory just above what Redis uses puts it over 90% of it.
	used := func() int64 {
		info, err := rdb.Info(ctx, "memory").Result()
		require.NoError(t, err)
		var n int64
		for _, line := range strings.Split(info, "\n") {
			if _, err := fmt.Sscanf(line, "used_memory:%d", &n); err == nil {
				return n
			}
		}
		t.Fatal("no used_memory")
		return 0
	}
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used()+used()/20, 10)).Err())
	require.Eventually(t, func() bool {
		_, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")})
		return err != nil
	}, 10*time.Second, 50*time.Millisecond, "the watch reads INFO memory every 100ms")
	_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")})
	c, r, _ := grpcReason(t, err)
	require.Equal(t, codes.ResourceExhausted, c)
	require.Equal(t, "STORAGE_FULL", r)
	code, body := d.rest("POST", "/v1/queues/q/messages", fmt.Sprintf(`{"body": %q}`, b64("x")))
	require.Equal(t, 429, code)
	r, _ = reason(body)
	require.Equal(t, "STORAGE_FULL", r)
	pub, err := d.m.Publish(ctx)
	require.NoError(t, err)
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "q",
		Entries: []*tagqv1.SendMessageBatchEntry{{Id: "1", Body: []byte("x")}}}))
	require.NoError(t, pub.CloseSend())
	frame, err := pub.Recv()
	require.NoError(t, err)
	require.Equal(t, "STORAGE_FULL", frame.GetError().GetReason())
	require.Equal(t, int32(codes.ResourceExhausted), frame.GetError().GetCode())
	_, err = pub.Recv()
	require.Equal(t, io.EOF, err)

	// Receives and deletes free memory: they work.
	rec, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", WaitSeconds: i32(0)})
	require.NoError(t, err)
	require.Len(t, rec.GetMessages(), 1)
	require.Equal(t, "before", string(rec.GetMessages()[0].GetBody()), "nothing refused was stored")
	_, err = d.m.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: "q", ReceiptHandle: rec.GetMessages()[0].GetReceiptHandle()})
	require.NoError(t, err)

	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory", "1gb").Err())
	require.Eventually(t, func() bool {
		_, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("after")})
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
}
