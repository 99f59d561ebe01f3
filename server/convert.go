package server

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func i32p(v int32) *int32 { return &v }

func toQueue(q *tags.Queue) *tagqv1.Queue {
	out := &tagqv1.Queue{
		Name:                     q.Name,
		DelaySeconds:             i32p(q.DelaySeconds),
		VisibilityTimeoutSeconds: i32p(q.VisibilityTimeoutSeconds),
		ReceiveWaitSeconds:       i32p(q.ReceiveWaitSeconds),
		MessageRetentionSeconds:  i32p(q.MessageRetentionSeconds),
		MaxMessageBytes:          i32p(q.MaxMessageBytes),
		DeadLetterQueue:          q.DeadLetterQueue,
		TopicQueue:               q.TopicQueue,
		PriorityQueue:            q.PriorityQueue,
		RetainAckedMessages:      q.RetainAckedMessages,
		UserAttributes:           q.UserAttributes,
		DefaultTagName:           q.DefaultTagName,
		CreateTime:               ts(q.CreateTime),
		UpdateTime:               ts(q.UpdateTime),
		SourceQueues:             q.SourceQueues,
		MaxRetainedMessages:      &q.MaxRetainedMessages,
		MaxRetainedBytes:         &q.MaxRetainedBytes,
		OverflowPolicy:           tagqv1.OverflowPolicy(q.Overflow),
		WriteQuotaPerSecond:      i32p(q.WriteQuotaPerSecond),
		ReadQuotaPerSecond:       i32p(q.ReadQuotaPerSecond),
		Partitions:               i32p(max(q.Partitions, 1)),
		State: &tagqv1.QueueState{RetainedMessages: q.RetainedMessages, TagCount: int32(q.TagCount),
			RetainedBytes: q.RetainedBytes, DroppedTotal: q.DroppedTotal, DeduplicatedTotal: q.DeduplicatedTotal},

		ContentBasedDeduplication: q.ContentBasedDeduplication,
	}
	if p := q.RedrivePolicy; p != nil {
		out.RedrivePolicy = &tagqv1.RedrivePolicy{DeadLetterQueue: p.DeadLetterQueue, MaxReceiveCount: p.MaxReceiveCount}
	}
	if p := q.RetryPolicy; p != nil {
		out.RetryPolicy = &tagqv1.RetryPolicy{MinBackoffSeconds: p.MinBackoffSeconds, MaxBackoffSeconds: p.MaxBackoffSeconds}
	}
	if q.DefaultTag != nil {
		out.State.DefaultTag = toTagState(*q.DefaultTag)
	}
	return out
}

func fromRetryPolicy(p *tagqv1.RetryPolicy) *tags.RetryPolicy {
	if p == nil {
		return nil
	}
	return &tags.RetryPolicy{MinBackoffSeconds: p.GetMinBackoffSeconds(), MaxBackoffSeconds: p.GetMaxBackoffSeconds()}
}

func fromPolicy(p *tagqv1.RedrivePolicy) *tags.RedrivePolicy {
	if p == nil {
		return nil
	}
	return &tags.RedrivePolicy{DeadLetterQueue: p.GetDeadLetterQueue(), MaxReceiveCount: p.GetMaxReceiveCount()}
}

func toTagState(s tags.TagState) *tagqv1.TagState {
	return &tagqv1.TagState{
		Available:                 s.Available,
		InFlight:                  s.InFlight,
		Delayed:                   s.Delayed,
		ReceivedTotal:             s.ReceivedTotal,
		DeletedTotal:              s.DeletedTotal,
		DeadTotal:                 s.DeadTotal,
		ExpiredTotal:              s.ExpiredTotal,
		OldestAvailableAgeSeconds: int64(s.OldestAvailableAge / time.Second),
	}
}

func toTag(t *tags.Tag) *tagqv1.Tag {
	out := &tagqv1.Tag{
		Name:                     t.Name,
		VisibilityTimeoutSeconds: t.VisibilityTimeoutSeconds,
		UserAttributes:           t.UserAttributes,
		CreateTime:               ts(t.CreateTime),
		State:                    toTagState(t.State),
		ReadQuotaPerSecond:       t.ReadQuotaPerSecond,
	}
	switch t.Start.Kind {
	case tags.StartOldest:
		out.StartTime = timestamppb.New(time.Unix(0, 0))
	case tags.StartAt:
		out.StartTime = timestamppb.New(t.Start.At)
	}
	if f := t.Filter; f != nil {
		pf := &tagqv1.TagFilter{Operator: tagqv1.TagFilter_OPERATOR_AND}
		if f.Or {
			pf.Operator = tagqv1.TagFilter_OPERATOR_OR
		}
		for _, c := range f.Conditions {
			pf.Conditions = append(pf.Conditions, &tagqv1.AttributeCondition{Name: c.Name, StringValue: c.Value})
		}
		out.Filter = pf
	}
	return out
}

