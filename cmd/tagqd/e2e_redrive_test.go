package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// ordersWithDLQ: queue orders (tags billing, shipping), policy max 2 ->
// orders-dlq, over REST as a user would.
func ordersWithDLQ(d *daemon) {
	d.restOK("POST", "/v1/queues", `{"name": "orders-dlq", "dead_letter_queue": true}`)
	d.restOK("POST", "/v1/queues", `{"name": "orders", "redrive_policy": {"dead_letter_queue": "orders-dlq", "max_receive_count": 2}}`)
	d.restOK("POST", "/v1/queues/orders/tags", `{"name": "billing"}`)
	d.restOK("POST", "/v1/queues/orders/tags", `{"name": "shipping"}`)
}

func (d *daemon) receiveOne(queue, tag string) map[string]any {
	d.t.Helper()
	out := d.restOK("POST", "/v1/queues/"+queue+"/messages:receive", fmt.Sprintf(`{"tag": %q}`, tag))
	m, _ := jget(out, "messages", 0).(map[string]any)
	require.NotNil(d.t, m, "no message for %s/%s", queue, tag)
	return m
}

func (d *daemon) tagState(queue, tag string) map[string]any {
	d.t.Helper()
	st, _ := jget(d.restOK("GET", "/v1/queues/"+queue+"/tags/"+tag, ""), "tag", "state").(map[string]any)
	return st
}

// TestE2E_S7_SweeperDeadLettersPerTagWithNobodyPolling is issue 3's first
// check: billing receives twice without deleting, shipping deletes; once
// billing's second deadline passes, tagqd's own sweeper moves the message
// to the DLQ with nobody receiving. The queue's clock is driven through
// Redis (test_clock_ms), so this runs on real Redis only.
func TestE2E_S7_SweeperDeadLettersPerTagWithNobodyPolling(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		if be.name == "embedded" {
			t.Skip("driving tagqd's clock needs a shared Redis")
		}
		d := start(t, be, "--test-clock")
		ordersWithDLQ(d)
		sent := d.restOK("POST", "/v1/queues/orders/messages", fmt.Sprintf(`{"body": %q, "attributes": {"k": {"string_value": "v"}}}`, b64("order-7")))
		first := d.receiveOne("orders", "billing")
		d.restOK("POST", "/v1/queues/orders/messages:changeVisibility", fmt.Sprintf(`{"receipt_handle": %q, "visibility_seconds": 0}`, first["receipt_handle"]))
		second := d.receiveOne("orders", "billing")
		require.EqualValues(t, 2, second["receive_count"])
		ship := d.receiveOne("orders", "shipping")
		d.restOK("POST", "/v1/queues/orders/messages:delete", fmt.Sprintf(`{"receipt_handle": %q}`, ship["receipt_handle"]))
		shippingBefore := d.tagState("orders", "shipping")

		// Billing's deadline passes; nobody calls anything but GetTag.
		rdb := redisOf(t, be)
		require.NoError(t, rdb.HSet(context.Background(), be.prefix+":{orders}:m", "test_clock_ms", time.Now().Add(time.Hour).UnixMilli()).Err())
		require.Eventually(t, func() bool { return d.tagState("orders-dlq", "default")["available"] == "1" },
			10*time.Second, 20*time.Millisecond, "the sweeper moved it")

		dead := d.restOK("POST", "/v1/queues/orders-dlq/messages:peek", `{"max_messages": 10}`)
		msgs, _ := dead["messages"].([]any)
		require.Len(t, msgs, 1, "exactly one dead letter")
		dl := jget(msgs[0], "dead_letter")
		require.Equal(t, "orders", jget(dl, "source_queue_name"))
		require.Equal(t, "billing", jget(dl, "source_tag"))
		require.EqualValues(t, 2, jget(dl, "original_receive_count"))
		require.Equal(t, "MAX_RECEIVE_COUNT_EXCEEDED", jget(dl, "reason"))
		require.Equal(t, sent["message_id"], jget(dl, "original_message_id"))
		require.Equal(t, b64("order-7"), jget(msgs[0], "body"))
		require.Equal(t, "v", jget(msgs[0], "attributes", "k", "string_value"))
		require.Equal(t, "orders", jget(msgs[0], "attributes", "DLQ.sourceQueue", "string_value"))
		require.Equal(t, "1", d.tagState("orders", "billing")["dead_total"])
		require.Equal(t, shippingBefore, d.tagState("orders", "shipping"), "shipping's counters untouched")
	})
}

