package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Seek end to end (S22) through a real tagqd: a Consume stream open on the
// tag gets what a seek over REST makes available again, and nothing it had
// outstanding is settled by its old acks; a seek over gRPC to a message
// id; another tag untouched; bad input and a trimmed id named.
func TestE2E_SeekTag(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		d.restOK("POST", "/v1/queues", `{"name": "orders", "retain_acked_messages": true}`)
		d.restOK("POST", "/v1/queues/orders/tags", `{"name": "audit"}`)
		var ids []string
		for i := 1; i <= 3; i++ {
			r, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "orders", Body: []byte(fmt.Sprintf("o%d", i))})
			require.NoError(t, err)
			ids = append(ids, r.GetMessageId())
		}

		// The default tag's consumer takes all three and acks them.
		c, err := d.m.Consume(ctx)
		require.NoError(t, err)
		require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "orders"}}))
		var first []*tagqv1.ConsumeMessage
		for len(first) < 3 {
			resp, err := c.Recv()
			require.NoError(t, err)
			first = append(first, resp.GetMessages()...)
		}
		acks := make([]uint64, 0, 3)
		for _, m := range first[:2] {
			acks = append(acks, m.GetDeliveryId())
		}
		require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Acks: acks}))
		require.Eventually(t, func() bool {
			return jget(d.restOK("GET", "/v1/queues/orders/tags/default", ""), "tag", "state", "deleted_total") == "2"
		}, 10*time.Second, 20*time.Millisecond)

		// Replay from the start over REST: the stream gets all three again.
		st := d.restOK("POST", "/v1/queues/orders/tags/default:seek", `{"time": "1970-01-01T00:00:00Z"}`)
		require.Equal(t, "3", jget(st, "tag", "state", "available"), "%v", st)
		require.Equal(t, "0", jget(st, "tag", "state", "in_flight"), "o3 dropped from the tag")
		require.Equal(t, "3", jget(st, "tag", "state", "received_total"))
		var again []*tagqv1.ConsumeMessage
		for len(again) < 3 {
			resp, err := c.Recv()
			require.NoError(t, err)
			again = append(again, resp.GetMessages()...)
		}
		for i, m := range again {
			require.Equal(t, ids[i], m.GetMessage().GetMessageId())
			require.Equal(t, int32(1), m.GetMessage().GetReceiveCount())
		}
		// o3's ack from before the seek settles nothing now.
		require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Acks: []uint64{first[2].GetDeliveryId()}}))
		require.NoError(t, c.CloseSend())
		for {
			if _, err := c.Recv(); err != nil {
				break
			}
		}
		tg := d.restOK("GET", "/v1/queues/orders/tags/default", "")
		require.Equal(t, "2", jget(tg, "tag", "state", "deleted_total"), "%v", tg)

		// Over gRPC, to a message id; the audit tag never moved.
		res, err := d.q.SeekTag(ctx, &tagqv1.SeekTagRequest{Queue: "orders", Name: "default",
			Target: &tagqv1.SeekTagRequest_MessageId{MessageId: ids[2]}})
		require.NoError(t, err)
		require.Equal(t, int64(1), res.GetTag().GetState().GetAvailable())
		r, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "orders", MaxMessages: i32(10)})
		require.NoError(t, err)
		require.Len(t, r.GetMessages(), 1)
		require.Equal(t, "o3", string(r.GetMessages()[0].GetBody()))
		audit := d.restOK("GET", "/v1/queues/orders/tags/audit", "")
		require.Equal(t, "3", jget(audit, "tag", "state", "available"))

		// Bad input names its field, over both.
		code, body := d.rest("POST", "/v1/queues/orders/tags/default:seek", `{"message_id": "1-1"}`)
		require.Equal(t, 404, code)
		rsn, field := reason(body)
		require.Equal(t, "MESSAGE_NOT_FOUND", rsn)
		require.Equal(t, "message_id", field)
		code, body = d.rest("POST", "/v1/queues/orders/tags/default:seek", `{}`)
		require.Equal(t, 400, code)
		_, field = reason(body)
		require.Equal(t, "time", field)
		_, err = d.q.SeekTag(ctx, &tagqv1.SeekTagRequest{Queue: "orders", Name: "default",
			Target: &tagqv1.SeekTagRequest_Time{Time: &timestamppb.Timestamp{Nanos: 2e9}}})
		gc, ei := errInfo(t, err)
		require.Equal(t, codes.InvalidArgument, gc)
		require.Equal(t, "time", ei.GetMetadata()["field"])
	})
}
