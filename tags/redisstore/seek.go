package redisstore

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/streamid"
)

// SeekTag moves a tag's cursor to a time or a message id (S22; see
// tags.SeekTarget and scripts/seek.lua): one script call, which ends the
// tag's deliveries and counts what follows the cursor (linear in it, as
// creating a tag from a past start is; constant to the oldest on an
// unfiltered tag). It returns the tag's state as the seek left it: the
// state script runs in the same transaction, before any receive (woken by
// the seek, here or on another process) takes what it made available.
func (s *Store) SeekTag(ctx context.Context, queue, tag string, to tags.SeekTarget) (*tags.Tag, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, e
	}
	n, err := s.partitions(ctx, queue)
	if err != nil {
		return nil, err
	}
	if n > 1 {
		return s.seekParts(ctx, queue, tag, n, to)
	}
	if sub, _, ok := locate(queue, to.MessageID); ok && sub != queue && to.Time.IsZero() {
		// A partitioned queue's message id, on a queue of one partition
		// (or none: made again, or deleted).
		if e := tags.CheckName("name", "tag", tag); e != nil {
			return nil, e
		}
		if ok, err := s.rdb.Exists(ctx, s.qkeys(queue).meta).Result(); err != nil {
			return nil, mapErr(err, queue, tag)
		} else if ok == 0 {
			return nil, tags.QueueNotFound(queue)
		}
		return nil, tags.MessageNotFound(queue, tag, to.MessageID)
	}
	return s.seekTag(ctx, queue, tag, to)
}

// seekParts is SeekTag on a queue of n partitions: a seek to a time seeks
// every partition to it; a seek to a message id seeks its partition to it
// (first: a message not retained stops it there) and the others to its
// millisecond, so that what was sent from then on is available again.
func (s *Store) seekParts(ctx context.Context, queue, tag string, n int, to tags.SeekTarget) (*tags.Tag, error) {
	parts := partNames(queue, n)
	targets := make([]tags.SeekTarget, n)
	first := 0
	if to.MessageID != "" {
		sub, sid, ok := locate(queue, to.MessageID)
		if !ok || partIndex(sub) >= n {
			sid = to.MessageID // no partition of this queue: CheckSeek refuses it, naming message_id
		}
		if e := tags.CheckSeek(queue, tag, tags.SeekTarget{Time: to.Time, MessageID: sid}); e != nil {
			return nil, e
		}
		ms, _, _ := streamid.Parse(sid)
		first = partIndex(sub)
		for k := range targets {
			targets[k] = tags.SeekTarget{Time: time.UnixMilli(int64(ms))}
		}
		targets[first] = tags.SeekTarget{MessageID: sid}
	} else {
		if e := tags.CheckSeek(queue, tag, to); e != nil {
			return nil, e
		}
		for k := range targets {
			targets[k] = to
		}
	}
	for i := range n {
		k := (first + i) % n
		if _, err := s.seekTag(ctx, parts[k], tag, targets[k]); err != nil {
			if tags.ReasonOf(err) == tags.ReasonMessageNotFound {
				return nil, tags.MessageNotFound(queue, tag, to.MessageID)
			}
			return nil, err
		}
	}
	return s.tagState(ctx, queue, tag)
}

// seekTag is SeekTag on one queue or partition queue.
func (s *Store) seekTag(ctx context.Context, queue, tag string, to tags.SeekTarget) (*tags.Tag, error) {
	if e := tags.CheckSeek(queueOf(queue), tag, to); e != nil {
		return nil, e
	}
	args := []any{tag, "time", to.Time.UnixMilli(), ""}
	if to.MessageID != "" {
		ms, seq, _ := streamid.Parse(to.MessageID) // checked
		args = []any{tag, "id", streamid.Format(ms, seq), prevID(ms, seq)}
	}
	k := s.qkeys(queue)
	tk := k.tag(tag)
	keys := []string{k.meta, k.tags, k.stream, tk.state, k.filters, tk.visible, tk.parked, tk.last, tk.batches, k.wake}
	state := s.tagStateCall(queue, tag)
	var tx durable.Tx
	seek := scriptSeek.build(s.rdb).EvalSha(ctx, &tx, keys, args...)
	after := scriptTagState.build(s.rdb).EvalSha(ctx, &tx, state.keys, state.args...)
	s.execSendTx(ctx, queue, tx.Cmds())
	err := seek.Err()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Redis lost its scripts (a restart): nothing ran; once more, as
		// EVAL, and the state after in a call of its own.
		err = scriptSeek.Run(ctx, s.rdb, keys, args...).Err()
		after = nil
	}
	if err != nil {
		if isScriptReply(err) && strings.HasPrefix(strings.TrimPrefix(err.Error(), "ERR "), tags.ReasonMessageNotFound) {
			return nil, tags.MessageNotFound(queue, tag, to.MessageID)
		}
		return nil, mapErr(err, queue, tag)
	}
	// What the tag had in flight is gone and what follows the cursor is
	// new to it: this process's hint of its next deadline is void, and a
	// receive waiting here looks at once (others, through the wake
	// stream the script wrote).
	s.forgetHint(queue, tag)
	s.waiters.WakeOne(queue, tag)
	if after == nil || after.Err() != nil {
		return s.tagState(ctx, queue, tag)
	}
	res, err := after.Slice()
	return parseTagState(queue, tag, res, err)
}

// prevID is the stream id just before ms-seq (0-0 before the first).
func prevID(ms, seq uint64) string {
	switch {
	case seq > 0:
		return streamid.Format(ms, seq-1)
	case ms > 0:
		return streamid.Format(ms-1, math.MaxUint64)
	}
	return "0-0"
}
