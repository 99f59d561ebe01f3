package server

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// maxSortedQueues bounds the queues a ListQueues ordered by anything but
// the name reads (every matching queue's state, each page).
const maxSortedQueues = 10000

// listConcurrency bounds the tag listings one ListQueues runs at once.
const listConcurrency = 8

// queueOrder is a ListQueues order_by: a key and a direction.
type queueOrder struct {
	key  string
	desc bool
}

// queueKeys are the order_by keys beside "name": each queue's value, given
// its tags. Available and the oldest available age are the largest of its
// tags' (the tag furthest behind: a sum would count a message once per
// tag); in flight and dead-lettered add up over its tags.
var queueKeys = map[string]func(q *tags.Queue, ts []*tags.Tag) int64{
	"messages": func(q *tags.Queue, _ []*tags.Tag) int64 { return q.RetainedMessages },
	"tags":     func(q *tags.Queue, _ []*tags.Tag) int64 { return int64(q.TagCount) },
	"available": func(_ *tags.Queue, ts []*tags.Tag) int64 {
		return overTags(ts, larger, func(s tags.TagState) int64 { return s.Available })
	},
	"oldest_available_age": func(_ *tags.Queue, ts []*tags.Tag) int64 {
		return overTags(ts, larger, func(s tags.TagState) int64 { return int64(s.OldestAvailableAge) })
	},
	"in_flight": func(_ *tags.Queue, ts []*tags.Tag) int64 {
		return overTags(ts, plus, func(s tags.TagState) int64 { return s.InFlight })
	},
	"dead_total": func(_ *tags.Queue, ts []*tags.Tag) int64 {
		return overTags(ts, plus, func(s tags.TagState) int64 { return s.DeadTotal })
	},
}

func larger(a, b int64) int64 { return max(a, b) }
func plus(a, b int64) int64   { return a + b }

func overTags(ts []*tags.Tag, join func(a, b int64) int64, of func(tags.TagState) int64) int64 {
	var v int64
	for _, t := range ts {
		v = join(v, of(t.State))
	}
	return v
}

func parseQueueOrder(s string) (queueOrder, error) {
	f := strings.Fields(s)
	o := queueOrder{key: "name"}
	if len(f) > 0 {
		o.key = f[0]
	}
	_, known := queueKeys[o.key]
	switch {
	case len(f) > 2, len(f) == 2 && f[1] != "desc" && f[1] != "asc", o.key != "name" && !known:
		return o, fieldError(tags.ReasonInvalidArgumentRange, "order_by",
			"order_by %q is not a key (name, messages, tags, available, oldest_available_age, in_flight, dead_total) with an optional \" desc\"", tags.Clip(s, tags.MaxEcho))
	}
	o.desc = len(f) == 2 && f[1] == "desc"
	return o, nil
}

func (o queueOrder) String() string {
	if o.desc {
		return o.key + " desc"
	}
	return o.key
}

