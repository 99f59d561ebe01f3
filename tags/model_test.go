package tags

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A storage outside this package makes a delivery by setting
// FirstReceiveTime (to the ms): Delivery names it by that ms, and by 0 for
// a message the tag never received.
func TestMessageDelivery_NamesTheFirstReceive(t *testing.T) {
	m := Message{ID: "5-1", Tag: "t", ReceiveCount: 3, FirstReceiveTime: time.UnixMilli(1_700_000_000_123)}
	require.Equal(t, Delivery{Queue: "q", Tag: "t", ID: "5-1", Gen: 3, FirstMs: 1_700_000_000_123}, m.Delivery("q"))
	require.Zero(t, (&Message{ID: "5-1"}).Delivery("q").FirstMs)
}

// CheckQueueConfig resolves every default a storage stores, and refuses
// bad input naming the field, before any storage is asked.
func TestCheckQueueConfig_ResolvesDefaultsAndNamesTheField(t *testing.T) {
	q, e := CheckQueueConfig(QueueConfig{Name: "q"})
	require.Nil(t, e)
	require.Equal(t, &Queue{Name: "q", VisibilityTimeoutSeconds: DefaultVisibilityTimeout, MessageRetentionSeconds: DefaultRetention,
		MaxMessageBytes: DefaultMaxMessageBytes, DefaultTagName: DefaultTagName, Overflow: OverflowRejectNew, Partitions: 1}, q)

	q, e = CheckQueueConfig(QueueConfig{Name: "q", NoDefaultTag: true, Overflow: OverflowDropOldest})
	require.Nil(t, e)
	require.Empty(t, q.DefaultTagName)
	require.Equal(t, OverflowDropOldest, q.Overflow)

	big := int64(1) << 60
	for field, cfg := range map[string]QueueConfig{
		"name":                             {Name: "a b"},
		"visibility_timeout_seconds":       {Name: "q", VisibilityTimeoutSeconds: ptr(int32(MaxVisibilitySeconds + 1))},
		"priority_queue":                   {Name: "q", TopicQueue: true, PriorityQueue: true},
		"redrive_policy.max_receive_count": {Name: "q", RedrivePolicy: &RedrivePolicy{DeadLetterQueue: "d"}},
		"read_quota_per_second":            {Name: "q", ReadQuotaPerSecond: ptr(int32(-1))},
		"max_retained_bytes":               {Name: "q", MaxRetainedBytes: &big},
		"default_tag_name":                 {Name: "q", NoDefaultTag: true, DefaultTagName: "t"},
	} {
		_, e := CheckQueueConfig(cfg)
		require.NotNil(t, e, field)
		require.Equal(t, KindInvalidArgument, e.Kind, field)
		require.Equal(t, field, e.Field)
	}
	require.Equal(t, "max_message_bytes", CheckQueueUpdate("q", QueueUpdate{MaxMessageBytes: ptr(int32(1))}).Field)
	require.Equal(t, "filter.conditions", CheckTagConfig("q", TagConfig{Name: "t", Filter: &Filter{}}).Field)
}

// The reserved attribute prefixes, in the model any storage's send
// calls: DLQ. is tagq's alone; AWS.SQS. is the SQS endpoint's, taken only
// with a context from WithSQSAttributes; either refused naming the field.
func TestCheckMessageAttributes_ReservedPrefixes(t *testing.T) {
	ctx := context.Background()
	sqsCtx := WithSQSAttributes(ctx)
	for _, c := range []struct {
		ctx  context.Context
		name string
		ok   bool
	}{
		{ctx, "DLQ.sourceQueue", false},
		{sqsCtx, "DLQ.sourceQueue", false},
		{ctx, "AWS.SQS.DataTypes", false},
		{ctx, "AWS.SQS.", false},
		{sqsCtx, "AWS.SQS.DataTypes", true},
		{ctx, "AWS.SQSx", true},
		{ctx, "aws.sqs.DataTypes", true},
	} {
		size, e := CheckMessageAttributes(c.ctx, map[string]Attribute{c.name: {String: "v"}})
		if c.ok {
			require.Nil(t, e, c.name)
			require.Equal(t, len(c.name)+1, size)
			continue
		}
		require.NotNil(t, e, c.name)
		require.Equal(t, ReasonReservedAttribute, e.Reason, c.name)
		require.Equal(t, "attributes["+c.name+"]", e.Field)
	}
}

func ptr[T any](v T) *T { return &v }