func fromTag(t *tagqv1.Tag) tags.TagConfig {
	cfg := tags.TagConfig{
		Name:                     t.GetName(),
		VisibilityTimeoutSeconds: t.VisibilityTimeoutSeconds,
		UserAttributes:           t.GetUserAttributes(),
		ReadQuotaPerSecond:       t.ReadQuotaPerSecond,
	}
	if st := t.GetStartTime(); st != nil {
		if st.GetSeconds() == 0 && st.GetNanos() == 0 {
			cfg.Start = tags.Start{Kind: tags.StartOldest}
		} else {
			cfg.Start = tags.Start{Kind: tags.StartAt, At: st.AsTime()}
		}
	}
	if f := t.GetFilter(); f != nil {
		tf := &tags.Filter{Or: f.GetOperator() == tagqv1.TagFilter_OPERATOR_OR, Conditions: []tags.Condition{}}
		for _, c := range f.GetConditions() {
			tf.Conditions = append(tf.Conditions, tags.Condition{Name: c.GetName(), Value: c.StringValue})
		}
		cfg.Filter = tf
	}
	return cfg
}

func fromAttrs(m map[string]*tagqv1.MessageAttribute) map[string]tags.Attribute {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]tags.Attribute, len(m))
	for k, a := range m {
		switch v := a.GetValue().(type) {
		case *tagqv1.MessageAttribute_BinaryValue:
			b := v.BinaryValue
			if b == nil {
				b = []byte{} // set, and empty: not MissingValue
			}
			out[k] = tags.Attribute{Binary: true, Bytes: b}
		case *tagqv1.MessageAttribute_StringValue:
			out[k] = tags.Attribute{String: v.StringValue}
		default:
			out[k] = tags.MissingValue // Send refuses it, naming the attribute
		}
	}
	return out
}

func toAttrs(m map[string]tags.Attribute) map[string]*tagqv1.MessageAttribute {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*tagqv1.MessageAttribute, len(m))
	for k, a := range m {
		if a.Binary {
			out[k] = &tagqv1.MessageAttribute{Value: &tagqv1.MessageAttribute_BinaryValue{BinaryValue: a.Bytes}}
		} else {
			out[k] = &tagqv1.MessageAttribute{Value: &tagqv1.MessageAttribute_StringValue{StringValue: a.String}}
		}
	}
	return out
}

func toMessage(m tags.Message) *tagqv1.Message {
	out := &tagqv1.Message{
		MessageId:        m.ID,
		Body:             m.Body,
		Attributes:       toAttrs(m.Attributes),
		SendTime:         ts(m.SendTime),
		ReceiptHandle:    m.ReceiptHandle,
		Tag:              m.Tag,
		ReceiveCount:     int32(m.ReceiveCount),
		FirstReceiveTime: ts(m.FirstReceiveTime),
		MoveCount:        int32(m.MoveCount),
		Topic:            m.Topic,
		Priority:         m.Priority,
	}
	if d := m.DeadLetter; d != nil {
		out.DeadLetter = &tagqv1.DeadLetter{
			SourceQueueName:      d.SourceQueue,
			SourceTag:            d.SourceTag,
			DeadTimestamp:        ts(d.DeadTime),
			OriginalMessageId:    d.OriginalMessageID,
			OriginalReceiveCount: int32(d.OriginalReceiveCount),
			Reason:               d.Reason,
			Description:          d.Description,
		}
	}
	return out
}

func toMessages(ms []tags.Message) []*tagqv1.Message {
	out := make([]*tagqv1.Message, len(ms))
	for i, m := range ms {
		out[i] = toMessage(m)
	}
	return out
}

var moveStates = map[string]tagqv1.MessageMoveTask_State{
	tags.MoveRunning:   tagqv1.MessageMoveTask_STATE_RUNNING,
	tags.MoveCompleted: tagqv1.MessageMoveTask_STATE_COMPLETED,
	tags.MoveCancelled: tagqv1.MessageMoveTask_STATE_CANCELLED,
	tags.MoveFailed:    tagqv1.MessageMoveTask_STATE_FAILED,
}

func toMoveTask(t *tags.MoveTask) *tagqv1.MessageMoveTask {
	return &tagqv1.MessageMoveTask{
		TaskId:               t.ID,
		DeadLetterQueue:      t.DeadLetterQueue,
		SourceQueue:          t.SourceQueue,
		SourceTag:            t.SourceTag,
		MaxMessagesPerSecond: t.MaxPerSecond,
		State:                moveStates[t.State],
		MovedMessages:        t.Moved,
		FailedMessages:       t.Failed,
		RemainingMessages:    t.Remaining(),
		FailureReason:        t.FailureReason,
		CreateTime:           ts(t.CreateTime),
		UpdateTime:           ts(t.UpdateTime),
	}
}
