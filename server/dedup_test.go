package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

func strp(s string) *string { return &s }

// A bad deduplication_id is INVALID_ARGUMENT naming the field: the request's
// for SendMessage, the entry's for a batch or a Publish frame (the other
// entries stored); nothing of the bad entry is stored.
func TestDedupIDValidationNamesTheField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)

	for _, bad := range []string{"", strings.Repeat("x", 129), "has space", "ünicode"} {
		_, err = b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"), DeduplicationId: strp(bad)})
		code, ei := info(t, err)
		require.Equal(t, codes.InvalidArgument, code, "%q", bad)
		require.Equal(t, "INVALID_ARGUMENT_RANGE", ei.GetReason())
		require.Equal(t, "deduplication_id", ei.GetMetadata()["field"])
	}

	entries := []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("a"), DeduplicationId: strp("ok-1")},
		{Id: "b", Body: []byte("b")},
		{Id: "c", Body: []byte("c"), DeduplicationId: strp("no spaces please")},
		{Id: "d", Body: []byte("d"), DeduplicationId: strp(strings.Repeat("~", 128))},
	}
	out, err := b.m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: entries})
	require.NoError(t, err)
	require.Len(t, out.GetFailed(), 1)
	require.Equal(t, "c", out.GetFailed()[0].GetId())
	require.Equal(t, "INVALID_ARGUMENT_RANGE", out.GetFailed()[0].GetReason())
	require.Equal(t, "entries[2].deduplication_id", out.GetFailed()[0].GetField())
	require.Len(t, out.GetSuccessful(), 3)

	pub, err := b.m.Publish(b.ctx)
	require.NoError(t, err)
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "x", Body: []byte("x"), DeduplicationId: strp("")}, {Id: "y", Body: []byte("y")}}}))
	resp, err := pub.Recv()
	require.NoError(t, err)
	require.NoError(t, pub.CloseSend())
	require.Len(t, resp.GetFailed(), 1)
	require.Equal(t, "entries[0].deduplication_id", resp.GetFailed()[0].GetField())
	require.Len(t, resp.GetSuccessful(), 1)

	q, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
	require.Equal(t, int64(4), q.GetQueue().GetState().GetRetainedMessages(), "a, b, d and y")
}

// The same deduplication_id over SendMessage, SendMessageBatch and Publish
// stores one message; every answer carries its id and send time, and
// GetQueue counts the duplicates.
func TestDedupAcrossSendCalls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	first, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"), DeduplicationId: strp("k")})
	require.NoError(t, err)
	batch, err := b.m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "1", Body: []byte("x"), DeduplicationId: strp("k")}, {Id: "2", Body: []byte("y"), DeduplicationId: strp("k")}}})
	require.NoError(t, err)
	require.Empty(t, batch.GetFailed())
	for _, r := range batch.GetSuccessful() {
		require.Equal(t, first.GetMessageId(), r.GetMessageId())
		require.True(t, first.GetSendTime().AsTime().Equal(r.GetSendTime().AsTime()))
	}
	pub, err := b.m.Publish(b.ctx)
	require.NoError(t, err)
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 7, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "p", Body: []byte("z"), DeduplicationId: strp("k")}}}))
	resp, err := pub.Recv()
	require.NoError(t, err)
	require.NoError(t, pub.CloseSend())
	require.Equal(t, first.GetMessageId(), resp.GetSuccessful()[0].GetMessageId())

	q, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
	require.Equal(t, int64(1), q.GetQueue().GetState().GetRetainedMessages())
	require.Equal(t, int64(3), q.GetQueue().GetState().GetDeduplicatedTotal())
}

// content_based_deduplication is set on create, shown by GetQueue,
// changed by UpdateQueue with its update_mask path, and applies at once.
func TestContentBasedDeduplicationAttribute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	created, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q", ContentBasedDeduplication: true}})
	require.NoError(t, err)
	require.True(t, created.GetQueue().GetContentBasedDeduplication())
	send := func(body string) string {
		r, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte(body)})
		require.NoError(t, err)
		return r.GetMessageId()
	}
	a := send("same")
	require.Equal(t, a, send("same"))
	require.NotEqual(t, a, send("other"))

	up, err := b.q.UpdateQueue(b.ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "q"},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"content_based_deduplication"}}})
	require.NoError(t, err)
	require.False(t, up.GetQueue().GetContentBasedDeduplication())
	require.NotEqual(t, a, send("same"), "off: the same body is stored again")

	got, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
	require.False(t, got.GetQueue().GetContentBasedDeduplication())
	require.Equal(t, int64(1), got.GetQueue().GetState().GetDeduplicatedTotal())

	// Over REST, as JSON.
	code, body := b.do(t, "PATCH", "/v1/queues/q?update_mask=content_based_deduplication",
		`{"content_based_deduplication": true}`)
	require.Equal(t, 200, code, body)
	var resp struct {
		Queue struct {
			ContentBasedDeduplication bool `json:"content_based_deduplication"`
		} `json:"queue"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &resp))
	require.True(t, resp.Queue.ContentBasedDeduplication, body)
}

// tagq_queue_deduplicated_total follows the queue's count.
func TestDedupMetric(t *testing.T) {
	t.Parallel()
	b := setup(t) // the first scrape reads the figures
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	for range 3 {
		_, err = b.m.SendMessage(context.Background(), &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"), DeduplicationId: strp("k")})
		require.NoError(t, err)
	}
	code, body := b.do(t, "GET", "/metrics", "")
	require.Equal(t, 200, code)
	require.Contains(t, body, `tagq_queue_deduplicated_total{queue="q"} 2`)
}
