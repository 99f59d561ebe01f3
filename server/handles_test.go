package server

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// handlesOf sends n messages to queue and receives them (for the default
// tag), returning their receipt handles.
func handlesOf(t *testing.T, ctx context.Context, m tagqv1.MessageServiceClient, queue string, n int) []string {
	t.Helper()
	for i := range n {
		_, err := m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: queue, Body: []byte(fmt.Sprint(i))})
		require.NoError(t, err)
	}
	got, err := m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: queue, MaxMessages: i32(int32(n))})
	require.NoError(t, err)
	require.Len(t, got.GetMessages(), n)
	out := make([]string, n)
	for i, msg := range got.GetMessages() {
		out[i] = msg.GetReceiptHandle()
	}
	return out
}

// inFlight is the default tag's in-flight count.
func (b *testBundle) inFlight(t *testing.T, queue string) int64 {
	t.Helper()
	tag, err := b.q.GetTag(b.ctx, &tagqv1.GetTagRequest{Queue: queue, Name: "default"})
	require.NoError(t, err)
	return tag.GetTag().GetState().GetInFlight()
}

// S3: delete, change visibility and dead take the receipt handle alone;
// a queue, when given, must be the handle's.
func TestS3_TheHandleAloneIsEnough(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, q := range []*tagqv1.Queue{{Name: "dlq", DeadLetterQueue: true},
		{Name: "a", RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 5}}, {Name: "b"}} {
		_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: q})
		require.NoError(t, err)
	}
	a := handlesOf(t, b.ctx, b.m, "a", 8)

	// Unary, no queue.
	_, err := b.m.DeleteMessage(b.ctx, &tagqv1.DeleteMessageRequest{ReceiptHandle: a[0]})
	require.NoError(t, err)
	_, err = b.m.ChangeMessageVisibility(b.ctx, &tagqv1.ChangeMessageVisibilityRequest{ReceiptHandle: a[1], VisibilitySeconds: 600})
	require.NoError(t, err)
	_, err = b.m.DeadMessage(b.ctx, &tagqv1.DeadMessageRequest{ReceiptHandle: a[2], Reason: "POISON"})
	require.NoError(t, err)
	require.EqualValues(t, 6, b.inFlight(t, "a")) // a[1] too: hidden for 600 s
	dlq, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "dlq"})
	require.NoError(t, err)
	require.EqualValues(t, 1, dlq.GetQueue().GetState().GetRetainedMessages())

	// The queue given, and the handle's: as before.
	_, err = b.m.DeleteMessage(b.ctx, &tagqv1.DeleteMessageRequest{Queue: "a", ReceiptHandle: a[3]})
	require.NoError(t, err)
	require.EqualValues(t, 5, b.inFlight(t, "a"))

	// Another queue given: the handle is refused, naming both queues.
	_, err = b.m.DeleteMessage(b.ctx, &tagqv1.DeleteMessageRequest{Queue: "b", ReceiptHandle: a[4]})
	code, ei := info(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "INVALID_RECEIPT_HANDLE", ei.GetReason())
	require.Equal(t, "receipt_handle", ei.GetMetadata()["field"])
	require.Contains(t, err.Error(), `belongs to queue "a", not "b"`)
	require.EqualValues(t, 5, b.inFlight(t, "a"))

	// Batches, no queue.
	del, err := b.m.DeleteMessageBatch(b.ctx, &tagqv1.DeleteMessageBatchRequest{Entries: []*tagqv1.DeleteMessageBatchEntry{
		{Id: "x", ReceiptHandle: a[4]}, {Id: "y", ReceiptHandle: "garbled"}}})
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, del.GetSuccessful())
	require.Len(t, del.GetFailed(), 1)
	require.Equal(t, "INVALID_RECEIPT_HANDLE", del.GetFailed()[0].GetReason())
	require.Equal(t, "entries[1].receipt_handle", del.GetFailed()[0].GetField())
	vis, err := b.m.ChangeMessageVisibilityBatch(b.ctx, &tagqv1.ChangeMessageVisibilityBatchRequest{
		Entries: []*tagqv1.ChangeMessageVisibilityBatchEntry{{Id: "x", ReceiptHandle: a[5], VisibilitySeconds: 0}}})
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, vis.GetSuccessful())
	dead, err := b.m.DeadMessageBatch(b.ctx, &tagqv1.DeadMessageBatchRequest{
		Entries: []*tagqv1.DeadMessageBatchEntry{{Id: "x", ReceiptHandle: a[6]}}})
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, dead.GetSuccessful())
	require.EqualValues(t, 2, b.inFlight(t, "a")) // a[1] and a[7]; a[5] is visible again

	// A batch with no queue acts on one: handles of two are refused whole,
	// nothing done.
	bh := handlesOf(t, b.ctx, b.m, "b", 1)
	_, err = b.m.DeleteMessageBatch(b.ctx, &tagqv1.DeleteMessageBatchRequest{Entries: []*tagqv1.DeleteMessageBatchEntry{
		{Id: "x", ReceiptHandle: "garbled"}, {Id: "y", ReceiptHandle: a[7]}, {Id: "z", ReceiptHandle: bh[0]}}})
	code, ei = info(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, ReasonMixedQueueBatch, ei.GetReason())
	require.Equal(t, map[string]string{"field": "entries[2].receipt_handle", "queue": "a", "other_queue": "b"}, ei.GetMetadata())
	require.EqualValues(t, 2, b.inFlight(t, "a"))
	require.EqualValues(t, 1, b.inFlight(t, "b"))

	// Handles that name no queue: refused as the engine refuses them.
	for _, h := range []string{"", "garbled", a[7] + "x"} {
		_, err = b.m.DeleteMessage(b.ctx, &tagqv1.DeleteMessageRequest{ReceiptHandle: h})
		code, ei = info(t, err)
		require.Equal(t, codes.InvalidArgument, code, h)
		require.Equal(t, "INVALID_RECEIPT_HANDLE", ei.GetReason(), h)
		require.Equal(t, "receipt_handle", ei.GetMetadata()["field"], h)
	}
	dead, err = b.m.DeadMessageBatch(b.ctx, &tagqv1.DeadMessageBatchRequest{
		Entries: []*tagqv1.DeadMessageBatchEntry{{Id: "x", ReceiptHandle: "garbled"}, {Id: "y"}}})
	require.NoError(t, err)
	require.Empty(t, dead.GetSuccessful())
	require.Len(t, dead.GetFailed(), 2)
	for i, f := range dead.GetFailed() {
		require.Equal(t, "INVALID_RECEIPT_HANDLE", f.GetReason())
		require.Equal(t, fmt.Sprintf("entries[%d].receipt_handle", i), f.GetField())
	}
	// The batch's own checks come first.
	_, err = b.m.DeleteMessageBatch(b.ctx, &tagqv1.DeleteMessageBatchRequest{})
	_, ei = info(t, err)
	require.Equal(t, "BATCH_TOO_LARGE", ei.GetReason())

	// REST: the routes without a queue.
	code2, body := b.do(t, "POST", "/v1/messages:delete", `{"receipt_handle":"`+a[7]+`"}`)
	require.Equal(t, 200, code2, body)
	require.EqualValues(t, 1, b.inFlight(t, "a"))
	code2, body = b.do(t, "POST", "/v1/messages:batchChangeVisibility",
		`{"entries":[{"id":"x","receipt_handle":"`+bh[0]+`","visibility_seconds":0}]}`)
	require.Equal(t, 200, code2, body)
	var out struct{ Successful []string }
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	require.Equal(t, []string{"x"}, out.Successful)
	require.EqualValues(t, 0, b.inFlight(t, "b"))
}

