package server

import (
	"context"
	"time"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

type queueService struct {
	tagqv1.UnimplementedQueueServiceServer
	store tags.Storage
	auth  *authn // nil: authentication off
}

func (s *queueService) CreateQueue(ctx context.Context, req *tagqv1.CreateQueueRequest) (*tagqv1.CreateQueueResponse, error) {
	q := req.GetQueue()
	if q == nil {
		return nil, missing("queue")
	}
	cfg := tags.QueueConfig{
		Name:                     q.GetName(),
		DelaySeconds:             q.DelaySeconds,
		VisibilityTimeoutSeconds: q.VisibilityTimeoutSeconds,
		ReceiveWaitSeconds:       q.ReceiveWaitSeconds,
		MessageRetentionSeconds:  q.MessageRetentionSeconds,
		MaxMessageBytes:          q.MaxMessageBytes,
		DeadLetterQueue:          q.GetDeadLetterQueue(),
		TopicQueue:               q.GetTopicQueue(),
		PriorityQueue:            q.GetPriorityQueue(),
		RetainAckedMessages:      q.GetRetainAckedMessages(),
		UserAttributes:           q.GetUserAttributes(),
		DefaultTagName:           q.GetDefaultTagName(),
		NoDefaultTag:             req.GetNoDefaultTag(),
		RedrivePolicy:            fromPolicy(q.GetRedrivePolicy()),
		RetryPolicy:              fromRetryPolicy(q.GetRetryPolicy()),
		MaxRetainedMessages:      q.MaxRetainedMessages,
		MaxRetainedBytes:         q.MaxRetainedBytes,
		Overflow:                 tags.Overflow(q.GetOverflowPolicy()),

		ContentBasedDeduplication: q.GetContentBasedDeduplication(),
		WriteQuotaPerSecond:       q.WriteQuotaPerSecond,
		ReadQuotaPerSecond:        q.ReadQuotaPerSecond,
		Partitions:                q.Partitions,
	}
	created, err := s.store.CreateQueue(ctx, cfg)
	if err != nil {
		if e, ok := tags.AsError(err); ok && e.Field == "default_tag_name" && req.GetNoDefaultTag() {
			return nil, err // the conflict is between the two: name the request's field
		}
		return nil, withField(err, "queue.")
	}
	// Return the stored queue with its state, as GetQueue would.
	full, err := s.store.GetQueue(ctx, created.Name)
	if err != nil {
		return nil, err
	}
	return &tagqv1.CreateQueueResponse{Queue: toQueue(full)}, nil
}

func (s *queueService) GetQueue(ctx context.Context, req *tagqv1.GetQueueRequest) (*tagqv1.GetQueueResponse, error) {
	q, err := s.store.GetQueue(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return &tagqv1.GetQueueResponse{Queue: toQueue(q)}, nil
}

// The lists page tokens are bound to (tags.Storage.PageToken): a token works
// only with the parameters of the listing that issued it.
func queueList(prefix string) string { return "queues?prefix=" + prefix }
func tagList(queue string) string    { return "queues/" + queue + "/tags" }

// Defaults a field named in an update mask takes when the request leaves it unset.
var updateDefaults = map[string]int32{
	"delay_seconds":              0,
	"visibility_timeout_seconds": tags.DefaultVisibilityTimeout,
	"receive_wait_seconds":       0,
	"message_retention_seconds":  tags.DefaultRetention,
	"max_message_bytes":          tags.DefaultMaxMessageBytes,
	"write_quota_per_second":     0,
	"read_quota_per_second":      0,
}

var immutableQueueFields = map[string]bool{"name": true, "dead_letter_queue": true, "topic_queue": true,
	"priority_queue": true, "default_tag_name": true, "create_time": true, "update_time": true, "state": true, "source_queues": true,
	"tags": true, "partitions": true}

func (s *queueService) UpdateQueue(ctx context.Context, req *tagqv1.UpdateQueueRequest) (*tagqv1.UpdateQueueResponse, error) {
	q := req.GetQueue()
	if q == nil {
		return nil, missing("queue")
	}
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		return nil, fieldError(tags.ReasonInvalidArgumentRange, "update_mask", "update_mask names no field to update")
	}
	var u tags.QueueUpdate
	orDefault := func(path string, v *int32) *int32 {
		if v != nil {
			return v
		}
		d := updateDefaults[path]
		return &d
	}
	for _, p := range paths {
		switch p {
		case "delay_seconds":
			u.DelaySeconds = orDefault(p, q.DelaySeconds)
		case "visibility_timeout_seconds":
			u.VisibilityTimeoutSeconds = orDefault(p, q.VisibilityTimeoutSeconds)
		case "receive_wait_seconds":
			u.ReceiveWaitSeconds = orDefault(p, q.ReceiveWaitSeconds)
		case "message_retention_seconds":
			u.MessageRetentionSeconds = orDefault(p, q.MessageRetentionSeconds)
		case "max_message_bytes":
			u.MaxMessageBytes = orDefault(p, q.MaxMessageBytes)
		case "retain_acked_messages":
			v := q.GetRetainAckedMessages()
			u.RetainAckedMessages = &v
		case "content_based_deduplication":
			v := q.GetContentBasedDeduplication()
			u.ContentBasedDeduplication = &v
		case "user_attributes":
			u.SetUserAttributes, u.UserAttributes = true, q.GetUserAttributes()
		case "redrive_policy":
			u.SetRedrivePolicy, u.RedrivePolicy = true, fromPolicy(q.GetRedrivePolicy())
		case "retry_policy":
			u.SetRetryPolicy, u.RetryPolicy = true, fromRetryPolicy(q.GetRetryPolicy())
		case "write_quota_per_second":
			u.WriteQuotaPerSecond = orDefault(p, q.WriteQuotaPerSecond)
		case "read_quota_per_second":
			u.ReadQuotaPerSecond = orDefault(p, q.ReadQuotaPerSecond)
		case "max_retained_messages":
			u.MaxRetainedMessages = zeroIfUnset(q.MaxRetainedMessages)
		case "max_retained_bytes":
			u.MaxRetainedBytes = zeroIfUnset(q.MaxRetainedBytes)
		case "overflow_policy":
			o := tags.Overflow(q.GetOverflowPolicy())
			if o == tags.OverflowUnspecified {
				o = tags.OverflowRejectNew
			}
			u.Overflow = &o
		default:
			if immutableQueueFields[p] {
				return nil, fieldError(tags.ReasonImmutableField, "update_mask", "queue field %q cannot be changed", echo(p))
			}
			return nil, fieldError(tags.ReasonInvalidArgumentRange, "update_mask", "%q is not a queue field", echo(p))
		}
	}
	updated, err := s.store.UpdateQueue(ctx, q.GetName(), u)
	if err != nil {
		return nil, withField(err, "queue.")
	}
	return &tagqv1.UpdateQueueResponse{Queue: toQueue(updated)}, nil
}

func (s *queueService) DeleteQueue(ctx context.Context, req *tagqv1.DeleteQueueRequest) (*tagqv1.DeleteQueueResponse, error) {
	if err := s.store.DeleteQueue(ctx, req.GetName(), req.GetForce()); err != nil {
		return nil, err
	}
	return &tagqv1.DeleteQueueResponse{}, nil
}

func (s *queueService) PurgeQueue(ctx context.Context, req *tagqv1.PurgeQueueRequest) (*tagqv1.PurgeQueueResponse, error) {
	n, err := s.store.PurgeQueue(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return &tagqv1.PurgeQueueResponse{PurgedMessages: n}, nil
}

func (s *queueService) CreateTag(ctx context.Context, req *tagqv1.CreateTagRequest) (*tagqv1.CreateTagResponse, error) {
	if req.GetTag() == nil {
		return nil, missing("tag")
	}
	t, err := s.store.CreateTag(ctx, req.GetQueue(), fromTag(req.GetTag()))
	if err != nil {
		if e, ok := tags.AsError(err); ok && e.Field == "queue" {
			return nil, err
		}
		return nil, withField(err, "tag.")
	}
	return &tagqv1.CreateTagResponse{Tag: toTag(t)}, nil
}

func (s *queueService) GetTag(ctx context.Context, req *tagqv1.GetTagRequest) (*tagqv1.GetTagResponse, error) {
	t, err := s.store.GetTag(ctx, req.GetQueue(), req.GetName())
	if err != nil {
		return nil, err
	}
	return &tagqv1.GetTagResponse{Tag: toTag(t)}, nil
}

func (s *queueService) ListTags(ctx context.Context, req *tagqv1.ListTagsRequest) (*tagqv1.ListTagsResponse, error) {
	list := tagList(req.GetQueue())
	after, err := s.store.PageAfter(list, req.GetPageToken())
	if err != nil {
		return nil, err
	}
	ts, next, err := s.store.ListTags(ctx, req.GetQueue(), int(req.GetPageSize()), after)
	if err != nil {
		return nil, err
	}
	out := &tagqv1.ListTagsResponse{NextPageToken: s.store.PageToken(list, next)}
	for _, t := range ts {
		out.Tags = append(out.Tags, toTag(t))
	}
	return out, nil
}

func (s *queueService) DeleteTag(ctx context.Context, req *tagqv1.DeleteTagRequest) (*tagqv1.DeleteTagResponse, error) {
	if err := s.store.DeleteTag(ctx, req.GetQueue(), req.GetName()); err != nil {
		return nil, err
	}
	return &tagqv1.DeleteTagResponse{}, nil
}

// SeekTag moves a tag's cursor (S22). The time is checked here (a
// Timestamp out of its range has no time); the rest by the store.
func (s *queueService) SeekTag(ctx context.Context, req *tagqv1.SeekTagRequest) (*tagqv1.SeekTagResponse, error) {
	var to tags.SeekTarget
	switch t := req.GetTarget().(type) {
	case *tagqv1.SeekTagRequest_Time:
		if err := t.Time.CheckValid(); err != nil {
			return nil, fieldError(tags.ReasonInvalidArgumentRange, "time", "time is not a valid timestamp: %v", err)
		}
		to.Time = t.Time.AsTime()
		if to.Time.IsZero() { // 0001-01-01: before every message, as the epoch
			to.Time = time.Unix(0, 0)
		}
	case *tagqv1.SeekTagRequest_MessageId:
		to.MessageID = t.MessageId
		if to.MessageID == "" {
			return nil, fieldError(tags.ReasonInvalidArgumentRange, "message_id", "message_id is empty")
		}
	}
	t, err := s.store.SeekTag(ctx, req.GetQueue(), req.GetName(), to)
	if err != nil {
		return nil, err
	}
	return &tagqv1.SeekTagResponse{Tag: toTag(t)}, nil
}

// zeroIfUnset is a cap named in an update mask: unset removes it (0).
func zeroIfUnset(v *int64) *int64 {
	if v == nil {
		return new(int64)
	}
	return v
}
