package redisstore

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/tagq/tagq/tags"
)

// storedTag is a tag's configuration as kept in the queue's tags hash.
type storedTag struct {
	Start  storedStart       `json:"start"`
	Filter *storedFilter     `json:"filter,omitempty"`
	Vis    *int32            `json:"vis,omitempty"`
	UA     map[string]string `json:"ua,omitempty"`
	RQ     *int32            `json:"rq,omitempty"` // read quota override (n's rq)
}

type storedStart struct {
	Kind tags.StartKind `json:"k"`
	AtMs int64          `json:"at,omitempty"`
}

// storedFilter is the filter JSON the Lua scripts read (lib.lua admits).
type storedFilter struct {
	Or         int               `json:"o"`
	Conditions []storedCondition `json:"c"`
}

type storedCondition struct {
	Name  string  `json:"n"`
	Value *string `json:"v,omitempty"`
}

func toStoredFilter(f *tags.Filter) *storedFilter {
	if f == nil {
		return nil
	}
	sf := &storedFilter{}
	if f.Or {
		sf.Or = 1
	}
	for _, c := range f.Conditions {
		sf.Conditions = append(sf.Conditions, storedCondition{Name: c.Name, Value: c.Value})
	}
	return sf
}

func (sf *storedFilter) filter() *tags.Filter {
	if sf == nil {
		return nil
	}
	f := &tags.Filter{Or: sf.Or == 1}
	for _, c := range sf.Conditions {
		f.Conditions = append(f.Conditions, tags.Condition{Name: c.Name, Value: c.Value})
	}
	return f
}

func (st storedTag) config(name string) tags.TagConfig {
	c := tags.TagConfig{Name: name, Start: tags.Start{Kind: st.Start.Kind}, Filter: st.Filter.filter(),
		VisibilityTimeoutSeconds: st.Vis, UserAttributes: st.UA, ReadQuotaPerSecond: st.RQ}
	if st.Start.Kind == tags.StartAt {
		c.Start.At = time.UnixMilli(st.Start.AtMs)
	}
	return c
}

// CreateTag adds an independent reader to a queue.
func (s *Store) CreateTag(ctx context.Context, queue string, cfg tags.TagConfig) (*tags.Tag, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	if e := tags.CheckTagConfig(queue, cfg); e != nil {
		return nil, e
	}
	st := storedTag{Start: storedStart{Kind: cfg.Start.Kind}, Filter: toStoredFilter(cfg.Filter),
		Vis: cfg.VisibilityTimeoutSeconds, UA: cfg.UserAttributes, RQ: cfg.ReadQuotaPerSecond}
	if cfg.Start.Kind == tags.StartAt {
		ms := cfg.Start.At.UnixMilli()
		if ms < 1 { // the epoch or before: every retained message
			st.Start = storedStart{Kind: tags.StartOldest}
		} else {
			st.Start.AtMs = ms
		}
	}
	visMs := int64(-1)
	if cfg.VisibilityTimeoutSeconds != nil {
		visMs = int64(*cfg.VisibilityTimeoutSeconds) * 1000
	}
	readQuota := int32(-1) // the queue's
	if cfg.ReadQuotaPerSecond != nil {
		readQuota = *cfg.ReadQuotaPerSecond
	}
	fjson := ""
	if st.Filter != nil {
		b, _ := json.Marshal(st.Filter)
		fjson = string(b)
	}
	cfgJSON, _ := json.Marshal(st)
	n, err := s.partitions(ctx, queue)
	if err != nil {
		return nil, err
	}
	if n > 1 && readQuota > 0 {
		readQuota = (readQuota + int32(n) - 1) / int32(n) // each partition's share (partition.go)
	}
	// Partitions 1..P-1 first: partition 0's tags are the queue's.
	parts := partNames(queue, n)
	for i := len(parts) - 1; i >= 0; i-- {
		k := s.qkeys(parts[i])
		tk := k.tag(cfg.Name)
		_, err := scriptCreateTag.Run(ctx, s.rdb,
			[]string{k.meta, k.tags, k.stream, tk.state, k.filters, tk.visible, tk.parked, tk.last, tk.batches},
			cfg.Name, cfgJSON, int(st.Start.Kind), st.Start.AtMs, fjson, visMs, tags.MaxTagsPerQueue, readQuota).Result()
		if err != nil {
			for _, made := range parts[i+1:] { // undo: no tag on some partitions only
				_ = s.deleteTag(ctx, made, cfg.Name)
			}
			return nil, mapErr(err, queue, cfg.Name)
		}
	}
	return s.GetTag(ctx, queue, cfg.Name)
}

// GetTag returns a tag with its exact counters.
func (s *Store) GetTag(ctx context.Context, queue, tag string) (*tags.Tag, error) {
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if e := tags.CheckName("name", "tag", tag); e != nil {
		return nil, e
	}
	return s.tagState(ctx, queue, tag)
}

func (s *Store) tagState(ctx context.Context, queue, tag string) (*tags.Tag, error) {
	n, err := s.partitions(ctx, queue)
	if err != nil {
		return nil, err
	}
	if n == 1 {
		c := s.tagStateCall(queue, tag)
		res, err := scriptTagState.Run(ctx, s.rdb, c.keys, c.args...).Slice()
		return parseTagState(queue, tag, res, err)
	}
	ts, err := s.tagStates(ctx, queue, n, []string{tag})
	if err != nil {
		return nil, err
	}
	if ts[0] == nil {
		return nil, tags.TagNotFound(queue, tag)
	}
	return ts[0], nil
}

