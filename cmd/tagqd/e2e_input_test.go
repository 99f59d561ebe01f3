package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// badInput is one request the server must refuse with INVALID_ARGUMENT,
// the same over gRPC and REST (gRPC only when method is "": REST cannot
// express it).
type badInput struct {
	name         string
	grpc         func(ctx context.Context, d *daemon) error
	method, path string
	body         string
	reason       string
	field        string
	// restReason and restField, when set, are what REST answers instead
	// (an empty REST body decodes to an empty message, not a missing one).
	restReason, restField string
}

func badInputs() []badInput {
	entries := func(ids ...string) []*tagqv1.SendMessageBatchEntry {
		out := make([]*tagqv1.SendMessageBatchEntry, len(ids))
		for i, id := range ids {
			out[i] = &tagqv1.SendMessageBatchEntry{Id: id, Body: []byte("x")}
		}
		return out
	}
	jsonEntries := func(ids ...string) string {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = fmt.Sprintf(`{"id": %q, "body": "eA=="}`, id)
		}
		return `{"entries": [` + strings.Join(parts, ", ") + `]}`
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	return []badInput{
		{
			name: "queue name with a space",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "has space"}})
				return err
			},
			method: "POST", path: "/v1/queues", body: `{"name": "has space"}`,
			reason: "INVALID_NAME", field: "queue.name",
		},
		{
			name: "queue attribute out of range",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "new", DelaySeconds: i32(901)}})
				return err
			},
			method: "POST", path: "/v1/queues", body: `{"name": "new", "delay_seconds": 901}`,
			reason: "INVALID_ARGUMENT_RANGE", field: "queue.delay_seconds",
		},
		{
			name: "body over max_message_bytes",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: make([]byte, 1025)})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages", body: fmt.Sprintf(`{"body": %q}`, b64(strings.Repeat("x", 1025))),
			reason: "MESSAGE_TOO_LARGE", field: "body",
		},
		{
			name: "attribute with no value",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"),
					Attributes: map[string]*tagqv1.MessageAttribute{"empty": {}}})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages", body: `{"body": "eA==", "attributes": {"empty": {}}}`,
			reason: "INVALID_ATTRIBUTE", field: "attributes[empty]",
		},
		{
			name: "max_messages 0",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(0)})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages:receive", body: `{"max_messages": 0}`,
			reason: "INVALID_ARGUMENT_RANGE", field: "max_messages",
		},
		{
			name: "wait_seconds 21",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", WaitSeconds: i32(21)})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages:receive", body: `{"wait_seconds": 21}`,
			reason: "INVALID_ARGUMENT_RANGE", field: "wait_seconds",
		},
		{
			name: "visibility_seconds 43201",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", VisibilitySeconds: i32(43201)})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages:receive", body: `{"visibility_seconds": 43201}`,
			reason: "INVALID_ARGUMENT_RANGE", field: "visibility_seconds",
		},
		{
			name: "page_size 1001",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.q.ListQueues(ctx, &tagqv1.ListQueuesRequest{PageSize: 1001})
				return err
			},
			method: "GET", path: "/v1/queues?page_size=1001",
			reason: "INVALID_ARGUMENT_RANGE", field: "page_size",
		},
		{
			name: "page_token tagq did not issue",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.q.ListQueues(ctx, &tagqv1.ListQueuesRequest{PageToken: "q"})
				return err
			},
			method: "GET", path: "/v1/queues?page_token=q",
			reason: "INVALID_ARGUMENT_RANGE", field: "page_token",
		},
		{
			name: "tag page_token tagq did not issue",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.q.ListTags(ctx, &tagqv1.ListTagsRequest{Queue: "q", PageToken: "default"})
				return err
			},
			method: "GET", path: "/v1/queues/q/tags?page_token=default",
			reason: "INVALID_ARGUMENT_RANGE", field: "page_token",
		},
		{
			name: "garbled receipt handle",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: "q", ReceiptHandle: "garbled!"})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages:delete", body: `{"receipt_handle": "garbled!"}`,
			reason: "INVALID_RECEIPT_HANDLE", field: "receipt_handle",
		},
		{
			name: "empty receipt handle",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.ChangeMessageVisibility(ctx, &tagqv1.ChangeMessageVisibilityRequest{Queue: "q"})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages:changeVisibility", body: `{"receipt_handle": ""}`,
			reason: "INVALID_RECEIPT_HANDLE", field: "receipt_handle",
		},
		{
			name: "duplicate batch entry ids",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: entries("a", "b", "a")})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages:batchSend", body: jsonEntries("a", "b", "a"),
			reason: "DUPLICATE_BATCH_ENTRY_ID", field: "entries[2].id",
		},
		{
			name: "batch entry id with a space",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: entries("ok", "not ok")})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages:batchSend", body: jsonEntries("ok", "not ok"),
			reason: "INVALID_NAME", field: "entries[1].id",
		},
		{
			name: "empty batch",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "q"})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages:batchSend", body: `{"entries": []}`,
			reason: "BATCH_TOO_LARGE", field: "entries",
		},
		{
			name: "101 batch entries",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: entries(many...)})
				return err
			},
			method: "POST", path: "/v1/queues/q/messages:batchSend", body: jsonEntries(many...),
			reason: "BATCH_TOO_LARGE", field: "entries",
		},
		{
			name: "update mask naming no queue field",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.q.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "q", DelaySeconds: i32(5)},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"bogus"}}})
				return err
			},
			method: "PATCH", path: "/v1/queues/q?update_mask=bogus", body: `{"delay_seconds": 5}`,
			reason: "INVALID_ARGUMENT_RANGE", field: "update_mask",
		},
		{
			name: "create queue without a queue",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{})
				return err
			},
			method: "POST", path: "/v1/queues",
			reason: "INVALID_ARGUMENT_RANGE", field: "queue",
			restReason: "INVALID_NAME", restField: "queue.name",
		},
		{
			name: "update queue with a mask and no queue",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.q.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delay_seconds"}}})
				return err
			},
			reason: "INVALID_ARGUMENT_RANGE", field: "queue",
		},
		{
			name: "create tag without a tag",
			grpc: func(ctx context.Context, d *daemon) error {
				_, err := d.q.CreateTag(ctx, &tagqv1.CreateTagRequest{Queue: "q"})
				return err
			},
			method: "POST", path: "/v1/queues/q/tags",
			reason: "INVALID_ARGUMENT_RANGE", field: "tag",
			restReason: "INVALID_NAME", restField: "tag.name",
		},
	}
}