// ListQueues lists every queue to an admin (or with authentication off),
// and to any other principal the queues it holds a permission on (any
// level but NONE, by name or prefix, or as their creator). The page tokens
// of a principal's listing are bound to it. With QUEUE_VIEW_TAGS each queue
// carries its tags (to a principal whose level on the queue lets it read
// them: GET_QUEUE_INFO, as ListTags needs).
//
// By name (the default order) a page reads only its own queues, and the
// total only the index's names. Any other order reads every matching
// queue's state and tags (at most maxSortedQueues) and pages by offset.
func (s *queueService) ListQueues(ctx context.Context, req *tagqv1.ListQueuesRequest) (*tagqv1.ListQueuesResponse, error) {
	prefix, contains := req.GetPrefix(), req.GetNameContains()
	if contains != "" && !tags.ValidName(contains) {
		return nil, fieldError(tags.ReasonInvalidName, "name_contains", "name_contains %q must be 1-80 characters of A-Z a-z 0-9 _ -", tags.Clip(contains, tags.MaxEcho))
	}
	if req.GetSkip() < 0 {
		return nil, fieldError(tags.ReasonInvalidArgumentRange, "skip", "skip must be 0 or more, got %d", req.GetSkip())
	}
	view := req.GetView()
	if _, ok := tagqv1.QueueView_name[int32(view)]; !ok {
		return nil, fieldError(tags.ReasonInvalidArgumentRange, "view", "view %d is not a QueueView", view)
	}
	order, err := parseQueueOrder(req.GetOrderBy())
	if err != nil {
		return nil, err
	}
	size := int(req.GetPageSize())
	if size < 0 || size > tags.MaxPageSize {
		return nil, fieldError(tags.ReasonInvalidArgumentRange, "page_size", "page_size must be between 0 and %d, got %d", tags.MaxPageSize, size)
	}
	if size == 0 {
		size = tags.DefaultPageSize
	}

	list := queueList(prefix)
	if contains != "" {
		list += "&contains=" + contains
	}
	if order.String() != "name" {
		list += "&order=" + order.String()
	}
	seen := func(string) bool { return true }     // the queues the caller may list
	readTags := func(string) bool { return true } // and those whose tags it may read
	if p := callerOf(ctx); p != nil && !p.Admin && s.auth != nil {
		snap, err := s.auth.acc.Current(ctx)
		if err != nil {
			return nil, err
		}
		seen = func(q string) bool {
			perm, _, _ := snap.Effective(p, q)
			return perm != access.None
		}
		readTags = func(q string) bool {
			perm, _, _ := snap.Effective(p, q)
			return perm.Allows(access.ActInfo)
		}
		list += "&principal=" + p.Name
	}
	keep := func(q string) bool { return strings.Contains(q, contains) && seen(q) }

	out := &tagqv1.ListQueuesResponse{}
	var page []*tags.Queue
	var pageTags [][]*tags.Tag // with page, when read
	if order.String() == "name" {
		total, err := s.matching(ctx, prefix, keep, nil)
		if err != nil {
			return nil, err
		}
		out.TotalSize = int32(total)
		after, err := s.store.PageAfter(list, req.GetPageToken())
		if err != nil {
			return nil, err
		}
		skip := req.GetSkip()
		skipping := func(q string) bool {
			if !keep(q) {
				return false
			}
			if skip > 0 {
				skip--
				return false
			}
			return true
		}
		var next string
		for {
			page, next, err = s.store.ListQueuesWhere(ctx, prefix, size, after, skipping)
			if err != nil {
				return nil, err
			}
			// Names looked at while skipping admit nothing: go on past them.
			if skip == 0 || next == "" {
				break
			}
			after = next
		}
		out.NextPageToken = s.store.PageToken(list, next)
	} else {
		var names []string
		total, err := s.matching(ctx, prefix, keep, &names)
		if err != nil {
			return nil, err
		}
		out.TotalSize = int32(total)
		if total > maxSortedQueues {
			return nil, fieldError(tags.ReasonInvalidArgumentRange, "order_by",
				"order_by %q reads every matching queue: %d match, at most %d may; narrow them with prefix or name_contains",
				order.String(), total, maxSortedQueues)
		}
		offset := 0
		if tok, err := s.store.PageAfter(list, req.GetPageToken()); err != nil {
			return nil, err
		} else if tok != "" {
			if offset, err = strconv.Atoi(tok); err != nil || offset < 0 {
				return nil, fieldError(tags.ReasonInvalidArgumentRange, "page_token", "page_token is not one tagq issued for this list")
			}
		}
		all, allTags, err := s.sortedQueues(ctx, prefix, names, order)
		if err != nil {
			return nil, err
		}
		start := min(offset+int(req.GetSkip()), len(all))
		end := min(start+size, len(all))
		page = all[start:end]
		if allTags != nil {
			pageTags = allTags[start:end]
		}
		if end < len(all) {
			out.NextPageToken = s.store.PageToken(list, strconv.Itoa(end))
		}
	}
	if view == tagqv1.QueueView_QUEUE_VIEW_TAGS && pageTags == nil {
		if page, pageTags, err = s.withTags(ctx, page); err != nil {
			return nil, err
		}
	}
	for i, q := range page {
		pq := toQueue(q)
		if view == tagqv1.QueueView_QUEUE_VIEW_TAGS && readTags(q.Name) {
			pq.Tags = make([]*tagqv1.Tag, 0, len(pageTags[i]))
			for _, t := range pageTags[i] {
				pq.Tags = append(pq.Tags, toTag(t))
			}
		}
		out.Queues = append(out.Queues, pq)
	}
	return out, nil
}

