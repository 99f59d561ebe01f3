package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Partitioned queues end to end (issue 25): a queue of 4 partitions with
// two tags, sent to in batches over gRPC and REST; each tag receives every
// message exactly once (plain receives, a long poll, a Consume stream),
// deletes go over REST by receipt handle alone; GetQueue, GetTag and
// /metrics show one queue whose counters are sums over the partitions;
// ListQueues hides the partition queues; DeleteQueue removes every
// partition's keys.
func TestE2E_PartitionedQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		q := d.restOK("POST", "/v1/queues", `{"name": "parts", "partitions": 4}`)
		require.Equal(t, float64(4), jget(q, "queue", "partitions"), "%v", q)
		_, err := d.q.CreateTag(ctx, &tagqv1.CreateTagRequest{Queue: "parts", Tag: &tagqv1.Tag{Name: "audit"}})
		require.NoError(t, err)

		// 8 batches of 5: 4 over gRPC, 4 over REST; batches rotate, so
		// every partition gets some.
		want := map[string]bool{}
		ids := map[string]bool{}
		for b := range 4 {
			var entries []*tagqv1.SendMessageBatchEntry
			for i := range 5 {
				body := fmt.Sprintf("g%d-%d", b, i)
				want[body] = true
				entries = append(entries, &tagqv1.SendMessageBatchEntry{Id: fmt.Sprint(i), Body: []byte(body)})
			}
			r, err := d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "parts", Entries: entries})
			require.NoError(t, err)
			require.Empty(t, r.GetFailed())
			for _, s := range r.GetSuccessful() {
				ids[s.GetMessageId()] = true
			}
		}
		for b := range 4 {
			var entries []string
			for i := range 5 {
				body := fmt.Sprintf("r%d-%d", b, i)
				want[body] = true
				entries = append(entries, fmt.Sprintf(`{"id": "%d", "body": %q}`, i, b64(body)))
			}
			r := d.restOK("POST", "/v1/queues/parts/messages:batchSend", `{"entries": [`+strings.Join(entries, ",")+`]}`)
			ok, _ := r["successful"].([]any)
			require.Len(t, ok, 5, "%v", r)
			for _, s := range ok {
				ids[jget(s, "message_id").(string)] = true
			}
		}
		require.Len(t, ids, 40, "message ids are unique across partitions")
		parts := map[string]bool{}
		for id := range ids {
			_, p, _ := strings.Cut(id, "@") // "<stream id>@k" on partition k ≥ 1
			parts[p] = true
		}
		require.Equal(t, map[string]bool{"": true, "1": true, "2": true, "3": true}, parts, "every partition holds messages")
		if be.name != "embedded" {
			rdb := redisOf(t, be)
			for k := range 4 {
				name := "parts"
				if k > 0 {
					name = fmt.Sprintf("parts#%d", k)
				}
				n, err := rdb.XLen(ctx, be.prefix+":{"+name+"}:s").Result()
				require.NoError(t, err)
				require.Equal(t, int64(10), n, "partition %d holds two batches", k)
			}
		}

		// Counters are sums over the partitions.
		gq, err := d.q.GetQueue(ctx, &tagqv1.GetQueueRequest{Name: "parts"})
		require.NoError(t, err)
		require.Equal(t, int32(4), gq.GetQueue().GetPartitions())
		require.Equal(t, int64(40), gq.GetQueue().GetState().GetRetainedMessages())
		require.Equal(t, int64(40), gq.GetQueue().GetState().GetDefaultTag().GetAvailable())
		tg := d.restOK("GET", "/v1/queues/parts/tags/audit", "")
		require.Equal(t, "40", jget(tg, "tag", "state", "available"), "%v", tg)
		require.Eventually(t, func() bool {
			m, err := httpGet("http://" + d.http + "/metrics")
			return err == nil && strings.Count(m, `tagq_queue_messages{queue="parts"} 40`) == 1 &&
				strings.Count(m, `tagq_tag_messages_available{queue="parts",tag="audit"} 40`) == 1 &&
				!strings.Contains(m, `queue="parts#`)
		}, 10*time.Second, 20*time.Millisecond, "/metrics shows the queue once, with sums")

		// ListQueues shows the queue, not its partition queues.
		lq, err := d.q.ListQueues(ctx, &tagqv1.ListQueuesRequest{})
		require.NoError(t, err)
		var names []string
		for _, x := range lq.GetQueues() {
			names = append(names, x.GetName())
		}
		require.Equal(t, []string{"parts"}, names)
		require.Equal(t, int32(4), lq.GetQueues()[0].GetPartitions())
		require.Equal(t, int64(40), lq.GetQueues()[0].GetState().GetRetainedMessages(), "a sum over the partitions")
		lqt, err := d.q.ListQueues(ctx, &tagqv1.ListQueuesRequest{View: tagqv1.QueueView_QUEUE_VIEW_TAGS, OrderBy: "available desc"})
		require.NoError(t, err)
		require.Len(t, lqt.GetQueues(), 1)
		require.Len(t, lqt.GetQueues()[0].GetTags(), 2)
		for _, tg := range lqt.GetQueues()[0].GetTags() {
			require.Equal(t, int64(40), tg.GetState().GetAvailable(), tg.GetName())
		}
		require.NotContains(t, fmt.Sprint(d.restOK("GET", "/v1/queues", "")), "parts#")

		// The default tag: gRPC receives, deleted over REST by handle alone.
		got := map[string]bool{}
		var handles []string
		for range 20 {
			r, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "parts", MaxMessages: i32(10)})
			require.NoError(t, err)
			for _, m := range r.GetMessages() {
				require.False(t, got[string(m.GetBody())], "default received %s twice", m.GetBody())
				got[string(m.GetBody())] = true
				require.True(t, ids[m.GetMessageId()], "the id the send returned: %s", m.GetMessageId())
				handles = append(handles, m.GetReceiptHandle())
			}
			if len(got) == 40 {
				break
			}
		}
		require.Equal(t, want, got)
		for len(handles) > 0 {
			n := min(10, len(handles))
			var entries []string
			for i, h := range handles[:n] {
				entries = append(entries, fmt.Sprintf(`{"id": "%d", "receipt_handle": %q}`, i, h))
			}
			r := d.restOK("POST", "/v1/messages:batchDelete", `{"entries": [`+strings.Join(entries, ",")+`]}`)
			ok, _ := r["successful"].([]any)
			require.Len(t, ok, n, "%v", r)
			handles = handles[n:]
		}
		tgd, err := d.q.GetTag(ctx, &tagqv1.GetTagRequest{Queue: "parts", Name: "default"})
		require.NoError(t, err)
		st := tgd.GetTag().GetState()
		require.Equal(t, []int64{0, 0, 40, 40}, []int64{st.GetAvailable(), st.GetInFlight(), st.GetReceivedTotal(), st.GetDeletedTotal()})

		// A REST long poll on the drained tag is woken by a send to
		// whichever partition it lands on.
		done := make(chan map[string]any, 1)
		go func() {
			_, body := d.rest("POST", "/v1/queues/parts/messages:receive", `{"max_messages": 10, "wait_seconds": 20}`)
			done <- body
		}()
		waitForWaiters(t, d, 1)
		for i := range 3 { // three batches: three partitions in turn
			_, err = d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "parts",
				Entries: []*tagqv1.SendMessageBatchEntry{{Id: "a", Body: []byte(fmt.Sprintf("late-%d", i))}}})
			require.NoError(t, err)
			want[fmt.Sprintf("late-%d", i)] = true
		}
		var lp map[string]any
		select {
		case lp = <-done:
		case <-time.After(15 * time.Second):
			t.Fatal("the long poll was not woken")
		}
		msgs, _ := lp["messages"].([]any)
		require.NotEmpty(t, msgs, "%v", lp)
		late := map[string]bool{}
		for _, m := range msgs {
			late[jget(m, "body").(string)] = true
			d.restOK("POST", "/v1/messages:delete", fmt.Sprintf(`{"receipt_handle": %q}`, jget(m, "receipt_handle")))
		}
		for len(late) < 3 {
			r := d.restOK("POST", "/v1/queues/parts/messages:receive", `{"max_messages": 10, "wait_seconds": 1}`)
			ms, _ := r["messages"].([]any)
			require.NotEmpty(t, ms, "late messages missing: have %v", late)
			for _, m := range ms {
				b := jget(m, "body").(string)
				require.False(t, late[b], "long poll received %s twice", b)
				late[b] = true
				d.restOK("POST", "/v1/messages:delete", fmt.Sprintf(`{"receipt_handle": %q}`, jget(m, "receipt_handle")))
			}
		}
		require.Equal(t, map[string]bool{b64("late-0"): true, b64("late-1"): true, b64("late-2"): true}, late)

		// The audit tag: one Consume stream gets all 43, once each.
		c, err := d.m.Consume(ctx)
		require.NoError(t, err)
		require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "parts", Tag: "audit"}}))
		streamed := map[string]bool{}
		for len(streamed) < len(want) {
			resp, err := c.Recv()
			require.NoError(t, err)
			var acks []uint64
			for _, m := range resp.GetMessages() {
				b := string(m.GetMessage().GetBody())
				require.False(t, streamed[b], "audit streamed %s twice", b)
				streamed[b] = true
				acks = append(acks, m.GetDeliveryId())
			}
			if len(acks) > 0 {
				require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Acks: acks}))
			}
		}
		require.Equal(t, want, streamed)
		require.Eventually(t, func() bool {
			return jget(d.restOK("GET", "/v1/queues/parts/tags/audit", ""), "tag", "state", "deleted_total") == "43"
		}, 10*time.Second, 20*time.Millisecond)
		require.NoError(t, c.CloseSend())
		for {
			if _, err := c.Recv(); err != nil {
				break
			}
		}
		tga := d.restOK("GET", "/v1/queues/parts/tags/audit", "")
		require.Equal(t, "43", jget(tga, "tag", "state", "received_total"), "%v", tga)
		require.Equal(t, "0", jget(tga, "tag", "state", "in_flight"), "%v", tga)

		// DeleteQueue removes every partition.
		_, err = d.q.DeleteQueue(ctx, &tagqv1.DeleteQueueRequest{Name: "parts"})
		require.NoError(t, err)
		code, _ := d.rest("GET", "/v1/queues/parts", "")
		require.Equal(t, 404, code)
		if be.name != "embedded" {
			require.Empty(t, queueKeys(t, be, "parts"))
		}
	})
}

