package main

import (
	"context"
	"net"
	"strconv"
	"testing"

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
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	key := func(q string) string { return "floor:{" + q + "}" }
	require.NoError(t, rdb.XGroupCreateMkStream(ctx, key("w1"), "g0", "$").Err())

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	tagqv1.RegisterMessageServiceServer(srv, &floorServer{rdb: rdb, key: key})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	m := tagqv1.NewMessageServiceClient(conn)

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
