package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Retry backoff (S23) end to end through a real tagqd, on tagqd's own
// clock (the backoffs are whole seconds, so this waits a few of them: a
// stream push or a long poll ending is what it waits for, never a sleep).
// A Consume stream's nack without a delay comes back after the policy's
// backoff; an explicit nack (0 ms) at once; a visibility that runs out,
// after visibility plus backoff: each pushed to the open stream (the wake
// when the backoff ends). Over REST: the policy set, shown and removed
// through the queue's routes, a ChangeMessageVisibility with
// retry_backoff ending a long poll after the backoff, and bad input named.
func TestE2E_RetryBackoff(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		q := d.restOK("POST", "/v1/queues",
			`{"name": "jobs", "visibility_timeout_seconds": 1, "retry_policy": {"min_backoff_seconds": 1, "max_backoff_seconds": 2}}`)
		require.Equal(t, float64(1), jget(q, "queue", "retry_policy", "min_backoff_seconds"), "%v", q)
		require.Equal(t, float64(2), jget(q, "queue", "retry_policy", "max_backoff_seconds"))

		c, err := d.m.Consume(ctx)
		require.NoError(t, err)
		require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "jobs"}}))
		next := func() (*tagqv1.ConsumeMessage, time.Time) {
			t.Helper()
			for {
				resp, err := c.Recv()
				require.NoError(t, err)
				if ms := resp.GetMessages(); len(ms) > 0 {
					require.Len(t, ms, 1)
					return ms[0], time.Now()
				}
			}
		}
		_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "jobs", Body: []byte("j")})
		require.NoError(t, err)
		m1, _ := next()
		require.EqualValues(t, 1, m1.GetMessage().GetReceiveCount())

		// A nack without a delay: the backoff after one receive, [1 s, 2 s].
		t0 := time.Now()
		require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Nacks: []*tagqv1.ConsumeNack{{DeliveryId: m1.GetDeliveryId()}}}))
		m2, t2 := next()
		require.EqualValues(t, 2, m2.GetMessage().GetReceiveCount())
		require.GreaterOrEqual(t, t2.Sub(t0), 900*time.Millisecond, "not back before the backoff")

		// An explicit nack (0 ms) wins: back at once, well before the
		// backoff after two receives (2 s).
		t0 = time.Now()
		require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Nacks: []*tagqv1.ConsumeNack{{DeliveryId: m2.GetDeliveryId(), DelayMilliseconds: proto.Int32(0)}}}))
		m3, t3 := next()
		require.EqualValues(t, 3, m3.GetMessage().GetReceiveCount())
		require.Less(t, t3.Sub(t0), 1900*time.Millisecond, "an explicit nack is not backed off")

		// Left alone: its visibility (1 s) runs out, then the backoff (2 s).
		m4, t4 := next()
		require.EqualValues(t, 4, m4.GetMessage().GetReceiveCount())
		require.GreaterOrEqual(t, t4.Sub(t3), 2900*time.Millisecond, "visibility, then the backoff")
		require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Acks: []uint64{m4.GetDeliveryId()}}))
		require.NoError(t, c.CloseSend())
		for {
			if _, err := c.Recv(); err != nil {
				break
			}
		}

		// REST: a nack asking for the policy ends a waiting long poll once
		// the backoff passed.
		d.restOK("POST", "/v1/queues", `{"name": "mail", "retry_policy": {"min_backoff_seconds": 1, "max_backoff_seconds": 1}}`)
		d.restOK("POST", "/v1/queues/mail/messages", fmt.Sprintf(`{"body": %q}`, b64("m")))
		got := d.receiveOne("mail", "")
		code, body := d.rest("POST", "/v1/queues/mail/messages:changeVisibility",
			fmt.Sprintf(`{"receipt_handle": %q, "visibility_seconds": 5, "retry_backoff": true}`, got["receipt_handle"]))
		require.Equal(t, 400, code, "%v", body)
		_, field := reason(body)
		require.Equal(t, "visibility_seconds", field)
		t0 = time.Now()
		d.restOK("POST", "/v1/queues/mail/messages:changeVisibility",
			fmt.Sprintf(`{"receipt_handle": %q, "retry_backoff": true}`, got["receipt_handle"]))
		r := d.restOK("POST", "/v1/queues/mail/messages:receive", `{"wait_seconds": 10}`)
		require.GreaterOrEqual(t, time.Since(t0), 900*time.Millisecond)
		require.EqualValues(t, 2, jget(r, "messages", 0, "receive_count"), "%v", r)

		// Update and removal through PATCH, shown by GET; other updates keep it.
		d.restOK("PATCH", "/v1/queues/mail?update_mask=retry_policy",
			`{"retry_policy": {"min_backoff_seconds": 3, "max_backoff_seconds": 30}}`)
		require.Equal(t, float64(30), jget(d.restOK("GET", "/v1/queues/mail", ""), "queue", "retry_policy", "max_backoff_seconds"))
		d.restOK("PATCH", "/v1/queues/mail?update_mask=delay_seconds", `{"delay_seconds": 0}`)
		require.Equal(t, float64(3), jget(d.restOK("GET", "/v1/queues/mail", ""), "queue", "retry_policy", "min_backoff_seconds"))
		d.restOK("PATCH", "/v1/queues/mail?update_mask=retry_policy", `{}`)
		require.Nil(t, jget(d.restOK("GET", "/v1/queues/mail", ""), "queue", "retry_policy"))

		// Bad input, over both: the field named, nothing created or changed.
		code, body = d.rest("POST", "/v1/queues", `{"name": "bad", "retry_policy": {"min_backoff_seconds": 5, "max_backoff_seconds": 2}}`)
		require.Equal(t, 400, code)
		rsn, field := reason(body)
		require.Equal(t, "INVALID_ARGUMENT_RANGE", rsn)
		require.Equal(t, "queue.retry_policy.max_backoff_seconds", field)
		code, _ = d.rest("GET", "/v1/queues/bad", "")
		require.Equal(t, 404, code)
		_, err = d.q.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{
			Queue:      &tagqv1.Queue{Name: "mail", RetryPolicy: &tagqv1.RetryPolicy{MinBackoffSeconds: -1, MaxBackoffSeconds: 2}},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"retry_policy"}}})
		gc, ei := errInfo(t, err)
		require.Equal(t, codes.InvalidArgument, gc)
		require.Equal(t, "queue.retry_policy.min_backoff_seconds", ei.GetMetadata()["field"])
		require.Nil(t, jget(d.restOK("GET", "/v1/queues/mail", ""), "queue", "retry_policy"))
	})
}
