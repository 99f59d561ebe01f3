package tags

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func requireInvalid(t *testing.T, err error, reason, field string) {
	t.Helper()
	requireReason(t, err, reason)
	e, _ := AsError(err)
	require.Equal(t, KindInvalidArgument, e.Kind)
	require.Equal(t, field, e.Field)
}

func TestS14_BadInputIsRefusedAndNothingIsWritten(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		queueKeys := func() []string {
			k := b.keys(b.prefix + ":{*")
			idx, err := b.rdb.ZCard(b.ctx, b.s.indexKey()).Result()
			require.NoError(t, err)
			require.Zero(t, idx)
			return k
		}
		_, err := b.s.CreateQueue(b.ctx, QueueConfig{Name: "has space"})
		requireInvalid(t, err, ReasonInvalidName, "name")
		_, err = b.s.CreateQueue(b.ctx, QueueConfig{Name: strings.Repeat("x", 81)})
		requireInvalid(t, err, ReasonInvalidName, "name")
		_, err = b.s.CreateQueue(b.ctx, QueueConfig{Name: "a{b}"})
		requireInvalid(t, err, ReasonInvalidName, "name")
		for _, c := range []struct {
			cfg   QueueConfig
			field string
		}{
			{QueueConfig{Name: "q", DelaySeconds: i32(901)}, "delay_seconds"},
			{QueueConfig{Name: "q", VisibilityTimeoutSeconds: i32(-1)}, "visibility_timeout_seconds"},
			{QueueConfig{Name: "q", VisibilityTimeoutSeconds: i32(43201)}, "visibility_timeout_seconds"},
			{QueueConfig{Name: "q", ReceiveWaitSeconds: i32(21)}, "receive_wait_seconds"},
			{QueueConfig{Name: "q", MessageRetentionSeconds: i32(59)}, "message_retention_seconds"},
			{QueueConfig{Name: "q", MaxMessageBytes: i32(1023)}, "max_message_bytes"},
			{QueueConfig{Name: "q", DefaultTagName: "no way"}, "default_tag_name"},
		} {
			_, err := b.s.CreateQueue(b.ctx, c.cfg)
			reason := ReasonInvalidArgumentRange
			if c.field == "default_tag_name" {
				reason = ReasonInvalidName
			}
			requireInvalid(t, err, reason, c.field)
		}
		require.Empty(t, queueKeys(), "no queue was written")

		b.queue("q", func(c *QueueConfig) { c.MaxMessageBytes = i32(1024) })
		_, err = b.s.CreateTag(b.ctx, "q", TagConfig{Name: "bad name"})
		requireInvalid(t, err, ReasonInvalidName, "name")
		_, err = b.s.CreateTag(b.ctx, "q", TagConfig{Name: "t", Filter: &Filter{}})
		requireInvalid(t, err, ReasonInvalidFilter, "filter.conditions")
		_, err = b.s.CreateTag(b.ctx, "nope", TagConfig{Name: "t"})
		requireReason(t, err, ReasonQueueNotFound)
		_, err = b.s.CreateTag(b.ctx, "q", TagConfig{Name: "default"})
		requireReason(t, err, ReasonTagAlreadyExists)

		res, err := b.s.Send(b.ctx, "q", []OutMessage{
			{Body: make([]byte, 1025)},
			{Body: []byte("ok")},
			{Body: []byte("x"), Attributes: map[string]Attribute{"DLQ.sourceQueue": {String: "forged"}}},
			{Body: []byte("x"), Attributes: map[string]Attribute{"bad name": {String: "v"}}},
			{Body: []byte("x"), DelaySeconds: i32(901)},
			{},
			{Body: make([]byte, 1000), Attributes: map[string]Attribute{"big": {String: strings.Repeat("v", 30)}}},
		})
		require.NoError(t, err)
		requireInvalid(t, res[0].Err, ReasonMessageTooLarge, "body")
		require.NoError(t, res[1].Err)
		requireInvalid(t, res[2].Err, ReasonReservedAttribute, "attributes[DLQ.sourceQueue]")
		requireInvalid(t, res[3].Err, ReasonInvalidAttribute, "attributes[bad name]")
		requireInvalid(t, res[4].Err, ReasonInvalidArgumentRange, "delay_seconds")
		requireInvalid(t, res[5].Err, ReasonInvalidArgumentRange, "body")
		requireInvalid(t, res[6].Err, ReasonMessageTooLarge, "body")
		require.Equal(t, TagState{Available: 1}, b.state("q", "default"), "only the valid message was stored")

		_, err = b.s.Send(b.ctx, "q", nil)
		requireInvalid(t, err, ReasonBatchTooLarge, "entries")
		_, err = b.s.Send(b.ctx, "q", make([]OutMessage, 101))
		requireInvalid(t, err, ReasonBatchTooLarge, "entries")

		for _, max := range []int{0, 101, -1} {
			_, err = b.s.Receive(b.ctx, "q", "", ReceiveOptions{MaxMessages: max})
			requireInvalid(t, err, ReasonInvalidArgumentRange, "max_messages")
		}
		_, err = b.s.Receive(b.ctx, "q", "", ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(21)})
		requireInvalid(t, err, ReasonInvalidArgumentRange, "wait_seconds")
		_, err = b.s.Receive(b.ctx, "q", "", ReceiveOptions{MaxMessages: 1, VisibilitySeconds: i32(43201)})
		requireInvalid(t, err, ReasonInvalidArgumentRange, "visibility_seconds")
		_, err = b.s.Receive(b.ctx, "q", "nope", ReceiveOptions{MaxMessages: 1})
		requireReason(t, err, ReasonTagNotFound)
		_, err = b.s.Receive(b.ctx, "nope", "", ReceiveOptions{MaxMessages: 1})
		requireReason(t, err, ReasonQueueNotFound)
		require.Equal(t, TagState{Available: 1}, b.state("q", "default"), "refused receives received nothing")

		got := b.receive("q", "", 1)
		errs, err := b.s.ChangeVisibility(b.ctx, "q", []VisibilityChange{{ReceiptHandle: got[0].ReceiptHandle, VisibilitySeconds: 43201}})
		require.NoError(t, err)
		requireInvalid(t, errs[0], ReasonInvalidArgumentRange, "visibility_seconds")
		_, err = b.s.Peek(b.ctx, "q", []string{"not-an-id"})
		requireInvalid(t, err, ReasonInvalidArgumentRange, "message_ids")
		_, _, err = b.s.ListQueues(b.ctx, "", 1001, "")
		requireInvalid(t, err, ReasonInvalidArgumentRange, "page_size")

		// AWS.SQS. is the SQS endpoint's: refused but on its sends.
		sqsAttr := []OutMessage{{Body: []byte("x"), Attributes: map[string]Attribute{"AWS.SQS.DataTypes": {String: "n=Number"}}}}
		res, err = b.s.Send(b.ctx, "q", sqsAttr)
		require.NoError(t, err)
		requireInvalid(t, res[0].Err, ReasonReservedAttribute, "attributes[AWS.SQS.DataTypes]")
		res, err = b.s.Send(WithSQSAttributes(b.ctx), "q", sqsAttr)
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	})
}
