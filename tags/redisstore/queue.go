package redisstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/receipt"
)

func i32(v int32) *int32 { return &v }

// CreateQueue creates a queue and its default tag (reading from now on),
// or no tag at all with cfg.NoDefaultTag.
func (s *Store) CreateQueue(ctx context.Context, cfg tags.QueueConfig) (*tags.Queue, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	q, e := tags.CheckQueueConfig(cfg)
	if e != nil {
		return nil, e
	}
	if p := q.RedrivePolicy; p != nil {
		if err := s.checkPolicyTarget(ctx, "redrive_policy", q.Name, q.DeadLetterQueue, q.TopicQueue, q.MessageRetentionSeconds, p); err != nil {
			return nil, err
		}
		// The DLQ learns of its source first, so it is never deleted while
		// a source names it.
		if err := s.addSource(ctx, p.DeadLetterQueue, q.Name); err != nil {
			return nil, err
		}
	}
	// Index first: a crash after it leaves an index entry without a queue,
	// which ListQueues skips; the other order could hide a queue.
	if err := s.rdb.ZAdd(ctx, s.indexKey(), redis.Z{Member: q.Name}).Err(); err != nil {
		return nil, rediserr.StorageError(err)
	}
	k := s.qkeys(q.Name)
	tagCfg, _ := json.Marshal(storedTag{Start: storedStart{Kind: tags.StartNow}})
	args := append([]any{q.DefaultTagName, tagCfg}, encodeMeta(q)...)
	err := s.createPartitions(ctx, q, tagCfg) // partitions 1..P-1 first: partition 0 makes the queue
	var ct int64
	if err == nil {
		ct, err = scriptCreateQueue.Run(ctx, s.rdb, []string{k.meta, k.tags, k.stream, k.tag(q.DefaultTagName).state, k.sizes, k.holes}, args...).Int64()
		if err != nil && q.Partitions > 1 && !isExists(err) {
			s.dropPartitions(ctx, q.Name, int(q.Partitions))
		}
	}
	if err != nil {
		if p := q.RedrivePolicy; p != nil {
			// Undo the source entry unless the existing queue has the same policy.
			if cur, _ := s.rdb.HGet(ctx, k.meta, "rpq").Result(); cur != p.DeadLetterQueue {
				_ = s.removeSource(ctx, p.DeadLetterQueue, q.Name)
			}
		}
		return nil, mapErr(err, q.Name, "")
	}
	q.CreateTime = time.UnixMilli(ct)
	q.UpdateTime = q.CreateTime
	s.forgetPartitions(q.Name)
	if q.RedrivePolicy != nil {
		s.newWork(ctx) // a source queue to sweep
	}
	return q, nil
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// encodeMeta gives the meta hash fields of a queue's attributes.
func encodeMeta(q *tags.Queue) []any {
	ua, _ := json.Marshal(q.UserAttributes)
	fields := []any{
		"delay", q.DelaySeconds, "vis", q.VisibilityTimeoutSeconds, "wait", q.ReceiveWaitSeconds,
		"ret", q.MessageRetentionSeconds, "mmb", q.MaxMessageBytes, "dlq", boolStr(q.DeadLetterQueue),
		"topic", boolStr(q.TopicQueue), "prq", boolStr(q.PriorityQueue), "ra", boolStr(q.RetainAckedMessages), "ua", string(ua),
		"dtag", q.DefaultTagName, "cbd", boolStr(q.ContentBasedDeduplication),
	}
	fields = append(fields, capFields(&q.MaxRetainedMessages, &q.MaxRetainedBytes, &q.Overflow)...)
	// Always written (0: none): the send and receive scripts read them on
	// every call, and a field a small hash lacks costs a scan of all of it.
	fields = append(fields, "wq", q.WriteQuotaPerSecond, "rq", q.ReadQuotaPerSecond)
	if p := q.RedrivePolicy; p != nil {
		fields = append(fields, "rpq", p.DeadLetterQueue, "rpm", p.MaxReceiveCount)
	}
	fields = append(fields, retryField(q.RetryPolicy)...)
	if q.Partitions > 1 {
		fields = append(fields, "np", q.Partitions)
	}
	return shareFields(fields, int(q.Partitions), q.MaxMessageBytes)
}

func decodeMeta(name string, m map[string]string) *tags.Queue {
	unshare(m)
	n32 := func(k string) int32 { v, _ := strconv.ParseInt(m[k], 10, 32); return int32(v) }
	ms := func(k string) time.Time { v, _ := strconv.ParseInt(m[k], 10, 64); return time.UnixMilli(v) }
	q := &tags.Queue{
		Name:                     name,
		DelaySeconds:             n32("delay"),
		VisibilityTimeoutSeconds: n32("vis"),
		ReceiveWaitSeconds:       n32("wait"),
		MessageRetentionSeconds:  n32("ret"),
		MaxMessageBytes:          n32("mmb"),
		DeadLetterQueue:          m["dlq"] == "1",
		TopicQueue:               m["topic"] == "1",
		PriorityQueue:            m["prq"] == "1",
		RetainAckedMessages:      m["ra"] == "1",
		DefaultTagName:           m["dtag"],
		CreateTime:               ms("ct"),
		UpdateTime:               ms("ut"),

		ContentBasedDeduplication: m["cbd"] == "1",
		WriteQuotaPerSecond:       n32("wq"),
		ReadQuotaPerSecond:        n32("rq"),
		Partitions:                max(n32("np"), 1),
	}
	q.DeduplicatedTotal, _ = strconv.ParseInt(m["ddn"], 10, 64)
	q.RedrivePolicy = decodePolicy(m)
	q.RetryPolicy = decodeRetry(m)
	decodeCaps(q, m)
	if ua := m["ua"]; ua != "" && ua != "null" {
		_ = json.Unmarshal([]byte(ua), &q.UserAttributes)
	}
	return q
}

// GetQueue returns a queue's attributes and state.
func (s *Store) GetQueue(ctx context.Context, name string) (*tags.Queue, error) {
	if e := tags.CheckName("name", "queue", name); e != nil {
		return nil, e
	}
	return s.queueInfo(ctx, name)
}

func (s *Store) queueInfo(ctx context.Context, name string) (*tags.Queue, error) {
	qs, err := s.queueInfos(ctx, []string{name})
	if err != nil {
		return nil, err
	}
	if qs[0] == nil {
		return nil, tags.QueueNotFound(name)
	}
	return qs[0], nil
}

// queueInfos reads queues with their state in two pipelined round trips
// however many there are; a queue that does not exist is nil.
func (s *Store) queueInfos(ctx context.Context, names []string) ([]*tags.Queue, error) {
	pipe := s.rdb.Pipeline()
	metas := make([]*redis.MapStringStringCmd, len(names))
	ntags := make([]*redis.IntCmd, len(names))
	xlens := make([]*redis.IntCmd, len(names))
	sources := make([]*redis.StringSliceCmd, len(names))
	for i, n := range names {
		k := s.qkeys(n)
		metas[i] = pipe.HGetAll(ctx, k.meta)
		ntags[i] = pipe.HLen(ctx, k.tags)
		xlens[i] = pipe.XLen(ctx, k.stream)
		sources[i] = pipe.SMembers(ctx, k.sources)
	}
	if len(names) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, mapErr(err, "", "")
		}
	}
	out := make([]*tags.Queue, len(names))
	var calls []scriptCall
	var at []int
	for i, n := range names {
		if len(metas[i].Val()) == 0 {
			continue
		}
		q := decodeMeta(n, metas[i].Val())
		if q.DeadLetterQueue {
			q.SourceQueues = sources[i].Val()
			sort.Strings(q.SourceQueues)
		}
		q.TagCount = int(ntags[i].Val())
		q.RetainedMessages = xlens[i].Val()
		out[i] = q
		if q.DefaultTagName == "" {
			continue // no default tag
		}
		for _, sub := range partNames(n, int(q.Partitions)) {
			calls = append(calls, s.tagStateCall(sub, q.DefaultTagName))
			at = append(at, i)
		}
	}
	if err := s.addPartitionCounts(ctx, out); err != nil {
		return nil, err
	}
	cmds, err := s.evalPipelined(ctx, scriptTagState, calls)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		if out[i] == nil {
			continue
		}
		res, err := cmds[j].Slice()
		st, err := parseTagState(names[i], out[i].DefaultTagName, res, err)
		switch {
		case err == nil:
			if out[i].DefaultTag == nil {
				out[i].DefaultTag = &tags.TagState{}
			}
			addState(out[i].DefaultTag, st.State)
		case tags.ReasonOf(err) == tags.ReasonTagNotFound:
			// The default tag was deleted; the queue has no default state.
		case tags.ReasonOf(err) == tags.ReasonQueueNotFound:
			out[i] = nil // deleted between the two round trips
		default:
			return nil, err
		}
	}
	return out, nil
}