// tagStates reads the state of queue's tags names, summed over its n
// partitions, in one pipelined round trip; a tag missing from partition 0
// is nil.
func (s *Store) tagStates(ctx context.Context, queue string, n int, names []string) ([]*tags.Tag, error) {
	calls := make([]scriptCall, 0, n*len(names))
	for _, tag := range names {
		for _, sub := range partNames(queue, n) {
			calls = append(calls, s.tagStateCall(sub, tag))
		}
	}
	cmds, err := s.evalPipelined(ctx, scriptTagState, calls)
	if err != nil {
		return nil, err
	}
	out := make([]*tags.Tag, len(names))
	for i, tag := range names {
		for k := range n {
			res, err := cmds[i*n+k].Slice()
			t, err := parseTagState(queue, tag, res, err)
			switch {
			case tags.ReasonOf(err) == tags.ReasonTagNotFound:
				// Not in partition 0: no such tag. Not in another: a tag
				// being created or deleted there; it holds nothing.
			case err != nil:
				return nil, err
			case k == 0:
				out[i] = t
			case out[i] != nil:
				addState(&out[i].State, t.State)
			}
		}
	}
	return out, nil
}

func (s *Store) tagStateCall(queue, tag string) scriptCall {
	k := s.qkeys(queue)
	tk := k.tag(tag)
	return scriptCall{keys: []string{k.meta, k.stream, tk.state, tk.visible, tk.parked, k.filters, k.delayed, k.tags, tk.last, tk.batches},
		args: []any{tag}}
}

// parseTagState reads the tagstate script's reply (or error).
func parseTagState(queue, tag string, res []any, err error) (*tags.Tag, error) {
	if err != nil {
		return nil, mapErr(err, queue, tag)
	}
	if len(res) != 11 {
		return nil, &tags.Error{Kind: tags.KindInternal, Reason: tags.ReasonInternal, Message: "tagstate: unexpected reply"}
	}
	v := make([]int64, 10)
	for i := range v {
		v[i], _ = res[i].(int64)
	}
	var st storedTag
	if raw, ok := res[10].(string); ok {
		_ = json.Unmarshal([]byte(raw), &st)
	}
	t := &tags.Tag{TagConfig: st.config(tag), CreateTime: time.UnixMilli(v[9])}
	t.State = tags.TagState{Available: v[0], InFlight: v[1], Delayed: v[2], ReceivedTotal: v[3],
		DeletedTotal: v[4], DeadTotal: v[5], ExpiredTotal: v[6]}
	if v[7] >= 0 && v[8] > v[7] {
		t.State.OldestAvailableAge = time.Duration(v[8]-v[7]) * time.Millisecond
	}
	return t, nil
}

// ListTags lists a queue's tags in name order with their state. pageToken
// is the previous page's next token (the last name it returned).
func (s *Store) ListTags(ctx context.Context, queue string, pageSize int, pageToken string) ([]*tags.Tag, string, error) {
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, "", e
	}
	size, e := tags.PageSize(pageSize)
	if e != nil {
		return nil, "", e
	}
	k := s.qkeys(queue)
	pipe := s.rdb.Pipeline()
	exists := pipe.Exists(ctx, k.meta)
	names := pipe.HKeys(ctx, k.tags)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, "", mapErr(err, queue, "")
	}
	if exists.Val() == 0 {
		return nil, "", tags.QueueNotFound(queue)
	}
	all := names.Val()
	sort.Strings(all)
	i := sort.SearchStrings(all, pageToken)
	if i < len(all) && all[i] == pageToken {
		i++
	}
	all = all[i:]
	next := ""
	if len(all) > size {
		all = all[:size]
		next = all[size-1]
	}
	parts, err := s.partitions(ctx, queue)
	if err != nil {
		return nil, "", err
	}
	ts, err := s.tagStates(ctx, queue, parts, all)
	if err != nil {
		return nil, "", err
	}
	out := make([]*tags.Tag, 0, len(all))
	for _, t := range ts {
		if t != nil { // nil: deleted meanwhile
			out = append(out, t)
		}
	}
	return out, next, nil
}

// DeleteTag removes a tag, its in-flight messages and its counters.
func (s *Store) DeleteTag(ctx context.Context, queue, tag string) error {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return e
	}
	if e := tags.CheckName("name", "tag", tag); e != nil {
		return e
	}
	n, err := s.partitions(ctx, queue)
	if err != nil {
		return err
	}
	// Partition 0 first: a tag is the queue's while partition 0 has it.
	for _, sub := range partNames(queue, n) {
		if err := s.deleteTag(ctx, sub, tag); err != nil {
			if sub != queue && tags.ReasonOf(err) == tags.ReasonTagNotFound {
				continue // a partition a failed CreateTag did not reach
			}
			return mapErr(err, queue, tag)
		}
	}
	return nil
}

// deleteTag removes tag from one partition queue (or a queue).
func (s *Store) deleteTag(ctx context.Context, sub, tag string) error {
	k := s.qkeys(sub)
	tk := k.tag(tag)
	err := scriptDeleteTag.Run(ctx, s.rdb,
		[]string{k.meta, k.tags, k.stream, tk.state, tk.visible, tk.parked, k.filters, tk.last, tk.batches}, tag).Err()
	return mapErr(err, queueOf(sub), tag)
}
