package redisstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

func requireInvalid(t *testing.T, err error, reason, field string) {
	t.Helper()
	requireReason(t, err, reason)
	e, _ := tags.AsError(err)
	require.Equal(t, tags.KindInvalidArgument, e.Kind)
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
		_, err := b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "has space"})
		requireInvalid(t, err, tags.ReasonInvalidName, "name")
		_, err = b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: strings.Repeat("x", 81)})
		requireInvalid(t, err, tags.ReasonInvalidName, "name")
		_, err = b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "a{b}"})
		requireInvalid(t, err, tags.ReasonInvalidName, "name")
		for _, c := range []struct {
			cfg   tags.QueueConfig
			field string
		}{
			{tags.QueueConfig{Name: "q", DelaySeconds: i32(901)}, "delay_seconds"},
			{tags.QueueConfig{Name: "q", VisibilityTimeoutSeconds: i32(-1)}, "visibility_timeout_seconds"},
			{tags.QueueConfig{Name: "q", VisibilityTimeoutSeconds: i32(43201)}, "visibility_timeout_seconds"},
			{tags.QueueConfig{Name: "q", ReceiveWaitSeconds: i32(21)}, "receive_wait_seconds"},
			{tags.QueueConfig{Name: "q", MessageRetentionSeconds: i32(59)}, "message_retention_seconds"},
			{tags.QueueConfig{Name: "q", MaxMessageBytes: i32(1023)}, "max_message_bytes"},
			{tags.QueueConfig{Name: "q", DefaultTagName: "no way"}, "default_tag_name"},
		} {
			_, err := b.s.CreateQueue(b.ctx, c.cfg)
			reason := tags.ReasonInvalidArgumentRange
			if c.field == "default_tag_name" {
				reason = tags.ReasonInvalidName
			}
			requireInvalid(t, err, reason, c.field)
		}
		require.Empty(t, queueKeys(), "no queue was written")

		b.queue("q", func(c *tags.QueueConfig) { c.MaxMessageBytes = i32(1024) })
		_, err = b.s.CreateTag(b.ctx, "q", tags.TagConfig{Name: "bad name"})
		requireInvalid(t, err, tags.ReasonInvalidName, "name")
		_, err = b.s.CreateTag(b.ctx, "q", tags.TagConfig{Name: "t", Filter: &tags.Filter{}})
		requireInvalid(t, err, tags.ReasonInvalidFilter, "filter.conditions")
		_, err = b.s.CreateTag(b.ctx, "nope", tags.TagConfig{Name: "t"})
		requireReason(t, err, tags.ReasonQueueNotFound)
		_, err = b.s.CreateTag(b.ctx, "q", tags.TagConfig{Name: "default"})
		requireReason(t, err, tags.ReasonTagAlreadyExists)

		res, err := b.s.Send(b.ctx, "q", []tags.OutMessage{
			{Body: make([]byte, 1025)},
			{Body: []byte("ok")},
			{Body: []byte("x"), Attributes: map[string]tags.Attribute{"DLQ.sourceQueue": {String: "forged"}}},
			{Body: []byte("x"), Attributes: map[string]tags.Attribute{"bad name": {String: "v"}}},
			{Body: []byte("x"), DelaySeconds: i32(901)},
			{},
			{Body: make([]byte, 1000), Attributes: map[string]tags.Attribute{"big": {String: strings.Repeat("v", 30)}}},
		})
		require.NoError(t, err)
		requireInvalid(t, res[0].Err, tags.ReasonMessageTooLarge, "body")
		require.NoError(t, res[1].Err)
		requireInvalid(t, res[2].Err, tags.ReasonReservedAttribute, "attributes[DLQ.sourceQueue]")
		requireInvalid(t, res[3].Err, tags.ReasonInvalidAttribute, "attributes[bad name]")
		requireInvalid(t, res[4].Err, tags.ReasonInvalidArgumentRange, "delay_seconds")
		requireInvalid(t, res[5].Err, tags.ReasonInvalidArgumentRange, "body")
		requireInvalid(t, res[6].Err, tags.ReasonMessageTooLarge, "body")
		require.Equal(t, tags.TagState{Available: 1}, b.state("q", "default"), "only the valid message was stored")

		_, err = b.s.Send(b.ctx, "q", nil)
		requireInvalid(t, err, tags.ReasonBatchTooLarge, "entries")
		_, err = b.s.Send(b.ctx, "q", make([]tags.OutMessage, 101))
		requireInvalid(t, err, tags.ReasonBatchTooLarge, "entries")

		for _, max := range []int{0, 101, -1} {
			_, err = b.s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: max})
			requireInvalid(t, err, tags.ReasonInvalidArgumentRange, "max_messages")
		}
		_, err = b.s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(21)})
		requireInvalid(t, err, tags.ReasonInvalidArgumentRange, "wait_seconds")
		_, err = b.s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, VisibilitySeconds: i32(43201)})
		requireInvalid(t, err, tags.ReasonInvalidArgumentRange, "visibility_seconds")
		_, err = b.s.Receive(b.ctx, "q", "nope", tags.ReceiveOptions{MaxMessages: 1})
		requireReason(t, err, tags.ReasonTagNotFound)
		_, err = b.s.Receive(b.ctx, "nope", "", tags.ReceiveOptions{MaxMessages: 1})
		requireReason(t, err, tags.ReasonQueueNotFound)
		require.Equal(t, tags.TagState{Available: 1}, b.state("q", "default"), "refused receives received nothing")

		got := b.receive("q", "", 1)
		errs, err := b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: got[0].ReceiptHandle, VisibilitySeconds: 43201}})
		require.NoError(t, err)
		requireInvalid(t, errs[0], tags.ReasonInvalidArgumentRange, "visibility_seconds")
		_, err = b.s.Peek(b.ctx, "q", []string{"not-an-id"})
		requireInvalid(t, err, tags.ReasonInvalidArgumentRange, "message_ids")
		_, _, err = b.s.ListQueues(b.ctx, "", 1001, "")
		requireInvalid(t, err, tags.ReasonInvalidArgumentRange, "page_size")

		// AWS.SQS. is the SQS endpoint's: refused but on its sends.
		sqsAttr := []tags.OutMessage{{Body: []byte("x"), Attributes: map[string]tags.Attribute{"AWS.SQS.DataTypes": {String: "n=Number"}}}}
		res, err = b.s.Send(b.ctx, "q", sqsAttr)
		require.NoError(t, err)
		requireInvalid(t, res[0].Err, tags.ReasonReservedAttribute, "attributes[AWS.SQS.DataTypes]")
		res, err = b.s.Send(tags.WithSQSAttributes(b.ctx), "q", sqsAttr)
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	})
}
