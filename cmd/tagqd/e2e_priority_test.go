package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Priority queues end to end: created over gRPC and over REST, sent to
// with mixed priorities, each tag receiving higher priority first (FIFO
// within one), the message showing its priority; bad priorities are
// refused naming the field, and priority_queue is fixed at creation.
func TestE2E_PriorityQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()
		created, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "jobs", PriorityQueue: true}})
		require.NoError(t, err)
		require.True(t, created.GetQueue().GetPriorityQueue())
		q := d.restOK("POST", "/v1/queues", `{"name": "jobs-rest", "priority_queue": true}`)
		require.Equal(t, true, jget(q, "queue", "priority_queue"))

		for _, name := range []string{"jobs", "jobs-rest"} {
			_, err = d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: name, Entries: []*tagqv1.SendMessageBatchEntry{
				{Id: "1", Body: []byte("report"), Priority: 12},
				{Id: "2", Body: []byte("default")},
				{Id: "3", Body: []byte("page-1"), Priority: 1},
			}})
			require.NoError(t, err)
			d.restOK("POST", "/v1/queues/"+name+"/messages", fmt.Sprintf(`{"body": %q, "priority": 1}`, b64("page-2")))
			_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: name, Body: []byte("mid"), Priority: 5})
			require.NoError(t, err)
		}

		// gRPC: by priority, FIFO within one, priorities shown (8 unset).
		r, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "jobs", MaxMessages: i32(3)})
		require.NoError(t, err)
		var got []string
		for _, m := range r.GetMessages() {
			got = append(got, fmt.Sprintf("%s:%d", m.GetBody(), m.GetPriority()))
		}
		require.Equal(t, []string{"page-1:1", "page-2:1", "mid:5"}, got)
		rest := d.restOK("POST", "/v1/queues/jobs/messages:receive", `{"max_messages": 10}`)
		msgs, _ := rest["messages"].([]any)
		require.Len(t, msgs, 2)
		require.Equal(t, b64("default"), jget(msgs[0], "body"))
		require.Equal(t, float64(8), jget(msgs[0], "priority"))
		require.Equal(t, b64("report"), jget(msgs[1], "body"))
		require.Equal(t, float64(12), jget(msgs[1], "priority"))

		// REST: the same order on the queue made over REST.
		rest = d.restOK("POST", "/v1/queues/jobs-rest/messages:receive", `{"max_messages": 10}`)
		msgs, _ = rest["messages"].([]any)
		var order []any
		for _, m := range msgs {
			order = append(order, jget(m, "priority"))
		}
		require.Equal(t, []any{float64(1), float64(1), float64(5), float64(8), float64(12)}, order)
		require.Equal(t, b64("page-1"), jget(msgs[0], "body"))

		// Bad priorities name the field.
		code, bad := d.rest("POST", "/v1/queues/jobs/messages", fmt.Sprintf(`{"body": %q, "priority": 17}`, b64("x")))
		require.Equal(t, 400, code)
		require.Equal(t, "priority", jget(bad, "details", 0, "metadata", "field"))
		code, bad = d.rest("POST", "/v1/queues/jobs/messages:batchSend", fmt.Sprintf(
			`{"entries": [{"id": "a", "body": %q, "priority": 2}, {"id": "b", "body": %q, "priority": -3}]}`, b64("x"), b64("y")))
		require.Equal(t, 200, code)
		require.Equal(t, "entries[1].priority", jget(bad, "failed", 0, "field"))
		_, err = d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "plain"}})
		require.NoError(t, err)
		_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "plain", Body: []byte("x"), Priority: 3})
		require.Error(t, err)
		require.Contains(t, err.Error(), "priority")
		_, err = d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "both", PriorityQueue: true, TopicQueue: true}})
		require.Error(t, err)
		require.Contains(t, status.Convert(err).Message(), "both a topic queue and a priority queue")

		// Fixed at creation.
		_, err = d.q.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "jobs", PriorityQueue: false},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"priority_queue"}}})
		require.Error(t, err)
		require.Contains(t, err.Error(), "priority_queue")
		code, bad = d.rest("PATCH", "/v1/queues/plain?update_mask=priority_queue", `{"priority_queue": true}`)
		require.Equal(t, 400, code)
		require.Equal(t, "IMMUTABLE_FIELD", jget(bad, "details", 0, "reason"))
	})
}