// TestE2E_S8_S10_DeadMessageThenMoveBackToTheFailingTagOnly is issue 3's
// second and third checks, over REST and gRPC.
func TestE2E_S8_S10_DeadMessageThenMoveBackToTheFailingTagOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ordersWithDLQ(d)
		d.restOK("POST", "/v1/queues/orders/messages", fmt.Sprintf(`{"body": %q}`, b64("poison")))
		ship := d.receiveOne("orders", "shipping")
		d.restOK("POST", "/v1/queues/orders/messages:dead", fmt.Sprintf(
			`{"receipt_handle": %q, "reason": "BAD_ADDRESS", "description": "no such street"}`, ship["receipt_handle"]))
		// At once: no sweep interval to wait for.
		peek := d.restOK("POST", "/v1/queues/orders-dlq/messages:peek", `{"max_messages": 10}`)
		require.Equal(t, "BAD_ADDRESS", jget(peek, "messages", 0, "dead_letter", "reason"))
		require.Equal(t, "shipping", jget(peek, "messages", 0, "dead_letter", "source_tag"))
		// Billing processes it normally.
		bill := d.receiveOne("orders", "billing")
		d.restOK("POST", "/v1/queues/orders/messages:delete", fmt.Sprintf(`{"receipt_handle": %q}`, bill["receipt_handle"]))

		ctx := context.Background()
		task, err := d.r.StartMessageMove(ctx, &tagqv1.StartMessageMoveRequest{DeadLetterQueue: "orders-dlq", MaxMessagesPerSecond: 100})
		require.NoError(t, err)
		require.EqualValues(t, 1, task.GetTask().GetRemainingMessages())
		require.Eventually(t, func() bool {
			l, err := d.r.ListMessageMoves(ctx, &tagqv1.ListMessageMovesRequest{DeadLetterQueue: "orders-dlq"})
			return err == nil && l.GetTasks()[0].GetState() == tagqv1.MessageMoveTask_STATE_COMPLETED
		}, 10*time.Second, 20*time.Millisecond, "the move completes (tagqd's worker runs it)")
		l, err := d.r.ListMessageMoves(ctx, &tagqv1.ListMessageMovesRequest{DeadLetterQueue: "orders-dlq"})
		require.NoError(t, err)
		require.EqualValues(t, 1, l.GetTasks()[0].GetMovedMessages())

		back, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "orders", Tag: "shipping", MaxMessages: i32(10)})
		require.NoError(t, err)
		require.Len(t, back.GetMessages(), 1, "delivered again to shipping")
		require.Equal(t, "poison", string(back.GetMessages()[0].GetBody()))
		require.EqualValues(t, 1, back.GetMessages()[0].GetReceiveCount())
		require.EqualValues(t, 1, back.GetMessages()[0].GetMoveCount())
		never, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "orders", Tag: "billing", MaxMessages: i32(10)})
		require.NoError(t, err)
		require.Empty(t, never.GetMessages(), "billing processed it and never sees it again")
		require.Equal(t, "0", d.tagState("orders-dlq", "default")["available"])

		// Errors of the redrive API carry ErrorInfo too.
		_, err = d.m.DeadMessage(ctx, &tagqv1.DeadMessageRequest{Queue: "orders-dlq", ReceiptHandle: "AAAA"})
		_, r, _ := grpcReason(t, err)
		require.Equal(t, "INVALID_RECEIPT_HANDLE", r)
		code, body := d.rest("DELETE", "/v1/queues/orders-dlq", "")
		require.Equal(t, 400, code, "DLQ in use: %v", body)
		r, _ = reason(body)
		require.Equal(t, "DEAD_LETTER_QUEUE_IN_USE", r)
		d.restOK("DELETE", "/v1/queues/orders-dlq?force=true", "")
		q := d.restOK("GET", "/v1/queues/orders", "")
		require.Nil(t, jget(q, "queue", "redrive_policy"), "force removed the source's policy")
	})
}

// TestE2E_S7_ReceiveNeverHandsOutTheNPlusFirstTime: nacks instead of time.
func TestE2E_S7_ReceiveNeverHandsOutTheNPlusFirstTime(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ordersWithDLQ(d)
		d.restOK("POST", "/v1/queues/orders/messages", fmt.Sprintf(`{"body": %q}`, b64("m")))
		for range 2 {
			m := d.receiveOne("orders", "billing")
			d.restOK("POST", "/v1/queues/orders/messages:changeVisibility", fmt.Sprintf(`{"receipt_handle": %q, "visibility_seconds": 0}`, m["receipt_handle"]))
		}
		out := d.restOK("POST", "/v1/queues/orders/messages:receive", `{"tag": "billing"}`)
		require.Empty(t, out["messages"])
		require.Equal(t, "1", d.tagState("orders-dlq", "default")["available"])
		require.Equal(t, "1", d.tagState("orders", "shipping")["available"], "shipping still has it")
	})
}
