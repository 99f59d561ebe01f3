package main

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/tagq/tagq/gen/connect/tagq/v1/tagqv1connect"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// S3 end to end, with --auth: delete, change visibility and dead (single
// and batch) take the receipt handle alone over gRPC, REST and Connect;
// permissions are those on the handle's queue: a principal with HANDLE on
// queue a cannot use a handle of queue b, even naming a.
func TestE2E_S3_HandleAloneOverEveryProtocol(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := startAuth(t, be)
		admin := as(e2eAdminKey)
		for _, q := range []*tagqv1.Queue{{Name: "s3-dlq", DeadLetterQueue: true},
			{Name: "s3-a", RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "s3-dlq", MaxReceiveCount: 5}}, {Name: "s3-b"}} {
			_, err := d.q.CreateQueue(admin, &tagqv1.CreateQueueRequest{Queue: q})
			require.NoError(t, err)
		}
		key := d.principal(t, "s3-user", grant("s3-a", tagqv1.Permission_PERMISSION_HANDLE))
		user := as(key)
		h1, _ := http1Client()
		cm := tagqv1connect.NewMessageServiceClient(h1, "http://"+d.http)
		inFlight := func(queue string) int64 {
			t.Helper()
			tag, err := d.q.GetTag(admin, &tagqv1.GetTagRequest{Queue: queue, Name: "default"})
			require.NoError(t, err)
			return tag.GetTag().GetState().GetInFlight()
		}

		// gRPC, no queue: delete, nack (a batch), dead.
		_, err := d.m.DeleteMessage(user, &tagqv1.DeleteMessageRequest{ReceiptHandle: d.handleOf(t, "s3-a")})
		require.NoError(t, err)
		vis, err := d.m.ChangeMessageVisibilityBatch(user, &tagqv1.ChangeMessageVisibilityBatchRequest{
			Entries: []*tagqv1.ChangeMessageVisibilityBatchEntry{{Id: "x", ReceiptHandle: d.handleOf(t, "s3-a")}}})
		require.NoError(t, err)
		require.Equal(t, []string{"x"}, vis.GetSuccessful())
		_, err = d.m.DeadMessage(user, &tagqv1.DeadMessageRequest{ReceiptHandle: d.handleOf(t, "s3-a"), Reason: "POISON"})
		require.NoError(t, err)
		require.EqualValues(t, 0, inFlight("s3-a"))

		// REST: the routes without the queue, single and batch.
		code, body := d.restAs(key, "POST", "/v1/messages:delete", `{"receipt_handle": "`+d.handleOf(t, "s3-a")+`"}`)
		require.Equal(t, 200, code, body)
		code, body = d.restAs(key, "POST", "/v1/messages:batchDead",
			`{"entries": [{"id": "x", "receipt_handle": "`+d.handleOf(t, "s3-a")+`"}]}`)
		require.Equal(t, 200, code, body)
		require.Equal(t, []any{"x"}, body["successful"])
		code, body = d.restAs(key, "POST", "/v1/messages:changeVisibility",
			`{"receipt_handle": "`+d.handleOf(t, "s3-a")+`", "visibility_seconds": 0}`)
		require.Equal(t, 200, code, body)
		require.EqualValues(t, 0, inFlight("s3-a"))

		// Connect, no queue.
		_, err = cm.DeleteMessageBatch(context.Background(), withKey(key, &tagqv1.DeleteMessageBatchRequest{
			Entries: []*tagqv1.DeleteMessageBatchEntry{{Id: "x", ReceiptHandle: d.handleOf(t, "s3-a")}}}))
		require.NoError(t, err)
		_, err = cm.DeadMessage(context.Background(), withKey(key, &tagqv1.DeadMessageRequest{ReceiptHandle: d.handleOf(t, "s3-a")}))
		require.NoError(t, err)
		require.EqualValues(t, 0, inFlight("s3-a"))

		// A handle of s3-b, named s3-a or not: PERMISSION_DENIED on s3-b,
		// over every protocol; the message stays in flight.
		hb := d.handleOf(t, "s3-b")
		for _, queue := range []string{"", "s3-a"} {
			_, err = d.m.DeleteMessage(user, &tagqv1.DeleteMessageRequest{Queue: queue, ReceiptHandle: hb})
			c, ei := errInfo(t, err)
			require.Equal(t, codes.PermissionDenied, c)
			require.Equal(t, "s3-b", ei.GetMetadata()["queue"])
			require.Equal(t, "HANDLE", ei.GetMetadata()["permission"])

			_, err = cm.DeleteMessage(context.Background(), withKey(key, &tagqv1.DeleteMessageRequest{Queue: queue, ReceiptHandle: hb}))
			cc, cei := connectErr(t, err)
			require.Equal(t, connect.CodePermissionDenied, cc)
			require.Equal(t, "s3-b", cei.GetMetadata()["queue"])
		}
		code, body = d.restAs(key, "POST", "/v1/queues/s3-a/messages:batchDelete", `{"entries": [{"id": "x", "receipt_handle": "`+hb+`"}]}`)
		require.Equal(t, 403, code, body)
		r, md := restInfo(body)
		require.Equal(t, "PERMISSION_DENIED", r)
		require.Equal(t, "s3-b", md["queue"])
		code, body = d.restAs(key, "POST", "/v1/messages:dead", `{"receipt_handle": "`+hb+`"}`)
		require.Equal(t, 403, code, body)
		require.EqualValues(t, 1, inFlight("s3-b"))

		// The admin may use it, but not naming another queue; nor mixed
		// with a handle of another queue in one batch.
		_, err = d.m.DeleteMessage(admin, &tagqv1.DeleteMessageRequest{Queue: "s3-a", ReceiptHandle: hb})
		c, ei := errInfo(t, err)
		require.Equal(t, codes.InvalidArgument, c)
		require.Equal(t, "INVALID_RECEIPT_HANDLE", ei.GetReason())
		require.Equal(t, "receipt_handle", ei.GetMetadata()["field"])
		code, body = d.restAs(e2eAdminKey, "POST", "/v1/messages:batchDelete",
			`{"entries": [{"id": "x", "receipt_handle": "`+d.handleOf(t, "s3-a")+`"}, {"id": "y", "receipt_handle": "`+hb+`"}]}`)
		require.Equal(t, 400, code, body)
		r, md = restInfo(body)
		require.Equal(t, "MIXED_QUEUE_BATCH", r)
		require.Equal(t, "entries[1].receipt_handle", md["field"])
		require.EqualValues(t, 1, inFlight("s3-a"))
		require.EqualValues(t, 1, inFlight("s3-b"))

		// Forged handles stay INVALID_RECEIPT_HANDLE, over every protocol.
		_, err = d.m.ChangeMessageVisibility(user, &tagqv1.ChangeMessageVisibilityRequest{ReceiptHandle: "forged"})
		_, ei = errInfo(t, err)
		require.Equal(t, "INVALID_RECEIPT_HANDLE", ei.GetReason())
		code, body = d.restAs(key, "POST", "/v1/messages:delete", `{"receipt_handle": "forged"}`)
		require.Equal(t, 400, code, body)
		r, _ = restInfo(body)
		require.Equal(t, "INVALID_RECEIPT_HANDLE", r)
		_, err = cm.DeadMessage(context.Background(), withKey(key, &tagqv1.DeadMessageRequest{ReceiptHandle: "forged"}))
		cc, cei := connectErr(t, err)
		require.Equal(t, connect.CodeInvalidArgument, cc)
		require.Equal(t, "INVALID_RECEIPT_HANDLE", cei.GetReason())
	})
}
