package tags

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

func isNil(err error) bool { return errors.Is(err, redis.Nil) }

// Peek reads messages by id without receiving them; ids not found are
// left out.
func (s *Store) Peek(ctx context.Context, queue string, ids []string) ([]Message, error) {
	if e := checkName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if len(ids) == 0 || len(ids) > MaxBatchEntries {
		return nil, invalid(ReasonBatchTooLarge, "message_ids", "peek takes 1-%d message ids, got %d", MaxBatchEntries, len(ids))
	}
	for i, id := range ids {
		if _, _, ok := parseID(id); !ok {
			return nil, invalid(ReasonInvalidArgumentRange, "message_ids", "message_ids[%d] %q is not a message id", i, echo(id))
		}
	}
	k := s.qkeys(queue)
	pipe := s.rdb.Pipeline()
	exists := pipe.Exists(ctx, k.meta)
	cmds := make([]*redis.XMessageSliceCmd, 0, len(ids))
	for _, id := range ids {
		cmds = append(cmds, pipe.XRange(ctx, k.stream, id, id))
	}
	if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
		return nil, mapErr(err, queue, "")
	}
	if exists.Val() == 0 {
		return nil, queueNotFound(queue)
	}
	var out []Message
	for _, c := range cmds {
		for _, xm := range c.Val() {
			fields := make([]any, 0, 2*len(xm.Values))
			for f, v := range xm.Values {
				fields = append(fields, f, v)
			}
			out = append(out, decodeEntry(xm.ID, fields))
		}
	}
	return out, nil
}

// PeekNext reads the next messages available to a tag ("" = the default
// tag) without receiving them: no receive count, cursor or deadline changes.
func (s *Store) PeekNext(ctx context.Context, queue, tag string, max int) ([]Message, error) {
	if e := checkName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if max < 1 || max > MaxBatchEntries {
		return nil, invalid(ReasonInvalidArgumentRange, "max_messages", "max_messages must be between 1 and %d, got %d",
			MaxBatchEntries, max)
	}
	if tag != "" {
		if e := checkName("tag", "tag", tag); e != nil {
			return nil, e
		}
	}
	tag, err := s.resolveTag(ctx, queue, tag)
	if err != nil {
		return nil, err
	}
	k := s.qkeys(queue)
	tk := k.tag(tag)
	res, err := scriptPeek.Run(ctx, s.rdb, []string{k.meta, k.stream, tk.state, tk.visible, tk.parked, tk.last, tk.batches},
		tag, max, scanLimit).Result()
	if err != nil {
		return nil, mapErr(err, queue, tag)
	}
	return decodeScriptMessages(res, tag), nil
}
