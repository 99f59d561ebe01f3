package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Deduplicated sends end to end: the same deduplication_id sent twice over
// gRPC, and twice over REST, stores one message each and answers with its
// id; on a shared Redis, a second tagqd answers a repeat the same way.
func TestE2E_DeduplicatedSends(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()
		_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "orders"}})
		require.NoError(t, err)

		id := "order-42"
		first, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "orders", Body: []byte("g"), DeduplicationId: &id})
		require.NoError(t, err)
		again, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "orders", Body: []byte("g2"), DeduplicationId: &id})
		require.NoError(t, err)
		require.Equal(t, first.GetMessageId(), again.GetMessageId())
		require.True(t, first.GetSendTime().AsTime().Equal(again.GetSendTime().AsTime()))

		body := fmt.Sprintf(`{"body": %q, "deduplication_id": "rest-1"}`, b64("r"))
		r1 := d.restOK("POST", "/v1/queues/orders/messages", body)
		r2 := d.restOK("POST", "/v1/queues/orders/messages", body)
		require.NotEmpty(t, r1["message_id"])
		require.Equal(t, r1["message_id"], r2["message_id"])
		require.Equal(t, r1["send_time"], r2["send_time"])
		code, bad := d.rest("POST", "/v1/queues/orders/messages:batchSend", fmt.Sprintf(
			`{"entries": [{"id": "a", "body": %q, "deduplication_id": "has space"}]}`, b64("x")))
		require.Equal(t, 200, code)
		require.Equal(t, "entries[0].deduplication_id", jget(bad, "failed", 0, "field"))

		if be.name != "embedded" { // a replica on the same Redis
			d2 := start(t, be)
			r3, err := d2.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "orders", Body: []byte("g3"), DeduplicationId: &id})
			require.NoError(t, err)
			require.Equal(t, first.GetMessageId(), r3.GetMessageId())
		}

		q := d.restOK("GET", "/v1/queues/orders", "")
		require.Equal(t, "2", jget(q, "queue", "state", "retained_messages"))
		want := "2"
		if be.name != "embedded" {
			want = "3"
		}
		require.Equal(t, want, jget(q, "queue", "state", "deduplicated_total"))
		recv := d.restOK("POST", "/v1/queues/orders/messages:receive", `{"max_messages": 10}`)
		msgs, _ := recv["messages"].([]any)
		require.Len(t, msgs, 2)
		require.Equal(t, first.GetMessageId(), jget(msgs[0], "message_id"))
		require.Equal(t, r1["message_id"], jget(msgs[1], "message_id"))
	})
}