// S3, S18: permissions are checked against the queue (and tag) a handle
// names, whatever queue the request names.
func TestS3_HandlePermissionIsTheHandlesQueue(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	for _, q := range []string{"a", "b"} {
		_, err := b.q.CreateQueue(as(b.admin), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: q}})
		require.NoError(t, err)
		_, err = b.q.CreateTag(as(b.admin), &tagqv1.CreateTagRequest{Queue: q, Tag: &tagqv1.Tag{Name: "t"}})
		require.NoError(t, err)
	}
	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: "a", Permission: access.Handle}))
	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: "b", Permission: access.Handle, Tags: []string{"t"}}))
	admin := as(b.admin)
	a := handlesOf(t, admin, b.m, "a", 2)
	bDefault := handlesOf(t, admin, b.m, "b", 1)
	got, err := b.m.ReceiveMessage(admin, &tagqv1.ReceiveMessageRequest{Queue: "b", Tag: "t", MaxMessages: i32(1)})
	require.NoError(t, err)
	bT := got.GetMessages()[0].GetReceiptHandle()

	deniedOn := func(err error, queue, tag string) {
		t.Helper()
		code, ei := info(t, err)
		require.Equal(t, codes.PermissionDenied, code, err)
		require.Equal(t, queue, ei.GetMetadata()["queue"], err)
		require.Equal(t, tag, ei.GetMetadata()["tag"], err)
		require.Equal(t, "HANDLE", ei.GetMetadata()["permission"], err)
	}
	user := as(b.user)
	// HANDLE on a does not cover a handle of b, named a or not.
	_, err = b.m.DeleteMessage(user, &tagqv1.DeleteMessageRequest{Queue: "a", ReceiptHandle: bDefault[0]})
	deniedOn(err, "b", "default")
	_, err = b.m.DeleteMessage(user, &tagqv1.DeleteMessageRequest{ReceiptHandle: bDefault[0]})
	deniedOn(err, "b", "default")
	_, err = b.m.ChangeMessageVisibilityBatch(user, &tagqv1.ChangeMessageVisibilityBatchRequest{Queue: "a",
		Entries: []*tagqv1.ChangeMessageVisibilityBatchEntry{{Id: "x", ReceiptHandle: a[0]}, {Id: "y", ReceiptHandle: bDefault[0]}}})
	deniedOn(err, "b", "default")
	// A queue named needs HANDLE too.
	_, err = b.m.DeleteMessage(user, &tagqv1.DeleteMessageRequest{Queue: "b", ReceiptHandle: bT})
	require.NoError(t, err)
	_, err = b.m.DeadMessage(user, &tagqv1.DeadMessageRequest{Queue: "c", ReceiptHandle: a[0]})
	deniedOn(err, "c", "")
	require.EqualValues(t, 2, b.inFlightAs(t, "a", "default"))
	require.EqualValues(t, 1, b.inFlightAs(t, "b", "default"))

	// Allowed: the handle's queue and tag, with or without the queue.
	_, err = b.m.DeleteMessage(user, &tagqv1.DeleteMessageRequest{ReceiptHandle: a[0]})
	require.NoError(t, err)
	_, err = b.m.DeleteMessageBatch(user, &tagqv1.DeleteMessageBatchRequest{Queue: "a",
		Entries: []*tagqv1.DeleteMessageBatchEntry{{Id: "x", ReceiptHandle: a[1]}}})
	require.NoError(t, err)
	require.EqualValues(t, 0, b.inFlightAs(t, "a", "default"))
	require.EqualValues(t, 0, b.inFlightAs(t, "b", "t"))
	// Forged handles stay INVALID_RECEIPT_HANDLE: they name no queue.
	_, err = b.m.DeleteMessage(user, &tagqv1.DeleteMessageRequest{ReceiptHandle: "forged"})
	_, ei := info(t, err)
	require.Equal(t, "INVALID_RECEIPT_HANDLE", ei.GetReason())
}

// inFlightAs is a tag's in-flight count, read as the admin.
func (b *authBundle) inFlightAs(t *testing.T, queue, tag string) int64 {
	t.Helper()
	got, err := b.q.GetTag(as(b.admin), &tagqv1.GetTagRequest{Queue: queue, Name: tag})
	require.NoError(t, err)
	return got.GetTag().GetState().GetInFlight()
}