// matching counts the queues with prefix that keep admits, reading only
// the index's names, and appends their names to names when it is given.
func (s *queueService) matching(ctx context.Context, prefix string, keep func(string) bool, names *[]string) (int, error) {
	n, after := 0, ""
	for {
		// keep answers false: the store reads no queue, only names.
		_, next, err := s.store.ListQueuesWhere(ctx, prefix, tags.MaxPageSize, after, func(q string) bool {
			if keep(q) {
				n++
				if names != nil {
					*names = append(*names, q)
				}
			}
			return false
		})
		if err != nil {
			return 0, err
		}
		if next == "" {
			return n, nil
		}
		after = next
	}
}

// sortedQueues reads the named queues (and their tags, when the order needs
// them) and sorts them by order, ties by name. Queues deleted meanwhile
// are left out.
func (s *queueService) sortedQueues(ctx context.Context, prefix string, names []string, order queueOrder) ([]*tags.Queue, [][]*tags.Tag, error) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var qs []*tags.Queue
	for after := ""; ; {
		page, next, err := s.store.ListQueuesWhere(ctx, prefix, tags.MaxPageSize, after, func(q string) bool { return want[q] })
		if err != nil {
			return nil, nil, err
		}
		qs = append(qs, page...)
		if next == "" {
			break
		}
		after = next
	}
	var ts [][]*tags.Tag
	key := queueKeys[order.key]
	if key != nil {
		var err error
		if qs, ts, err = s.withTags(ctx, qs); err != nil {
			return nil, nil, err
		}
	}
	idx := make([]int, len(qs))
	vals := make([]int64, len(qs))
	for i := range qs {
		idx[i] = i
		if key != nil {
			vals[i] = key(qs[i], ts[i])
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		c := cmp.Compare(vals[a], vals[b])
		if key == nil {
			c = strings.Compare(qs[a].Name, qs[b].Name)
		}
		if order.desc {
			c = -c
		}
		if c == 0 {
			c = strings.Compare(qs[a].Name, qs[b].Name)
		}
		return c
	})
	sq := make([]*tags.Queue, len(qs))
	var st [][]*tags.Tag
	if ts != nil {
		st = make([][]*tags.Tag, len(qs))
	}
	for i, j := range idx {
		sq[i] = qs[j]
		if ts != nil {
			st[i] = ts[j]
		}
	}
	return sq, st, nil
}

// withTags reads each queue's tags (all of them: at most
// tags.MaxTagsPerQueue), listConcurrency queues at a time. A queue deleted
// meanwhile is left out.
func (s *queueService) withTags(ctx context.Context, qs []*tags.Queue) ([]*tags.Queue, [][]*tags.Tag, error) {
	ts := make([][]*tags.Tag, len(qs))
	errs := make([]error, len(qs))
	sem := make(chan struct{}, listConcurrency)
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ts[i], _, errs[i] = s.store.ListTags(ctx, q.Name, tags.MaxTagsPerQueue, "")
		}()
	}
	wg.Wait()
	var outQ []*tags.Queue
	var outT [][]*tags.Tag
	for i, q := range qs {
		if tags.ReasonOf(errs[i]) == tags.ReasonQueueNotFound {
			continue
		}
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		outQ = append(outQ, q)
		outT = append(outT, ts[i])
	}
	return outQ, outT, nil
}
