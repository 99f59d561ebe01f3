package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Topic queues end to end (S13): created over REST, sent to over gRPC and
// REST with topics, each tag receiving a topic in order, one at a time;
// a message without a topic, or with a bad one, is refused naming the
// field.
func TestE2E_TopicQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()
		q := d.restOK("POST", "/v1/queues", `{"name": "payments", "topic_queue": true}`)
		require.Equal(t, true, jget(q, "queue", "topic_queue"))

		_, err := d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "payments", Entries: []*tagqv1.SendMessageBatchEntry{
			{Id: "1", Body: []byte("acct1-debit"), Topic: "acct-1"},
			{Id: "2", Body: []byte("acct2-debit"), Topic: "acct-2"},
			{Id: "3", Body: []byte("acct1-credit"), Topic: "acct-1"},
		}})
		require.NoError(t, err)
		d.restOK("POST", "/v1/queues/payments/messages", fmt.Sprintf(`{"body": %q, "topic": "acct-2"}`, b64("acct2-credit")))

		code, bad := d.rest("POST", "/v1/queues/payments/messages", fmt.Sprintf(`{"body": %q}`, b64("no topic")))
		require.Equal(t, 400, code)
		require.Equal(t, "topic", jget(bad, "details", 0, "metadata", "field"))
		code, bad = d.rest("POST", "/v1/queues/payments/messages:batchSend", fmt.Sprintf(
			`{"entries": [{"id": "a", "body": %q, "topic": "has space"}]}`, b64("x")))
		require.Equal(t, 200, code)
		require.Equal(t, "entries[0].topic", jget(bad, "failed", 0, "field"))

		// One in flight per topic: the first of each, in send order.
		r, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "payments", MaxMessages: i32(10)})
		require.NoError(t, err)
		require.Len(t, r.GetMessages(), 2)
		require.Equal(t, "acct1-debit", string(r.GetMessages()[0].GetBody()))
		require.Equal(t, "acct-1", r.GetMessages()[0].GetTopic())
		require.Equal(t, "acct2-debit", string(r.GetMessages()[1].GetBody()))
		empty := d.restOK("POST", "/v1/queues/payments/messages:receive", `{"max_messages": 10}`)
		require.Empty(t, empty["messages"])

		_, err = d.m.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: "payments", ReceiptHandle: r.GetMessages()[0].GetReceiptHandle()})
		require.NoError(t, err)
		next := d.restOK("POST", "/v1/queues/payments/messages:receive", `{"max_messages": 10}`)
		msgs, _ := next["messages"].([]any)
		require.Len(t, msgs, 1)
		require.Equal(t, "acct-1", jget(msgs[0], "topic"))
		require.Equal(t, b64("acct1-credit"), jget(msgs[0], "body"))

		// A plain queue refuses topics.
		_, err = d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "plain"}})
		require.NoError(t, err)
		_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "plain", Body: []byte("x"), Topic: "a"})
		require.Error(t, err)
		require.Contains(t, err.Error(), "topic")
	})
}
