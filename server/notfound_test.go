package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// A missing queue or tag is named by the request field that holds it.
func TestNotFound_NamesTheRequestField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	for _, tc := range []struct {
		name          string
		call          func() error
		reason, field string
	}{
		{"GetQueue", func() error { _, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "nope"}); return err },
			"QUEUE_NOT_FOUND", "name"},
		{"DeleteQueue", func() error {
			_, err := b.q.DeleteQueue(b.ctx, &tagqv1.DeleteQueueRequest{Name: "nope"})
			return err
		}, "QUEUE_NOT_FOUND", "name"},
		{"SendMessage", func() error {
			_, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "nope", Body: []byte("x")})
			return err
		}, "QUEUE_NOT_FOUND", "queue"},
		{"ReceiveMessage", func() error {
			_, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", Tag: "nope"})
			return err
		}, "TAG_NOT_FOUND", "tag"},
		{"PeekMessage", func() error {
			_, err := b.m.PeekMessage(b.ctx, &tagqv1.PeekMessageRequest{Queue: "q", Tag: "nope"})
			return err
		}, "TAG_NOT_FOUND", "tag"},
		{"GetTag", func() error { _, err := b.q.GetTag(b.ctx, &tagqv1.GetTagRequest{Queue: "q", Name: "nope"}); return err },
			"TAG_NOT_FOUND", "name"},
		// The tag is missing, not the queue of the same name.
		{"GetTag named as its queue", func() error {
			_, err := b.q.GetTag(b.ctx, &tagqv1.GetTagRequest{Queue: "q", Name: "q"})
			return err
		}, "TAG_NOT_FOUND", "name"},
		{"GetTag of a missing queue", func() error {
			_, err := b.q.GetTag(b.ctx, &tagqv1.GetTagRequest{Queue: "nope", Name: "t"})
			return err
		}, "QUEUE_NOT_FOUND", "queue"},
		{"DeleteTag", func() error {
			_, err := b.q.DeleteTag(b.ctx, &tagqv1.DeleteTagRequest{Queue: "q", Name: "nope"})
			return err
		}, "TAG_NOT_FOUND", "name"},
		{"CreateQueue with a missing dead-letter queue", func() error {
			_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q2",
				RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "nodlq", MaxReceiveCount: 3}}})
			return err
		}, "QUEUE_NOT_FOUND", "queue.redrive_policy.dead_letter_queue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ei := info(t, tc.call())
			require.Equal(t, codes.NotFound, code)
			require.Equal(t, tc.reason, ei.GetReason())
			require.Equal(t, tc.field, ei.GetMetadata()["field"])
		})
	}

	// REST answers through the same interceptors.
	status, body := b.do(t, http.MethodGet, "/v1/queues/q/tags/nope", "")
	require.Equal(t, http.StatusNotFound, status, body)
	var answer struct {
		Details []struct {
			Reason   string            `json:"reason"`
			Metadata map[string]string `json:"metadata"`
		} `json:"details"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &answer), body)
	require.NotEmpty(t, answer.Details, body)
	require.Equal(t, "TAG_NOT_FOUND", answer.Details[0].Reason, body)
	require.Equal(t, "name", answer.Details[0].Metadata["field"], body)
}
