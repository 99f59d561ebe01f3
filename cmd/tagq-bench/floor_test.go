package main

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// The floor must do W1's work for real (or its figure means nothing): every
// message sent is received once with its body, and deleting acknowledges it.
func TestFloorDoesW1Work(t *testing.T) {
	ctx := context.Background()
	m, rdb, key := floorFor(t, "w1")

	n := 0
	body := func() []byte { n++; return []byte("body-" + strconv.Itoa(n)) }
	require.NoError(t, sendVia(ctx, m, "w1", 10, body))
	require.NoError(t, sendVia(ctx, m, "w1", 1, body))

	r, err := m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "w1", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Len(t, r.GetMessages(), 10)
	for i, msg := range r.GetMessages() {
		require.Equal(t, "body-"+strconv.Itoa(i+1), string(msg.GetBody()))
		require.Equal(t, msg.GetMessageId(), msg.GetReceiptHandle())
	}
	require.NoError(t, deleteVia(ctx, m, "w1", r.GetMessages()))

	r, err = m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "w1", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Len(t, r.GetMessages(), 1, "the eleventh, sent alone")
	require.Equal(t, "body-11", string(r.GetMessages()[0].GetBody()))
	pending, err := rdb.XPending(ctx, key("w1"), "g0").Result()
	require.NoError(t, err)
	require.EqualValues(t, 1, pending.Count, "the ten deleted are acknowledged; the eleventh is not yet")
	require.NoError(t, deleteVia(ctx, m, "w1", r.GetMessages()))
	pending, err = rdb.XPending(ctx, key("w1"), "g0").Result()
	require.NoError(t, err)
	require.Zero(t, pending.Count)

	r, err = m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "w1", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Empty(t, r.GetMessages(), "nothing left, and no wait asked")
}

// floorFor serves a floor server on miniredis, with a stream and group
// made for each queue named.
func floorFor(t *testing.T, queues ...string) (tagqv1.MessageServiceClient, *redis.Client, func(string) string) {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	key := func(q string) string { return "floor:{" + q + "}" }
	for _, q := range queues {
		require.NoError(t, rdb.XGroupCreateMkStream(context.Background(), key(q), "g0", "$").Err())
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	tagqv1.RegisterMessageServiceServer(srv, &floorServer{rdb: rdb, key: key})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return tagqv1.NewMessageServiceClient(conn), rdb, key
}

// W4's nack on the floor: the message comes back with its attempt count,
// and at the third attempt goes to the queue's -dlq stream; each nack
// acknowledges what it moved.
func TestFloorDoesW4Work(t *testing.T) {
	ctx := context.Background()
	m, rdb, key := floorFor(t, "w4")
	require.NoError(t, sendVia(ctx, m, "w4", 2, func() []byte { return []byte("P") }))
	for attempt := 1; attempt <= 3; attempt++ {
		r, err := m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "w4", MaxMessages: i32(10)})
		require.NoError(t, err)
		require.Len(t, r.GetMessages(), 2, "attempt %d", attempt)
		entries := make([]*tagqv1.ChangeMessageVisibilityBatchEntry, 2)
		for i, msg := range r.GetMessages() {
			require.Equal(t, "P", string(msg.GetBody()))
			entries[i] = &tagqv1.ChangeMessageVisibilityBatchEntry{Id: strconv.Itoa(i), ReceiptHandle: msg.GetReceiptHandle()}
		}
		out, err := m.ChangeMessageVisibilityBatch(ctx, &tagqv1.ChangeMessageVisibilityBatchRequest{Queue: "w4", Entries: entries})
		require.NoError(t, err)
		require.Len(t, out.GetSuccessful(), 2)
		pending, err := rdb.XPending(ctx, key("w4"), "g0").Result()
		require.NoError(t, err)
		require.Zero(t, pending.Count)
	}
	r, err := m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "w4", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Empty(t, r.GetMessages(), "dead-lettered at the third attempt")
	dead, err := rdb.XRange(ctx, key("w4-dlq"), "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, dead, 2)
	require.Equal(t, "P", dead[0].Values["b"])
}

// W3's streams on the floor: a Publish frame is stored and answered by
// seq; Consume pushes it, an ack acknowledges it, and the stream ends
// cleanly when the client closes its side.
func TestFloorDoesStreamWork(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, rdb, key := floorFor(t, "w3s")
	p, err := openPublish(ctx, m, "w3s", 1)
	require.NoError(t, err)
	ok, err := p.send(batchEntries([]byte("hi"), 3)(), nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, p.close())
	require.EqualValues(t, 3, p.stored.Load())

	c, err := openConsume(ctx, m, "w3s", "", 10)
	require.NoError(t, err)
	got := 0
	for got < 3 {
		n, err := c.receive(func(msg *tagqv1.Message) { require.Equal(t, "hi", string(msg.GetBody())) })
		require.NoError(t, err)
		got += n
	}
	require.Eventually(t, func() bool {
		pending, err := rdb.XPending(ctx, key("w3s"), "g0").Result()
		return err == nil && pending.Count == 0
	}, 10*time.Second, time.Millisecond, "acknowledged")
	require.NoError(t, c.close())
}