// Bad partition counts are INVALID_ARGUMENT naming the field, over gRPC
// and REST; partitions cannot change; a create that fails leaves no
// partition behind.
func TestE2E_PartitionsBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()
		for _, c := range []struct {
			name string
			q    *tagqv1.Queue
			rest string
		}{
			{"zero", &tagqv1.Queue{Name: "bad", Partitions: i32(0)}, `{"name": "bad", "partitions": 0}`},
			{"65", &tagqv1.Queue{Name: "bad", Partitions: i32(65)}, `{"name": "bad", "partitions": 65}`},
			{"negative", &tagqv1.Queue{Name: "bad", Partitions: i32(-3)}, `{"name": "bad", "partitions": -3}`},
			{"dead-letter", &tagqv1.Queue{Name: "bad", Partitions: i32(2), DeadLetterQueue: true}, `{"name": "bad", "partitions": 2, "dead_letter_queue": true}`},
			{"priority", &tagqv1.Queue{Name: "bad", Partitions: i32(4), PriorityQueue: true}, `{"name": "bad", "partitions": 4, "priority_queue": true}`},
		} {
			_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: c.q})
			code, ei := errInfo(t, err)
			require.Equal(t, codes.InvalidArgument, code, c.name)
			require.Equal(t, "INVALID_ARGUMENT_RANGE", ei.GetReason(), c.name)
			require.Equal(t, "queue.partitions", ei.GetMetadata()["field"], c.name)
			hc, body := d.rest("POST", "/v1/queues", c.rest)
			require.Equal(t, 400, hc, c.name)
			r, md := restInfo(body)
			require.Equal(t, "INVALID_ARGUMENT_RANGE", r, c.name)
			require.Equal(t, "queue.partitions", md["field"], c.name)
		}
		code, _ := d.rest("GET", "/v1/queues/bad", "")
		require.Equal(t, 404, code, "nothing created")

		// 1 and 64 are the bounds; a DLQ or priority queue of one partition is fine.
		d.restOK("POST", "/v1/queues", `{"name": "one", "partitions": 1}`)
		d.restOK("POST", "/v1/queues", `{"name": "wide", "partitions": 64}`)
		d.restOK("POST", "/v1/queues", `{"name": "dlq", "partitions": 1, "dead_letter_queue": true}`)

		// Fixed at creation.
		_, err := d.q.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "wide", Partitions: i32(8)},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"partitions"}}})
		c, ei := errInfo(t, err)
		require.Equal(t, codes.InvalidArgument, c)
		require.Equal(t, "IMMUTABLE_FIELD", ei.GetReason())
		require.Equal(t, "update_mask", ei.GetMetadata()["field"])
		require.Contains(t, err.Error(), `"partitions"`)
		hc, body := d.rest("PATCH", "/v1/queues/one?update_mask=partitions", `{"partitions": 4}`)
		require.Equal(t, 400, hc)
		r, _ := restInfo(body)
		require.Equal(t, "IMMUTABLE_FIELD", r)
		require.Equal(t, float64(64), jget(d.restOK("GET", "/v1/queues/wide", ""), "queue", "partitions"))
		require.Equal(t, float64(1), jget(d.restOK("GET", "/v1/queues/one", ""), "queue", "partitions"))

		// Creating a queue again with more partitions is ALREADY_EXISTS and
		// adds none to it.
		_, err = d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "one", Partitions: i32(4)}})
		c, ei = errInfo(t, err)
		require.Equal(t, codes.AlreadyExists, c)
		require.Equal(t, "QUEUE_ALREADY_EXISTS", ei.GetReason())
		_, err = d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "wide", Partitions: i32(2)}})
		c, _ = errInfo(t, err)
		require.Equal(t, codes.AlreadyExists, c)
		// A redrive target that is missing refuses the create before any partition.
		hc, _ = d.rest("POST", "/v1/queues", `{"name": "src", "partitions": 4, "redrive_policy": {"dead_letter_queue": "nope", "max_receive_count": 3}}`)
		require.Equal(t, 404, hc, "QUEUE_NOT_FOUND naming the dead-letter queue")
		if be.name != "embedded" {
			require.Empty(t, queueKeys(t, be, "bad"))
			require.Empty(t, queueKeys(t, be, "src"))
			for _, k := range queueKeys(t, be, "one") {
				require.NotContains(t, k, "one#", "no partition added to a queue of one")
			}
			rdb := redisOf(t, be)
			idx, err := rdb.ZRange(ctx, be.prefix+":parts", 0, -1).Result()
			require.NoError(t, err)
			require.Len(t, idx, 63, "the partition index holds wide's partitions 1-63 only: %v", idx)
			for _, p := range idx {
				require.True(t, strings.HasPrefix(p, "wide#"), p)
			}
		}
		_, err = d.q.DeleteQueue(ctx, &tagqv1.DeleteQueueRequest{Name: "wide"})
		require.NoError(t, err)
		if be.name != "embedded" {
			require.Empty(t, queueKeys(t, be, "wide"))
			n, err := redisOf(t, be).ZCard(ctx, be.prefix+":parts").Result()
			require.NoError(t, err)
			require.Zero(t, n)
		}
	})
}

// queueKeys are the keys under be's prefix of queue q and its partitions.
func queueKeys(t *testing.T, be backend, q string) []string {
	t.Helper()
	c := redisOf(t, be)
	ctx := context.Background()
	var (
		mu  sync.Mutex
		out []string
	)
	scan := func(ctx context.Context, n *redis.Client) error {
		for _, pat := range []string{be.prefix + ":{" + q + "}:*", be.prefix + ":{" + q + "#*"} {
			iter := n.Scan(ctx, 0, pat, 1000).Iterator()
			for iter.Next(ctx) {
				mu.Lock()
				out = append(out, iter.Val())
				mu.Unlock()
			}
			if err := iter.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	switch cc := c.(type) {
	case *redis.ClusterClient:
		require.NoError(t, cc.ForEachMaster(ctx, scan))
	case *redis.Client:
		require.NoError(t, scan(ctx, cc))
	}
	return out
}
