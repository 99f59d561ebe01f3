package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags"
)

func isNil(err error) bool { return errors.Is(err, redis.Nil) }

// Peek reads messages by id without receiving them; ids not found are
// left out.
func (s *Store) Peek(ctx context.Context, queue string, ids []string) ([]tags.Message, error) {
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if len(ids) == 0 || len(ids) > tags.MaxBatchEntries {
		return nil, tags.Invalid(tags.ReasonBatchTooLarge, "message_ids", "peek takes 1-%d message ids, got %d", tags.MaxBatchEntries, len(ids))
	}
	byPart := map[string][]string{} // partition queue -> stream ids
	var order []string
	for i, id := range ids {
		sub, sid, ok := locate(queue, id)
		if _, _, idOK := parseID(sid); !ok || !idOK {
			return nil, tags.Invalid(tags.ReasonInvalidArgumentRange, "message_ids", "message_ids[%d] %q is not a message id", i, tags.Echo(id))
		}
		if _, seen := byPart[sub]; !seen {
			order = append(order, sub)
		}
		byPart[sub] = append(byPart[sub], sid)
	}
	var out []tags.Message
	for _, sub := range order {
		msgs, err := s.peek(ctx, sub, byPart[sub])
		if err != nil {
			if sub != queue && tags.ReasonOf(err) == tags.ReasonQueueNotFound {
				continue // no such partition: no such messages
			}
			return nil, err
		}
		out = append(out, withUserIDs(sub, msgs)...)
	}
	return out, nil
}

// peek is Peek on one queue or partition queue, by stream ids.
func (s *Store) peek(ctx context.Context, queue string, ids []string) ([]tags.Message, error) {
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
		return nil, tags.QueueNotFound(queue)
	}
	s.learnQueueKind(ctx, queue)
	prio := s.isPriorityQueue(queue)
	var out []tags.Message
	for _, c := range cmds {
		for _, xm := range c.Val() {
			fields := make([]any, 0, 2*len(xm.Values))
			for f, v := range xm.Values {
				fields = append(fields, f, v)
			}
			m := decodeEntry(xm.ID, fields)
			m.Priority = shownPriority(m.Priority, prio)
			out = append(out, m)
		}
	}
	return out, nil
}

// PeekNext reads the next messages available to a tag ("" = the default
// tag) without receiving them: no receive count, cursor or deadline changes.
func (s *Store) PeekNext(ctx context.Context, queue, tag string, max int) ([]tags.Message, error) {
	msgs, _, err := s.PeekPage(ctx, queue, tag, max, "")
	return msgs, err
}

// PeekPage is PeekNext by pages: from is "" for the first page, else the
// next of the page before, which is "" when no page follows. Positions
// are opaque to callers (the server wraps them in signed page tokens);
// one names a part of what a receive would return (see peek.lua) and a
// place in it. Pages follow what is available as it is when each is read:
// a listing, not a snapshot.
func (s *Store) PeekPage(ctx context.Context, queue, tag string, max int, from string) (msgs []tags.Message, next string, err error) {
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, "", e
	}
	if max < 1 || max > tags.MaxBatchEntries {
		return nil, "", tags.Invalid(tags.ReasonInvalidArgumentRange, "max_messages", "max_messages must be between 1 and %d, got %d",
			tags.MaxBatchEntries, max)
	}
	if tag != "" {
		if e := tags.CheckName("tag", "tag", tag); e != nil {
			return nil, "", e
		}
	}
	if tag, err = s.resolveTag(ctx, queue, tag); err != nil {
		return nil, "", err
	}
	n, err := s.partitions(ctx, queue)
	if err != nil {
		return nil, "", err
	}
	if n > 1 {
		return s.peekParts(ctx, queue, tag, n, max, from)
	}
	return s.peekPage(ctx, queue, tag, max, from)
}

// peekPage is PeekPage on one queue or partition queue, its tag resolved.
func (s *Store) peekPage(ctx context.Context, queue, tag string, max int, from string) (msgs []tags.Message, next string, err error) {
	k := s.qkeys(queue)
	tk := k.tag(tag)
	part, where := "v", ""
	if from != "" {
		if part, where, err = peekPosition(from); err != nil {
			return nil, "", err
		}
	}
	res, err := scriptPeek.Run(ctx, s.rdb, []string{k.meta, k.stream, tk.state, tk.visible, tk.parked, tk.last, tk.batches},
		tag, max, scanLimit, part, where).Slice()
	if err != nil {
		return nil, "", mapErr(err, queue, tag)
	}
	if len(res) != 3 {
		return nil, "", rediserr.StorageError(fmt.Errorf("peek: a reply of %d values", len(res)))
	}
	nextPart, _ := res[1].(string)
	nextWhere, _ := res[2].(string)
	if nextPart != "" {
		next = nextPart + nextWhere
	}
	msgs = decodeScriptMessages(res[0], tag)
	s.learnQueueKind(ctx, queue)
	prio := s.isPriorityQueue(queue)
	for i := range msgs {
		msgs[i].Priority = shownPriority(msgs[i].Priority, prio)
	}
	return msgs, next, nil
}

// peekPosition parses a PeekPage position: "v<offset>", "p<offset>" or
// "h<offset>" (into due redeliveries, due early-read delayed messages, or
// a priority queue's held messages), "s<stream id>"
// (stream entries past it) or "s" (past the tag's cursor).
func peekPosition(pos string) (part, where string, err error) {
	bad := tags.Invalid(tags.ReasonInvalidArgumentRange, "page_token", "page_token is not one tagq issued for this listing")
	part, where = pos[:1], pos[1:]
	switch part {
	case "v", "p", "h":
		if n, err := strconv.Atoi(where); err != nil || n < 0 || strconv.Itoa(n) != where {
			return "", "", bad
		}
	case "s":
		if _, _, ok := parseID(where); where != "" && !ok {
			return "", "", bad
		}
	default:
		return "", "", bad
	}
	return part, where, nil
}