// TestE2E_S14_BadInputGetsInvalidArgumentNamingTheField_GRPCAndREST sends
// each bad request over gRPC and over REST, and checks the status, the
// ErrorInfo reason and field, and that nothing was written.
func TestE2E_S14_BadInputGetsInvalidArgumentNamingTheField_GRPCAndREST(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()
		d.restOK("POST", "/v1/queues", `{"name": "q", "max_message_bytes": 1024}`)
		before := d.restOK("GET", "/v1/queues/q", "")

		for _, tc := range badInputs() {
			err := tc.grpc(ctx, d)
			code, r, f := grpcReason(t, err)
			require.Equal(t, codes.InvalidArgument, code, "gRPC %s: %v", tc.name, err)
			require.Equal(t, tc.reason, r, "gRPC %s: %v", tc.name, err)
			require.Equal(t, tc.field, f, "gRPC %s: %v", tc.name, err)
			if tc.method == "" {
				continue
			}

			httpCode, body := d.rest(tc.method, tc.path, tc.body)
			require.Equal(t, 400, httpCode, "REST %s: %v", tc.name, body)
			require.EqualValues(t, codes.InvalidArgument, body["code"], "REST %s", tc.name)
			r, f = reason(body)
			wantR, wantF := tc.reason, tc.field
			if tc.restReason != "" {
				wantR, wantF = tc.restReason, tc.restField
			}
			require.Equal(t, wantR, r, "REST %s: %v", tc.name, body)
			require.Equal(t, wantF, f, "REST %s: %v", tc.name, body)
		}

		// Nothing was written: one queue, as it was, with no message and
		// the same counters.
		lst := d.restOK("GET", "/v1/queues", "")
		require.Len(t, lst["queues"], 1)
		after := d.restOK("GET", "/v1/queues/q", "")
		delete(before["queue"].(map[string]any), "update_time")
		delete(after["queue"].(map[string]any), "update_time")
		require.Equal(t, before, after)
		require.Equal(t, "0", jget(after, "queue", "state", "retained_messages"))
	})
}

