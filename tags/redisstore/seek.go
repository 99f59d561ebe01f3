package redisstore

import (
	"context"
	"math"
	"strings"

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
	if e := tags.CheckSeek(queue, tag, to); e != nil {
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