// ListQueues lists queues in name order. pageToken is the previous page's
// next token (the last name it returned; the API hands it out signed, see
// PageToken).
func (s *Store) ListQueues(ctx context.Context, prefix string, pageSize int, pageToken string) ([]*tags.Queue, string, error) {
	return s.ListQueuesWhere(ctx, prefix, pageSize, pageToken, nil)
}

// listScanLimit bounds the names ListQueuesWhere looks at for one page:
// a filter that admits few queues among many gives short (even empty)
// pages with a next token, rather than one call that reads the whole index.
const listScanLimit = 10000

// ListQueuesWhere is ListQueues of the queues keep admits (nil: all),
// by name before anything else of them is read. A page holds fewer than
// pageSize queues, with a next token, when listScanLimit names were looked
// at first.
func (s *Store) ListQueuesWhere(ctx context.Context, prefix string, pageSize int, pageToken string, keep func(name string) bool) ([]*tags.Queue, string, error) {
	size, e := tags.PageSize(pageSize)
	if e != nil {
		return nil, "", e
	}
	if prefix != "" && !tags.ValidName(prefix) {
		return nil, "", tags.Invalid(tags.ReasonInvalidName, "prefix", "prefix %q must be characters of A-Z a-z 0-9 _ -", tags.Echo(prefix))
	}
	if pageToken != "" && !tags.ValidName(pageToken) {
		return nil, "", tags.Invalid(tags.ReasonInvalidArgumentRange, "page_token", "page token is not one tagq issued")
	}
	start := "[" + prefix
	if pageToken != "" && pageToken >= prefix {
		start = "(" + pageToken
	}
	stop := "+"
	if prefix != "" {
		stop = "[" + prefix + "\xff"
	}
	chunk := size + 1
	if keep != nil {
		chunk = max(chunk, 1000)
	}
	var names []string
	next, looked := "", 0
	for {
		batch, err := s.rdb.ZRangeByLex(ctx, s.indexKey(), &redis.ZRangeBy{Min: start, Max: stop, Count: int64(chunk)}).Result()
		if err != nil {
			return nil, "", mapErr(err, "", "")
		}
		for _, n := range batch {
			looked++
			if keep == nil || keep(n) {
				names = append(names, n)
			}
			if len(names) > size {
				break
			}
		}
		if len(names) > size {
			names = names[:size]
			next = names[size-1]
			break
		}
		if len(batch) < chunk {
			break // the end of the index
		}
		last := batch[len(batch)-1]
		if looked >= listScanLimit {
			next = last // resume after the names looked at
			break
		}
		start = "(" + last
	}
	qs, err := s.queueInfos(ctx, names)
	if err != nil {
		return nil, "", err
	}
	out := make([]*tags.Queue, 0, len(names))
	for _, q := range qs {
		if q != nil { // nil: an index entry of a queue being created or deleted
			out = append(out, q)
		}
	}
	return out, next, nil
}