// TestE2E_S14_UndecodableRESTRequestsGetErrorInfo: what the gateway
// itself refuses (not JSON, an unknown field, bad base64, a query
// parameter of the wrong type) is a 400 with ErrorInfo too.
func TestE2E_S14_UndecodableRESTRequestsGetErrorInfo(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	d.restOK("POST", "/v1/queues", `{"name": "q"}`)
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/queues/q/messages", `not json`},
		{"POST", "/v1/queues/q/messages", `{"body": "aGk=", "nonsense": 1}`},
		{"POST", "/v1/queues/q/messages", `{"body": "not base64!"}`},
		{"POST", "/v1/queues/q/messages:receive", `{"max_messages": "ten"}`},
		{"GET", "/v1/queues?page_size=ten", ""},
	} {
		code, body := d.rest(tc.method, tc.path, tc.body)
		require.Equal(t, 400, code, "%s %s %s: %v", tc.method, tc.path, tc.body, body)
		r, _ := reason(body)
		require.Equal(t, "MALFORMED_REQUEST", r, "%s %s %s: %v", tc.method, tc.path, tc.body, body)
	}
	st := d.restOK("GET", "/v1/queues/q/tags/default", "")
	require.Equal(t, "0", jget(st, "tag", "state", "available"), "nothing was sent")
}

// TestE2E_UnknownGRPCMethodGetsErrorInfo: even a method no service has.
func TestE2E_UnknownGRPCMethodGetsErrorInfo(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	err := d.conn.Invoke(context.Background(), "/tagq.v1.QueueService/NoSuchMethod", &emptypb.Empty{}, &emptypb.Empty{})
	code, r, _ := grpcReason(t, err)
	require.Equal(t, codes.Unimplemented, code)
	require.Equal(t, "UNIMPLEMENTED", r)
}

// TestE2E_BatchReportsEachEntry_REST: a batch with an invalid entry stores
// the valid ones and reports the invalid one (id, reason, field) under
// failed, with HTTP 200.
func TestE2E_BatchReportsEachEntry_REST(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		d.restOK("POST", "/v1/queues", `{"name": "q"}`)
		out := d.restOK("POST", "/v1/queues/q/messages:batchSend", `{"entries": [
			{"id": "bad", "body": "eA==", "attributes": {"no spaces": {"string_value": "v"}}},
			{"id": "good", "body": "eQ=="}]}`)
		require.Len(t, out["successful"], 1)
		require.Equal(t, "good", jget(out, "successful", 0, "id"))
		require.Equal(t, map[string]any{"id": "bad", "reason": "INVALID_ATTRIBUTE", "field": "entries[0].attributes[no spaces]",
			"message": jget(out, "failed", 0, "message")}, jget(out, "failed", 0))
		require.NotEmpty(t, jget(out, "failed", 0, "message"))

		recv := d.restOK("POST", "/v1/queues/q/messages:receive", `{"max_messages": 10}`)
		require.Len(t, recv["messages"], 1)
		require.Equal(t, "eQ==", jget(recv, "messages", 0, "body"))

		// Per-entry results of a batch delete: one good handle, one garbled.
		h := jget(recv, "messages", 0, "receipt_handle").(string)
		del := d.restOK("POST", "/v1/queues/q/messages:batchDelete", fmt.Sprintf(`{"entries": [
			{"id": "1", "receipt_handle": %q}, {"id": "2", "receipt_handle": "garbled"}]}`, h))
		require.Equal(t, []any{"1"}, del["successful"])
		require.Equal(t, "INVALID_RECEIPT_HANDLE", jget(del, "failed", 0, "reason"))
		require.Equal(t, "entries[1].receipt_handle", jget(del, "failed", 0, "field"))
	})
}

