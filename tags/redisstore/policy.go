package redisstore

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/tagq/tagq/tags"
)

// Redrive policies (tags' policy.go has the rules): the engine checks
// the dead-letter queue's side of them, and keeps the set of a DLQ's
// sources (<prefix>:{DLQ}:src), so it cannot be deleted while in use.

// checkPolicyTarget checks a policy for source queue name, which is (or
// will be) a DLQ when isDLQ and keeps messages for retention seconds.
func (s *Store) checkPolicyTarget(ctx context.Context, field, name string, isDLQ, topic bool, retention int32, p *tags.RedrivePolicy) error {
	if p.DeadLetterQueue == name {
		return &tags.Error{Kind: tags.KindInvalidArgument, Reason: tags.ReasonRedriveCycle, Field: field + ".dead_letter_queue",
			Message: fmt.Sprintf("queue %q cannot be its own dead-letter queue", name)}
	}
	if isDLQ {
		return &tags.Error{Kind: tags.KindFailedPrecondition, Reason: tags.ReasonRedriveCycle, Field: field,
			Message: fmt.Sprintf("queue %q is a dead-letter queue and cannot have a redrive policy", name)}
	}
	m, err := s.rdb.HMGet(ctx, s.qkeys(p.DeadLetterQueue).meta, "dlq", "ret", "topic").Result()
	if err != nil {
		return mapErr(err, p.DeadLetterQueue, "")
	}
	if m[0] == nil {
		e := tags.QueueNotFound(p.DeadLetterQueue)
		e.Field = field + ".dead_letter_queue"
		return e
	}
	if m[0] != "1" {
		return &tags.Error{Kind: tags.KindFailedPrecondition, Reason: tags.ReasonNotADeadLetterQueue, Field: field + ".dead_letter_queue",
			Message:  fmt.Sprintf("queue %q is not a dead-letter queue (create it with dead_letter_queue set)", p.DeadLetterQueue),
			Metadata: map[string]string{"queue": p.DeadLetterQueue}}
	}
	if dtopic := m[2] == "1"; dtopic != topic {
		// Dead letters keep their topic, and moved back they keep its order
		// (S13): as SQS pairs FIFO queues with FIFO dead-letter queues.
		msg := fmt.Sprintf("queue %q is a topic queue; its dead-letter queue %q must be one too", name, p.DeadLetterQueue)
		if !topic {
			msg = fmt.Sprintf("dead-letter queue %q is a topic queue; only topic queues may use it (%q is not one)", p.DeadLetterQueue, name)
		}
		return &tags.Error{Kind: tags.KindFailedPrecondition, Reason: tags.ReasonTopicQueueMismatch, Field: field + ".dead_letter_queue",
			Message: msg, Metadata: map[string]string{"queue": p.DeadLetterQueue}}
	}
	if dret, _ := strconv.Atoi(fmt.Sprint(m[1])); int32(dret) < retention {
		return &tags.Error{Kind: tags.KindFailedPrecondition, Reason: tags.ReasonInvalidArgumentRange, Field: field + ".dead_letter_queue",
			Message: fmt.Sprintf("dead-letter queue %q keeps messages %d s, less than this queue's %d s: dead letters would expire sooner than the messages they came from",
				p.DeadLetterQueue, dret, retention)}
	}
	return nil
}

// checkDLQRetention refuses a retention for DLQ name shorter than one of its
// sources'.
func (s *Store) checkDLQRetention(ctx context.Context, name string, retention int32) error {
	sources, err := s.rdb.SMembers(ctx, s.qkeys(name).sources).Result()
	if err != nil {
		return mapErr(err, name, "")
	}
	for _, src := range sources {
		v, err := s.rdb.HGet(ctx, s.qkeys(src).meta, "ret").Int()
		if isNil(err) {
			continue
		}
		if err != nil {
			return mapErr(err, src, "")
		}
		if int32(v) > retention {
			return &tags.Error{Kind: tags.KindFailedPrecondition, Reason: tags.ReasonInvalidArgumentRange, Field: "message_retention_seconds",
				Message: fmt.Sprintf("source queue %q keeps messages %d s; its dead-letter queue must keep them at least as long", src, v)}
		}
	}
	return nil
}

func (s *Store) addSource(ctx context.Context, dlq, source string) error {
	return mapErr(s.rdb.SAdd(ctx, s.qkeys(dlq).sources, source).Err(), dlq, "")
}

func (s *Store) removeSource(ctx context.Context, dlq, source string) error {
	return mapErr(s.rdb.SRem(ctx, s.qkeys(dlq).sources, source).Err(), dlq, "")
}

func (s *Store) sourcesOf(ctx context.Context, dlq string) ([]string, error) {
	src, err := s.rdb.SMembers(ctx, s.qkeys(dlq).sources).Result()
	if err != nil {
		return nil, mapErr(err, dlq, "")
	}
	sort.Strings(src)
	return src, nil
}

func decodePolicy(m map[string]string) *tags.RedrivePolicy {
	if m["rpq"] == "" {
		return nil
	}
	n, _ := strconv.Atoi(m["rpm"])
	return &tags.RedrivePolicy{DeadLetterQueue: m["rpq"], MaxReceiveCount: int32(n)}
}

// clearPolicy removes source's redrive policy if it still names dlq.
func (s *Store) clearPolicy(ctx context.Context, source, dlq string) error {
	n, err := s.partitions(ctx, source)
	if err != nil {
		return err
	}
	for _, sub := range partNames(source, n) {
		err := scriptUpdateQueue.Run(ctx, s.rdb, []string{s.qkeys(sub).meta}, "rpq", dlq, 2, "rpq", "rpm").Err()
		if err = mapErr(err, source, ""); err != nil && tags.ReasonOf(err) != tags.ReasonQueueNotFound {
			return err
		}
	}
	return nil
}
