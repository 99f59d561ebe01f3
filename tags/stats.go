package tags

import (
	"context"
	"sort"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// QueueStats is what the metrics exporter reads of one queue: its backlogs
// and every tag's state (the counters GetTag returns).
type QueueStats struct {
	Name string
	// Messages is the number of entries the queue's stream retains
	// (messages some tag may still need, and finished ones the janitor has
	// not trimmed yet).
	Messages int64
	// Outbox is the number of dead letters on their way to the DLQ.
	Outbox int64
	// MovesRunning and MovesRemaining describe the running move tasks of a
	// DLQ (zero for other queues): how many, and how many dead letters
	// they still have to move.
	MovesRunning, MovesRemaining int64
	// Deduplicated counts the sends answered as duplicates (Queue.DeduplicatedTotal).
	Deduplicated int64
	Tags         []*Tag
}

// statsBatch is how many queues one pair of pipelined round trips reads.
const statsBatch = 200

// Stats reads queues in name order, each with its tags' state, until maxTags
// tags have been read; truncated reports that queues were left out. It
// costs two pipelined round trips per 200 queues (on a cluster, go-redis
// splits each pipeline by node), none per tag.
func (s *Store) Stats(ctx context.Context, maxTags int) (out []QueueStats, truncated bool, err error) {
	start, tags := "-", 0
	for {
		names, err := s.rdb.ZRangeByLex(ctx, s.indexKey(), &redis.ZRangeBy{Min: start, Max: "+", Count: statsBatch}).Result()
		if err != nil {
			return nil, false, mapErr(err, "", "")
		}
		batch, err := s.statsOf(ctx, names)
		if err != nil {
			return nil, false, err
		}
		for _, q := range batch {
			if tags+len(q.Tags) > maxTags {
				return out, true, nil
			}
			tags += len(q.Tags)
			out = append(out, q)
		}
		if len(names) < statsBatch {
			return out, false, nil
		}
		start = "(" + names[len(names)-1]
	}
}

// statsOf reads the named queues: their lengths, tag names and moves in
// one round trip, then every tag's state in another. Queues deleted
// meanwhile are left out.
func (s *Store) statsOf(ctx context.Context, names []string) ([]QueueStats, error) {
	type reads struct {
		meta             *redis.SliceCmd // ct (set on every queue), ddn
		messages, outbox *redis.IntCmd
		tags             *redis.StringSliceCmd
		moves            *redis.StringSliceCmd
	}
	rs := make([]reads, len(names))
	pipe := s.rdb.Pipeline()
	for i, q := range names {
		k := s.qkeys(q)
		rs[i] = reads{meta: pipe.HMGet(ctx, k.meta, "ct", "ddn"), messages: pipe.XLen(ctx, k.stream), outbox: pipe.XLen(ctx, k.outbox),
			tags: pipe.HKeys(ctx, k.tags), moves: pipe.HVals(ctx, k.moves)}
	}
	if len(names) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			return nil, mapErr(err, "", "")
		}
	}
	out := make([]QueueStats, 0, len(names))
	var calls []scriptCall
	type ref struct{ queue, tag int }
	var refs []ref
	for i, q := range names {
		meta := rs[i].meta.Val()
		if len(meta) != 2 || meta[0] == nil {
			continue
		}
		ddn, _ := meta[1].(string)
		st := QueueStats{Name: q, Messages: rs[i].messages.Val(), Outbox: rs[i].outbox.Val()}
		st.Deduplicated, _ = strconv.ParseInt(ddn, 10, 64)
		for _, raw := range rs[i].moves.Val() {
			t, err := decodeTask(q, raw)
			if err == nil && t.State == MoveRunning {
				st.MovesRunning++
				st.MovesRemaining += t.Remaining()
			}
		}
		tagNames := rs[i].tags.Val()
		sort.Strings(tagNames)
		for _, t := range tagNames {
			calls = append(calls, s.tagStateCall(q, t))
			refs = append(refs, ref{len(out), len(st.Tags)})
			st.Tags = append(st.Tags, nil)
		}
		out = append(out, st)
	}
	cmds, err := s.evalPipelined(ctx, scriptTagState, calls)
	if err != nil {
		return nil, err
	}
	for i, r := range refs {
		q := &out[r.queue]
		res, err := cmds[i].Slice()
		t, err := parseTagState(q.Name, calls[i].args[0].(string), res, err)
		if err != nil && ReasonOf(err) != ReasonTagNotFound && ReasonOf(err) != ReasonQueueNotFound {
			return nil, err
		}
		q.Tags[r.tag] = t // nil when deleted meanwhile
	}
	for i := range out {
		live := out[i].Tags[:0]
		for _, t := range out[i].Tags {
			if t != nil {
				live = append(live, t)
			}
		}
		out[i].Tags = live
	}
	return out, nil
}