// TestE2E_LargeMessagesPassTheGateway: a batch and a receive of 20
// messages of 250,000 bytes (5 MB, over gRPC's default 4 MiB message
// limit) work over REST, whose gateway calls the gRPC server.
func TestE2E_LargeMessagesPassTheGateway(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	d.restOK("POST", "/v1/queues", `{"name": "q"}`)
	body := b64(strings.Repeat("x", 250000))
	entries := make([]map[string]string, 20)
	for i := range entries {
		entries[i] = map[string]string{"id": fmt.Sprint(i), "body": body}
	}
	req, err := json.Marshal(map[string]any{"entries": entries})
	require.NoError(t, err)
	out := d.restOK("POST", "/v1/queues/q/messages:batchSend", string(req))
	require.Len(t, out["successful"], 20)
	recv := d.restOK("POST", "/v1/queues/q/messages:receive", `{"max_messages": 20}`)
	require.Len(t, recv["messages"], 20)
	require.Equal(t, body, jget(recv, "messages", 19, "body"))
}

// TestE2E_UpdateQueueChangesOnlyTheMaskedFields over gRPC and REST (where
// the gateway derives the mask from the body when none is given).
func TestE2E_UpdateQueueChangesOnlyTheMaskedFields(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	ctx := context.Background()
	d.restOK("POST", "/v1/queues", `{"name": "q", "delay_seconds": 3, "user_attributes": {"team": "a"}}`)

	up, err := d.q.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{
		Queue:      &tagqv1.Queue{Name: "q", VisibilityTimeoutSeconds: i32(60), DelaySeconds: i32(9)},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"visibility_timeout_seconds"}}})
	require.NoError(t, err)
	require.EqualValues(t, 60, up.GetQueue().GetVisibilityTimeoutSeconds())
	require.EqualValues(t, 3, up.GetQueue().GetDelaySeconds(), "not in the mask: unchanged")

	_, err = d.q.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "q", DelaySeconds: i32(9)}})
	code, r, f := grpcReason(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "INVALID_ARGUMENT_RANGE", r, "an empty mask is refused")
	require.Equal(t, "update_mask", f)

	_, err = d.q.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "q"},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"name"}}})
	code, _, f = grpcReason(t, err)
	require.Equal(t, codes.InvalidArgument, code, "name is immutable")
	require.Equal(t, "update_mask", f)

	out := d.restOK("PATCH", "/v1/queues/q", `{"delay_seconds": 7, "user_attributes": {"team": "b"}}`)
	require.EqualValues(t, 7, jget(out, "queue", "delay_seconds"))
	require.Equal(t, map[string]any{"team": "b"}, jget(out, "queue", "user_attributes"))
	require.EqualValues(t, 60, jget(out, "queue", "visibility_timeout_seconds"))

	out = d.restOK("PATCH", "/v1/queues/q?update_mask=delay_seconds", `{"delay_seconds": 1, "receive_wait_seconds": 5}`)
	require.EqualValues(t, 1, jget(out, "queue", "delay_seconds"))
	require.EqualValues(t, 0, jget(out, "queue", "receive_wait_seconds"), "not in the mask: unchanged")
}
