package redisstore

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/tags"
)

// queueRead is a queue's figures as the engine read them, with what says
// the queue is as it was (statsOf): its create time, the messages ever
// added to it, and its admissions hash.
type queueRead struct {
	tags.QueueStats
	created, added int64
	admissions     string
	parts          int // partitions (a partitioned queue's figures are the sums: never taken as idle)
}

// idle: every tag of q has nothing available, in flight or delayed, so
// that its state changes only if a message comes (or the queue or a tag
// is made anew).
func (q *queueRead) idle() bool {
	if q.parts > 1 {
		return false
	}
	for _, t := range q.Tags {
		if st := t.State; st.Available != 0 || st.InFlight != 0 || st.Delayed != 0 {
			return false
		}
	}
	return true
}

// figures is the figures of reads.
func figures(reads []queueRead) []tags.QueueStats {
	out := make([]tags.QueueStats, len(reads))
	for i, r := range reads {
		out[i] = r.QueueStats
	}
	return out
}

// statsBatch is how many queues one pair of pipelined round trips reads.
const statsBatch = 200

// Stats reads queues in name order, each with its tags' state, until maxTags
// tags have been read; truncated reports that queues were left out. It
// costs two pipelined round trips per 200 queues (on a cluster, go-redis
// splits each pipeline by node), none per tag.
func (s *Store) Stats(ctx context.Context, maxTags int) (out []tags.QueueStats, truncated bool, err error) {
	reads, truncated, err := s.statsSince(ctx, maxTags, nil)
	return figures(reads), truncated, err
}

// statsSince is Stats, knowing the figures read before (prev, nil: none):
// an idle queue (see queueRead.idle) whose messages, admissions and
// tags are as they were is as it was, and costs none of its tags' reads.
func (s *Store) statsSince(ctx context.Context, maxTags int, prev []queueRead) (out []queueRead, truncated bool, err error) {
	was := make(map[string]*queueRead, len(prev))
	for i := range prev {
		if prev[i].idle() {
			was[prev[i].Name] = &prev[i]
		}
	}
	start, ntags := "-", 0
	for {
		names, err := s.rdb.ZRangeByLex(ctx, s.indexKey(), &redis.ZRangeBy{Min: start, Max: "+", Count: statsBatch}).Result()
		if err != nil {
			return nil, false, mapErr(err, "", "")
		}
		batch, err := s.statsOf(ctx, names, was)
		if err != nil {
			return nil, false, err
		}
		for _, q := range batch {
			if ntags+len(q.Tags) > maxTags {
				return out, true, nil
			}
			ntags += len(q.Tags)
			out = append(out, q)
		}
		if len(names) < statsBatch {
			return out, false, nil
		}
		start = "(" + names[len(names)-1]
	}
}