// Page tokens. The engine's lists resume after the last name the previous
// page returned; the API hands that name out as an opaque page token,
// signed with the receipt-handle key (shared by every tagqd on the Redis)
// and bound to the list it pages through, so that a token tagq did not
// issue, or one of another list, is refused before anything is read.
//
// Layout before base64url: version(1) name mac(8), the MAC over a domain
// string, the list and the version and name.
// strictBase64 refuses a last character with bits set that carry nothing:
// one spelling of a token, as of a receipt handle.
var strictBase64 = base64.RawURLEncoding.Strict()

const (
	pageTokenVersion = 1
	pageTokenDomain  = "tagq page token\x00"
	maxPageTokenLen  = 2 * (1 + 80 + receipt.MACLen) // base64 of the longest token, with room
)

// PageToken is the page token of list (any string naming the list and
// its parameters, e.g. "queues?prefix=a") for a page that ended at last;
// "" when last is "" (no more pages).
func (s *Store) PageToken(list, last string) string {
	if last == "" {
		return ""
	}
	b := make([]byte, 0, 1+len(last)+receipt.MACLen)
	b = append(b, pageTokenVersion)
	b = append(b, last...)
	b = append(b, s.pageMAC(list, b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// PageAfter is the name a page token of list says the previous page ended
// at ("" for no token: the first page). A token PageToken did not make for
// list is INVALID_ARGUMENT naming page_token.
func (s *Store) PageAfter(list, token string) (string, error) {
	if token == "" {
		return "", nil
	}
	bad := tags.Invalid(tags.ReasonInvalidArgumentRange, "page_token",
		"page_token is not one tagq issued for this list; pass next_page_token of the previous page unchanged")
	if len(token) > maxPageTokenLen {
		return "", bad
	}
	b, err := strictBase64.DecodeString(token) // one spelling of a token, as of a handle
	if err != nil || strictBase64.EncodedLen(len(b)) != len(token) || len(b) < 1+1+receipt.MACLen || b[0] != pageTokenVersion {
		return "", bad
	}
	body, sum := b[:len(b)-receipt.MACLen], b[len(b)-receipt.MACLen:]
	if !s.handles.MACOK(s.pageMACInput(list, body), sum) { // any key of the ring: a rotation keeps pages going
		return "", bad
	}
	name := string(body[1:])
	if !tags.ValidName(name) {
		return "", bad
	}
	return name, nil
}

func (s *Store) pageMAC(list string, body []byte) []byte {
	return s.handles.MAC(s.pageMACInput(list, body))
}

func (s *Store) pageMACInput(list string, body []byte) []byte {
	m := make([]byte, 0, len(pageTokenDomain)+len(list)+1+len(body))
	m = append(m, pageTokenDomain...)
	m = append(m, list...)
	m = append(m, 0)
	m = append(m, body...)
	return m
}

// UpdateQueue changes the attributes set in u.
func (s *Store) UpdateQueue(ctx context.Context, name string, u tags.QueueUpdate) (*tags.Queue, error) {
	ctx = s.acked(ctx)          // S20: acknowledged once replicated
	defer s.limits.Delete(name) // sends re-read the limits (here; elsewhere sendpost.lua notices)
	if e := tags.CheckQueueUpdate(name, u); e != nil {
		return nil, e
	}
	k := s.qkeys(name)
	m, err := s.rdb.HGetAll(ctx, k.meta).Result()
	if err != nil {
		return nil, mapErr(err, name, "")
	}
	if len(m) == 0 {
		return nil, tags.QueueNotFound(name)
	}
	cur := decodeMeta(name, m)
	if e := tags.CheckUpdatedCaps(cur, u); e != nil {
		return nil, e
	}
	ret := cur.MessageRetentionSeconds
	if u.MessageRetentionSeconds != nil {
		ret = *u.MessageRetentionSeconds
		if cur.DeadLetterQueue {
			if err := s.checkDLQRetention(ctx, name, ret); err != nil {
				return nil, err
			}
		}
	}
	policy := cur.RedrivePolicy
	if u.SetRedrivePolicy {
		policy = u.RedrivePolicy
	}
	if policy != nil && (u.SetRedrivePolicy || u.MessageRetentionSeconds != nil) {
		if err := s.checkPolicyTarget(ctx, "redrive_policy", name, cur.DeadLetterQueue, cur.TopicQueue, ret, policy); err != nil {
			return nil, err
		}
	}

	var set []any
	var del []any
	setInt := func(field string, v *int32) {
		if v != nil {
			set = append(set, field, *v)
		}
	}
	setInt("delay", u.DelaySeconds)
	setInt("vis", u.VisibilityTimeoutSeconds)
	setInt("wait", u.ReceiveWaitSeconds)
	setInt("ret", u.MessageRetentionSeconds)
	setInt("mmb", u.MaxMessageBytes)
	if u.RetainAckedMessages != nil {
		set = append(set, "ra", boolStr(*u.RetainAckedMessages))
	}
	if u.ContentBasedDeduplication != nil {
		set = append(set, "cbd", boolStr(*u.ContentBasedDeduplication))
	}
	set = append(set, capFields(u.MaxRetainedMessages, u.MaxRetainedBytes, u.Overflow)...)
	setInt("wq", u.WriteQuotaPerSecond) // 0: no quota (the counters stay, unread)
	setInt("rq", u.ReadQuotaPerSecond)
	if u.SetUserAttributes {
		ua, _ := json.Marshal(u.UserAttributes)
		set = append(set, "ua", string(ua))
	}
	if u.SetRedrivePolicy {
		if p := u.RedrivePolicy; p != nil {
			if err := s.addSource(ctx, p.DeadLetterQueue, name); err != nil {
				return nil, err
			}
			set = append(set, "rpq", p.DeadLetterQueue, "rpm", p.MaxReceiveCount)
		} else {
			del = append(del, "rpq", "rpm")
		}
	}
	if u.SetRetryPolicy {
		if u.RetryPolicy != nil {
			set = append(set, retryField(u.RetryPolicy)...)
		} else {
			del = append(del, "rbo")
		}
	}
	args := append([]any{"", "", len(del)}, del...)
	// Every partition (partitions 1..P-1 first), each with its share of
	// the caps and quotas (partition.go).
	mmb := cur.MaxMessageBytes
	if u.MaxMessageBytes != nil {
		mmb = *u.MaxMessageBytes
	}
	set = shareFields(set, int(cur.Partitions), mmb)
	parts := partNames(name, int(cur.Partitions))
	for i := len(parts) - 1; i >= 0; i-- {
		if err := scriptUpdateQueue.Run(ctx, s.rdb, []string{s.qkeys(parts[i]).meta}, append(args, set...)...).Err(); err != nil {
			return nil, mapErr(err, name, "")
		}
	}
	if old := cur.RedrivePolicy; u.SetRedrivePolicy && old != nil &&
		(u.RedrivePolicy == nil || u.RedrivePolicy.DeadLetterQueue != old.DeadLetterQueue) {
		if err := s.removeSource(ctx, old.DeadLetterQueue, name); err != nil {
			return nil, err
		}
	}
	if u.SetRedrivePolicy && u.RedrivePolicy != nil {
		s.newWork(ctx) // a source queue to sweep
	}
	return s.queueInfo(ctx, name)
}

// withTags runs a script whose KEYS end with every tag's keys: it reads the
// tag list, calls run, and retries when a tag was created or deleted in
// between (the script refuses a stale list with TAGS_CHANGED).
func (s *Store) withTags(ctx context.Context, q string, run func(names []string, tagKeys []string) error) error {
	k := s.qkeys(q)
	for attempt := 0; ; attempt++ {
		names, err := s.rdb.HKeys(ctx, k.tags).Result()
		if err != nil {
			return mapErr(err, q, "")
		}
		keys := make([]string, 0, 5*len(names))
		for _, n := range names {
			tk := k.tag(n)
			keys = append(keys, tk.state, tk.visible, tk.parked, tk.last, tk.batches)
		}
		err = run(names, keys)
		if !errors.Is(err, errTagsChanged) || attempt == 10 {
			return err
		}
	}
}

// DeleteQueue removes a queue with every message, tag and counter. A
// dead-letter queue that other queues' redrive policies name is refused
// (DEAD_LETTER_QUEUE_IN_USE) unless force, which removes those policies.
func (s *Store) DeleteQueue(ctx context.Context, name string, force bool) error {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	defer s.limits.Delete(name)
	if e := tags.CheckName("name", "queue", name); e != nil {
		return e
	}
	k := s.qkeys(name)
	m, err := s.rdb.HMGet(ctx, k.meta, "dlq", "rpq").Result()
	if err != nil {
		return mapErr(err, name, "")
	}
	if m[0] == nil {
		return tags.QueueNotFound(name)
	}
	if m[0] == "1" {
		sources, err := s.sourcesOf(ctx, name)
		if err != nil {
			return err
		}
		if len(sources) > 0 && !force {
			return &tags.Error{Kind: tags.KindFailedPrecondition, Reason: tags.ReasonDeadLetterQueueInUse, Field: "force",
				Message:  fmt.Sprintf("queues %s send their dead letters to %q; delete with force to remove their redrive policies", strings.Join(sources, ", "), name),
				Metadata: map[string]string{"queue": name, "source_queues": strings.Join(sources, ",")}}
		}
		for _, src := range sources {
			if err := s.clearPolicy(ctx, src, name); err != nil {
				return err
			}
		}
	}
	// Partitions 1..P-1 first: partition 0 is the queue while it exists.
	n, err := s.partitions(ctx, name)
	if err != nil {
		return err
	}
	s.forgetPartitions(name)
	if err := s.dropPartitions(ctx, name, n); err != nil {
		return err
	}
	if err := s.removeQueue(ctx, name); err != nil {
		return err
	}
	if err := s.rdb.ZRem(ctx, s.indexKey(), name).Err(); err != nil {
		return rediserr.StorageError(err)
	}
	// A CreateQueue of the same name may have run in between: keep its
	// index entry.
	if n, err := s.rdb.Exists(ctx, k.meta).Result(); err != nil {
		return rediserr.StorageError(err)
	} else if n == 1 {
		if err := s.rdb.ZAdd(ctx, s.indexKey(), redis.Z{Member: name}).Err(); err != nil {
			return rediserr.StorageError(err)
		}
		return nil
	}
	if dlq, ok := m[1].(string); ok && dlq != "" {
		return s.removeSource(ctx, dlq, name)
	}
	return nil
}

// removeQueue removes a queue's (or a partition queue's) keys, once the
// dead letters staged in its outbox went to their DLQ: deleting the source
// must not lose them.
func (s *Store) removeQueue(ctx context.Context, name string) error {
	if _, err := s.RelayOutbox(ctx, name); err != nil {
		return err
	}
	k := s.qkeys(name)
	return s.withTags(ctx, name, func(names, tagKeys []string) error {
		keys := append([]string{k.meta, k.stream, k.tags, k.filters, k.delayed, k.wake, k.sources, k.outbox, k.dedupe, k.moves,
			k.sizes, k.holes, k.sendDedup, k.sendDedupExp, k.rates, k.ratesLast}, tagKeys...)
		return mapErr(scriptDeleteQueue.Run(ctx, s.rdb, keys, toAny(names)...).Err(), name, "")
	})
}

// PurgeQueue drops every message (attributes, tags and totals stay) and
// returns how many were dropped.
func (s *Store) PurgeQueue(ctx context.Context, name string) (int64, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	if e := tags.CheckName("name", "queue", name); e != nil {
		return 0, e
	}
	parts, err := s.partitions(ctx, name)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, sub := range partNames(name, parts) {
		k := s.qkeys(sub)
		err := s.withTags(ctx, sub, func(names, tagKeys []string) error {
			keys := append(append([]string{k.meta, k.stream, k.tags, k.filters, k.delayed}, tagKeys...), k.sizes, k.holes)
			n, err := scriptPurge.Run(ctx, s.rdb, keys, toAny(names)...).Int64()
			total += n
			return mapErr(err, name, "")
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, v := range ss {
		out[i] = v
	}
	return out
}