// statsOf reads the named queues: their lengths, tag names, moves and
// admissions in one round trip, then every tag's state in another, but for the idle
// queues of was that are as they were (the first round trip tells: the
// create time of the queue and of each tag, the messages added, the
// admissions hash). Queues deleted meanwhile are left out.
func (s *Store) statsOf(ctx context.Context, names []string, was map[string]*queueRead) ([]queueRead, error) {
	type reads struct {
		meta             *redis.SliceCmd // ct (set on every queue), ddn, added, np
		messages, outbox *redis.IntCmd
		tags             *redis.StringSliceCmd
		moves            *redis.StringSliceCmd
		admissions       *redis.MapStringStringCmd
		tagsCreated      []*redis.StringCmd // its tags' create times, when it was idle
	}
	rs := make([]reads, len(names))
	pipe := s.rdb.Pipeline()
	for i, q := range names {
		k := s.qkeys(q)
		rs[i] = reads{meta: pipe.HMGet(ctx, k.meta, "ct", "ddn", "added", "np"), messages: pipe.XLen(ctx, k.stream), outbox: pipe.XLen(ctx, k.outbox),
			tags: pipe.HKeys(ctx, k.tags), moves: pipe.HVals(ctx, k.moves), admissions: pipe.HGetAll(ctx, k.filters)}
		if old := was[q]; old != nil {
			for _, t := range old.Tags {
				rs[i].tagsCreated = append(rs[i].tagsCreated, pipe.HGet(ctx, k.tag(t.Name).state, "ct"))
			}
		}
	}
	if len(names) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			return nil, mapErr(err, "", "")
		}
	}
	out := make([]queueRead, 0, len(names))
	var calls []scriptCall
	type ref struct{ queue, tag int }
	var refs []ref
	for i, q := range names {
		meta := rs[i].meta.Val()
		if len(meta) != 4 || meta[0] == nil {
			continue
		}
		ct, _ := meta[0].(string)
		ddn, _ := meta[1].(string)
		added, _ := meta[2].(string)
		st := queueRead{QueueStats: tags.QueueStats{Name: q, Messages: rs[i].messages.Val(), Outbox: rs[i].outbox.Val()}}
		st.Deduplicated, _ = strconv.ParseInt(ddn, 10, 64)
		st.created, _ = strconv.ParseInt(ct, 10, 64)
		st.added, _ = strconv.ParseInt(added, 10, 64)
		st.parts = max(int(toInt64(meta[3])), 1)
		for _, raw := range rs[i].moves.Val() {
			t, err := decodeTask(q, raw)
			if err == nil && t.State == tags.MoveRunning {
				st.MovesRunning++
				st.MovesRemaining += t.Remaining()
			}
		}
		tagNames := rs[i].tags.Val()
		sort.Strings(tagNames)
		st.admissions = admissionsStamp(rs[i].admissions.Val())
		if old := was[q]; old != nil {
			if asItWas(old, &st, tagNames, rs[i].tagsCreated) {
				st.Tags = old.Tags
				out = append(out, st)
				continue
			}
		}
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
		if err != nil && tags.ReasonOf(err) != tags.ReasonTagNotFound && tags.ReasonOf(err) != tags.ReasonQueueNotFound {
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
	return s.addPartitionStats(ctx, out)
}

// addPartitionStats adds to each partitioned queue of out (as read from
// partition 0) its other partitions' figures: messages, outbox and
// deduplications add up, and each tag's state (partition.go).
func (s *Store) addPartitionStats(ctx context.Context, out []queueRead) ([]queueRead, error) {
	var subs []string
	for _, q := range out {
		if q.parts > 1 && partIndex(q.Name) == 0 {
			for k := 1; k < q.parts; k++ {
				subs = append(subs, partName(q.Name, k))
			}
		}
	}
	if len(subs) == 0 {
		return out, nil
	}
	parts, err := s.statsOf(ctx, subs, nil)
	if err != nil {
		return nil, err
	}
	at := make(map[string]int, len(out))
	for i := range out {
		at[out[i].Name] = i
	}
	for _, p := range parts {
		i, ok := at[queueOf(p.Name)]
		if !ok {
			continue
		}
		q := &out[i]
		q.Messages += p.Messages
		q.Outbox += p.Outbox
		q.Deduplicated += p.Deduplicated
		for _, pt := range p.Tags {
			for _, t := range q.Tags {
				if t.Name == pt.Name {
					addState(&t.State, pt.State)
				}
			}
		}
	}
	return out, nil
}

// asItWas: queue now (its tags, and their create times as read) is the
// idle queue old was: the same queue, no message added since, the same
// admissions, the same tags.
func asItWas(old, now *queueRead, tagNames []string, created []*redis.StringCmd) bool {
	if old.created != now.created || old.added != now.added || old.admissions != now.admissions ||
		len(old.Tags) != len(tagNames) || len(created) != len(tagNames) {
		return false
	}
	for j, t := range old.Tags {
		ct, err := created[j].Int64()
		if t.Name != tagNames[j] || err != nil || ct != t.CreateTime.UnixMilli() {
			return false
		}
	}
	return true
}

// admissionsStamp is a queue's fa hash (filters, admissions, moves back
// per tag) as one string.
func admissionsStamp(fa map[string]string) string {
	if len(fa) == 0 {
		return ""
	}
	keys := make([]string, 0, len(fa))
	for k := range fa {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(fa[k])
		b.WriteByte(0)
	}
	return b.String()
}
