package redisstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/receipt"
	"github.com/tagq/tagq/tags/wake"
)

// scanLimit bounds the stream entries one receive script call reads for a
// filtered tag (work per call, so Redis is never blocked for long).
const scanLimit = 1000

// Receive hands out up to opt.MaxMessages messages to a tag ("" = the
// queue's default tag), each with a new receipt handle, waiting up to the
// long-poll wait for the first. A waiting receive is woken by a send, a
// nack or a deadline on any tagqd sharing the Redis, and returns empty when
// the store closes.
func (s *Store) Receive(ctx context.Context, queue, tag string, opt tags.ReceiveOptions) ([]tags.Message, error) {
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if tag != "" {
		if e := tags.CheckName("tag", "tag", tag); e != nil {
			return nil, e
		}
	}
	if opt.MaxMessages < 1 || opt.MaxMessages > tags.MaxBatchEntries {
		return nil, tags.Invalid(tags.ReasonInvalidArgumentRange, "max_messages", "max_messages must be between 1 and %d, got %d",
			tags.MaxBatchEntries, opt.MaxMessages)
	}
	if e := tags.CheckRange("wait_seconds", opt.WaitSeconds, 0, tags.MaxWaitSeconds); e != nil {
		return nil, e
	}
	if e := tags.CheckRange("visibility_seconds", opt.VisibilitySeconds, 0, tags.MaxVisibilitySeconds); e != nil {
		return nil, e
	}
	// The default tag's name is cached; the receive script checks it.
	expect := ""
	if tag == "" {
		if v, ok := s.dtags.Load(queue); ok {
			tag = v.(string)
		} else {
			dtag, err := s.resolveTag(ctx, queue, "")
			if err != nil {
				return nil, err
			}
			s.dtags.Store(queue, dtag)
			tag = dtag
		}
		expect = tag
	}
	visMs := int64(-1)
	if opt.VisibilitySeconds != nil {
		visMs = int64(*opt.VisibilitySeconds) * 1000
	}
	if n, err := s.partitions(ctx, queue); err != nil {
		return nil, err
	} else if n > 1 {
		msgs, err := s.receiveParts(ctx, queue, tag, expect, n, opt, visMs)
		if errors.Is(err, errDefaultTagChanged) || tags.ReasonOf(err) == tags.ReasonQueueNotFound {
			s.dtags.Delete(queue) // made again (its partitions too), or its default tag deleted
			s.forgetPartitions(queue)
			if expect != "" && errors.Is(err, errDefaultTagChanged) {
				return s.Receive(ctx, queue, "", opt)
			}
		}
		return msgs, err
	}
	if limit, left, ok := s.spentFor(tagKey{queue, tag}); ok {
		return nil, tags.QuotaExceeded(queue, tag, tags.QuotaRead, limit, ceilMs(left))
	}
	start := time.Now()
	// A long poll on a queue this process already watches registers before
	// its first read, which then covers the wait's too: one read fewer
	// when it waits (a first long poll starts the watch only if it waits).
	var w *wake.Waiter
	defer func() {
		if w != nil {
			s.waiters.Unregister(w)
		}
	}()
	if opt.WaitSeconds != nil && *opt.WaitSeconds > 0 && s.waiters.Waiting(queue) > 0 {
		var err error
		if w, err = s.register(ctx, queue, tag); err != nil {
			return nil, err
		}
	}
	r, err := s.receiveOnce(ctx, queue, tag, expect, opt.MaxMessages, visMs)
	if errors.Is(err, errDefaultTagChanged) || tags.ReasonOf(err) == tags.ReasonQueueNotFound || tags.ReasonOf(err) == tags.ReasonTagNotFound {
		s.dtags.Delete(queue) // re-created, or its default tag deleted
		s.queueKinds.Delete(queue)
		if expect != "" && errors.Is(err, errDefaultTagChanged) {
			if w != nil {
				s.waiters.Unregister(w)
				w = nil
			}
			return s.Receive(ctx, queue, "", opt)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(r.msgs) > 0 {
		if w != nil && (len(r.msgs) == opt.MaxMessages || r.more) {
			s.waiters.WakeNext(w) // there may be more for the next waiter
		}
		return r.msgs, nil
	}
	if r.spent() {
		return nil, tags.QuotaExceeded(queue, tag, tags.QuotaRead, r.quota, r.retryMs)
	}
	wait := r.queueWait
	if opt.WaitSeconds != nil {
		wait = *opt.WaitSeconds
	}
	if wait <= 0 && !r.more {
		return r.msgs, nil
	}
	deadline := start.Add(time.Duration(wait) * time.Second)

	// Registered before the first read, which left nothing to read on:
	// wait now. Otherwise register, then read again: whatever arrives
	// after registering wakes us.
	waitNow := w != nil && !r.more
	if w == nil {
		if w, err = s.register(ctx, queue, tag); err != nil {
			return nil, err
		}
	}
	off := newOffer(queue, tag, expect, visMs) // to sends, while it waits (deliver.go)
	var got *delivery
	for {
		switch {
		case waitNow:
			waitNow = false
		case got != nil:
			r = s.received(ctx, off, got)
			got = nil
		default:
			r, err = s.receiveOnce(ctx, queue, tag, expect, opt.MaxMessages, visMs)
		}
		if errors.Is(err, errDefaultTagChanged) {
			s.dtags.Delete(queue)
			s.waiters.Unregister(w)
			w = nil
			return s.Receive(ctx, queue, "", opt)
		}
		if err != nil {
			return nil, err
		}
		if len(r.msgs) > 0 {
			if len(r.msgs) == opt.MaxMessages || r.more {
				s.waiters.WakeNext(w) // there may be more for the next waiter
			}
			return r.msgs, nil
		}
		if r.spent() {
			// Others on the tag took what the read quota allows this
			// second while this one waited.
			return nil, tags.QuotaExceeded(queue, tag, tags.QuotaRead, r.quota, r.retryMs)
		}
		if r.more {
			continue
		}
		left := time.Until(deadline)
		if left <= 0 {
			return r.msgs, nil
		}
		if r.hintMs < infMs {
			s.waiters.NoteDeadline(w, max(time.Duration(r.hintMs-r.nowMs)*time.Millisecond, time.Millisecond))
		}
		t := time.NewTimer(left)
		var why int
		got, why = s.await(ctx, w, off, opt.MaxMessages, t.C)
		t.Stop()
		switch why {
		case awaitClosed:
			return nil, nil
		case awaitDone:
			return nil, ctx.Err()
		}
		// Woken, delivered to, or at the deadline: look (once more).
	}
}

const infMs = 9007199254740991

// maxReadSteps bounds the read steps of one receive (a topic queue's
// reads happen in the script, and may all be held behind blocked topics:
// it reads on only while it has nothing to hand out).
const maxReadSteps = 20

// queueKind is what a queue's receives must know of it: a plain queue, a
// topic queue (S13) or a priority queue. Both of the latter read in zset
// mode inside the receive script, and every receive runs the script.
type queueKind uint8

const (
	kindPlain queueKind = iota
	kindTopic
	kindPriority
)

// kindOf is queue's kind as last seen (see learnQueueKind).
func (s *Store) kindOf(queue string) queueKind {
	v, _ := s.queueKinds.Load(queue)
	k, _ := v.(queueKind)
	return k
}

// readsInScript: queue is a topic or priority queue, as last seen: its
// tags read new entries inside the receive script, in zset mode.
func (s *Store) readsInScript(queue string) bool { return s.kindOf(queue) != kindPlain }

// isPriorityQueue: queue is a priority queue, as last seen.
func (s *Store) isPriorityQueue(queue string) bool { return s.kindOf(queue) == kindPriority }

// learnQueueKind reads whether queue is a topic or priority queue, once
// per process (both are fixed at creation; a receive script that finds
// the cache wrong, the queue made again, says so and it is corrected).
func (s *Store) learnQueueKind(ctx context.Context, queue string) {
	if _, ok := s.queueKinds.Load(queue); ok {
		return
	}
	v, err := s.rdb.HMGet(ctx, s.qkeys(queue).meta, "topic", "prq").Result()
	if err == nil && len(v) == 2 && v[0] != nil {
		k := kindPlain
		if v[0] == "1" {
			k = kindTopic
		} else if v[1] == "1" {
			k = kindPriority
		}
		s.queueKinds.Store(queue, k)
	}
}

// resolveTag is tag, or the queue's default tag when tag is "".
func (s *Store) resolveTag(ctx context.Context, queue, tag string) (string, error) {
	if tag != "" {
		return tag, nil
	}
	dtag, err := s.rdb.HGet(ctx, s.qkeys(queue).meta, "dtag").Result()
	if isNil(err) {
		return "", tags.QueueNotFound(queue)
	}
	if err != nil {
		return "", mapErr(err, queue, "")
	}
	if dtag == "" {
		return "", tags.NoDefaultTag(queue)
	}
	return dtag, nil
}

type receiveResult struct {
	msgs      []tags.Message
	nowMs     int64
	hintMs    int64
	more      bool
	queueWait int32
	dead      int // dead-lettered by this call: their outbox entries await the relay
	// The tag's read quota after the call: what it still takes this second
	// (-1: no quota), the quota, and ms to the next second.
	quotaLeft, quota, retryMs int64
}

// spent: the call handed out what the tag's read quota allowed, and it
// allows no more this second.
func (r receiveResult) spent() bool { return r.quota > 0 && r.quotaLeft == 0 }

// errDefaultTagChanged: the cached default tag name is out of date.
var errDefaultTagChanged = errors.New("DEFAULT_TAG_CHANGED")

func (s *Store) receiveOnce(ctx context.Context, queue, tag, expectDefault string, max int, visMs int64) (receiveResult, error) {
	// Entries the tag skips (delayed, filtered out, for another tag) leave
	// a read short: read on, within a bound on the entries read per call.
	var r receiveResult
	scanned := 0
	s.learnQueueKind(ctx, queue)
	// A tag with a read quota reads no more than the quota at a time (the
	// script has the last word: what it read beyond waits in v).
	if v, ok := s.readQuotas.Load(tagKey{queue, tag}); ok && v.(int64) > 0 && int64(max) > v.(int64) {
		max = int(v.(int64))
	}
	// A topic or priority queue's tags read inside the script (below),
	// which hands out due redeliveries first and sizes its read by what is
	// left: they come in the first read's call, not in one of their own.
	due := s.dueMaybe(queue, tag)
	if due && !s.readsInScript(queue) {
		due = false
		// Due redeliveries first, on their own: the read that follows then
		// takes only what is left, so nothing read waits unhanded.
		part, _, err := s.receiveStep(ctx, queue, tag, expectDefault, max, visMs, true, false, false)
		if err != nil {
			return receiveResult{}, err
		}
		r = part
		if len(r.msgs) >= max || r.spent() {
			r.more = false
			return s.finishReceive(ctx, queue, tag, r), nil
		}
	}
	// A quiet tag (see smallReads): the script reads new entries itself,
	// one round trip fewer, their bodies through Lua no great cost (it
	// reads at most what max_message_bytes keeps within 4 MiB at a time). A
	// topic queue's tags always do: a topic's order is the order in which
	// scripts place entries, which must be the order they were read in; a
	// priority queue's too: the script reads what is new into its lists
	// before it chooses what to hand out.
	// (Asked after the call above, which may have found the queue is one.)
	topics := s.readsInScript(queue)
	inScript := topics || s.smallReads(queue, tag)
	steps := 0
	defer func() { s.noteRead(queue, tag, len(r.msgs)) }()
	for {
		want := max - len(r.msgs)
		if r.quotaLeft > 0 && int64(want) > r.quotaLeft {
			want = int(r.quotaLeft) // what the read quota still takes
		}
		part, read, err := s.receiveStep(ctx, queue, tag, expectDefault, want, visMs, due, true, inScript)
		if err != nil {
			return receiveResult{}, err
		}
		due = false // what this call handed out with visibility 0 must not come twice
		part.msgs = append(r.msgs, part.msgs...)
		part.dead += r.dead
		r = part
		scanned += read
		if len(r.msgs) >= max || !r.more || r.spent() {
			r.more = false
			break
		}
		if topics && len(r.msgs) > 0 {
			// The script read on while what it read was held behind
			// blocked topics, as far as one call may. Another step would
			// keep what this receive has (their topics blocked, nobody
			// working on them) for a round trip more, while it holds what
			// arrives meanwhile: hand it out now; the next receive reads
			// on (r.more).
			break
		}
		if steps++; scanned >= scanLimit || steps >= maxReadSteps {
			break // r.more: the caller reads again
		}
	}
	return s.finishReceive(ctx, queue, tag, r), nil
}

// shownPriority is a message's priority as received or peeked: on a
// priority queue its own, DefaultPriority when it has none; elsewhere 0
// (a dead letter of a priority queue keeps its field pr in any DLQ).
func shownPriority(p int32, priorityQueue bool) int32 {
	if !priorityQueue {
		return 0
	}
	if p == 0 {
		return tags.DefaultPriority
	}
	return p
}

// finishReceive relays what the receive dead-lettered and signs handles.
func (s *Store) finishReceive(ctx context.Context, queue, tag string, r receiveResult) receiveResult {
	if r.dead > 0 {
		// This receive dead-lettered messages instead of handing them out
		// (S7): relay them now; the background relay retries on failure.
		if _, err := s.RelayOutbox(ctx, queue); err != nil {
			s.log.Warn("dead letters staged; relay to the dead-letter queue will retry", "queue", queue, "err", err)
		}
	}
	prio := s.isPriorityQueue(queue)
	for i := range r.msgs {
		m := &r.msgs[i]
		m.Priority = shownPriority(m.Priority, prio)
		d := m.Delivery(queue)
		m.ReceiptHandle = s.handles.Encode(receipt.Handle{Queue: queue, Tag: tag, ID: m.ID, Gen: m.ReceiveCount, FirstMs: d.FirstMs})
	}
	return r
}

// A tag is read inside the script when it is quiet: its last receive
// handed out at most smallRead messages, at least quietGap ago. A busy
// tag's receives follow each other closely, and its bodies are better
// kept out of Lua even when each receive gets few.
const (
	smallRead = 1
	quietGap  = 2 * time.Millisecond
)

type lastRead struct {
	n  int
	at time.Time
}

func (s *Store) smallReads(queue, tag string) bool {
	v, ok := s.lastReads.Load(tagKey{queue, tag})
	if !ok {
		return false
	}
	l := v.(lastRead)
	return l.n <= smallRead && time.Since(l.at) >= quietGap
}

func (s *Store) noteRead(queue, tag string, n int) {
	s.lastReads.Store(tagKey{queue, tag}, lastRead{n: n, at: time.Now()})
}

type tagKey struct{ queue, tag string }

// noteReadQuota keeps what a receive script said of the tag's read quota:
// the quota (to size reads) and, when it is spent, until when.
func (s *Store) noteReadQuota(queue, tag string, r receiveResult, asked time.Time) {
	k := tagKey{queue, tag}
	if r.quota > 0 {
		s.readQuotas.Store(k, r.quota)
	} else if _, ok := s.readQuotas.Load(k); ok {
		s.readQuotas.Delete(k)
	}
	if r.spent() {
		s.noteSpent(k, r.quota, r.retryMs, asked)
	}
}

// receiveStep is one read and one receive script call for up to max
// messages. r.more says the read was full (the stream may hold more for
// the tag); read is how many entries it read.
func (s *Store) receiveStep(ctx context.Context, queue, tag, expectDefault string, max int, visMs int64, due, read, inScript bool) (r receiveResult, n int, err error) {
	k := s.qkeys(queue)
	// New entries go into the tag's PEL here, so a crash before the script
	// leaves them pending (the janitor recovers them), never lost; their
	// bodies come straight from Redis, not through Lua.
	var fresh []newEntry
	epoch := ""
	if read && !inScript {
		var ok bool
		if fresh, epoch, ok, err = s.readNew(ctx, k, tag, max); err != nil {
			return r, 0, err
		}
		if ok && len(fresh) == 0 && !due && !s.readsInScript(queue) {
			// Nothing new, nothing due: the script would change nothing and
			// tell what the last one did (the wait as the cached hint).
			if r, ok := s.cachedEmpty(queue, tag); ok {
				return r, 0, nil
			}
		}
	}
	r, err = s.receiveScript(ctx, queue, tag, expectDefault, max, visMs, due, read && inScript, fresh, epoch)
	return r, len(fresh), err
}

// receiveScript is the receive script's call for a receiveStep: fresh and
// epoch are what readNew read (nothing when inScript: the script reads).
func (s *Store) receiveScript(ctx context.Context, queue, tag, expectDefault string, max int, visMs int64,
	due, inScript bool, fresh []newEntry, epoch string) (r receiveResult, err error) {
	keys, args := s.receiveCall(queue, tag, expectDefault, max, visMs, due, inScript, fresh, epoch)
	if len(fresh) > 0 {
		// They are read: the script must run whatever the caller does now.
		ctx = context.WithoutCancel(ctx)
	}
	asked := s.askHint(queue)
	res, err := scriptReceive.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		if strings.Contains(err.Error(), "DEFAULT_TAG_CHANGED") {
			return r, errDefaultTagChanged
		}
		if k, ok := kindNews(err); ok && !s.zsetInFlight && !s.readsInScript(queue) {
			// A topic or priority queue, news to this process: its tags
			// read in zset mode (the script changed nothing; what was read
			// is pending).
			s.queueKinds.Store(queue, k)
			return s.receiveScript(ctx, queue, tag, expectDefault, max, visMs, due, inScript, fresh, epoch)
		}
		return r, mapErr(err, queue, tag)
	}
	return s.receiveReply(queue, tag, max, res, fresh, asked)
}

// kindNews: a receive script in PEL mode refused a topic or priority
// queue (its tags read in zset mode), which is which.
func kindNews(err error) (queueKind, bool) {
	switch msg := err.Error(); {
	case strings.Contains(msg, "PRIORITY_QUEUE"):
		return kindPriority, true
	case strings.Contains(msg, "TOPIC_QUEUE"):
		return kindTopic, true
	}
	return kindPlain, false
}

// receiveCall is the receive script's keys and arguments for a receive of
// up to max messages of tag (see receiveScript).
func (s *Store) receiveCall(queue, tag, expectDefault string, max int, visMs int64,
	due, inScript bool, fresh []newEntry, epoch string) (keys []string, args []any) {
	k := s.qkeys(queue)
	tk := k.tag(tag)
	duePhase := 0
	if due {
		duePhase = 1
	}
	// PEL mode: what is handed out stays in the tag's PEL, when its
	// visibility is at most the stalled read (see receive.lua).
	mode := s.pelMaxVisibility()
	if s.zsetInFlight || s.readsInScript(queue) {
		mode = 0
	}
	args = make([]any, 0, 11+5*len(fresh))
	nnew := len(fresh)
	if inScript {
		nnew = -1
	}
	first, last := "", ""
	if len(fresh) > 0 {
		first, last = fresh[0].id, fresh[len(fresh)-1].id
	}
	args = append(args, tag, max, visMs, queue, expectDefault, duePhase, nnew, mode, epoch, first, last)
	for _, e := range fresh {
		// In PEL mode plain entries (no delay, for any tag, no attributes,
		// no topic) go unlisted: the script does nothing per plain entry.
		if mode == 0 || e.due != "" || e.only != "" || e.attrs != "" || e.topic != "" {
			args = append(args, e.id, e.due, e.only, e.attrs, e.topic)
		}
	}
	return []string{k.meta, k.stream, tk.state, tk.visible, tk.parked, k.wake, tk.last, k.outbox, tk.batches}, args
}

// pelMaxVisibility is the longest visibility (ms) a receive leaves its
// deliveries in the tag's PEL with: the stalled read, so that a PEL entry
// idle longer than that (and stalledSlack) is due or a stalled read.
func (s *Store) pelMaxVisibility() int64 {
	return max(s.stalledRead.Milliseconds(), 1)
}

// receiveReply reads the receive script's reply (res) for a call that
// asked for max messages, with fresh read before it; asked is what was
// known before the call (askHint).
func (s *Store) receiveReply(queue, tag string, max int, res []any, fresh []newEntry, asked hintAsk) (r receiveResult, err error) {
	if len(res) != 12 {
		return r, &tags.Error{Kind: tags.KindInternal, Reason: tags.ReasonInternal, Message: "receive: unexpected reply"}
	}
	r = receiveResult{nowMs: asInt64(res[0]), hintMs: asInt64(res[1]), queueWait: int32(asInt64(res[2])),
		dead: int(asInt64(res[3])), more: len(fresh) == max || asInt64(res[7]) == 1,
		quotaLeft: asInt64(res[9]), quota: asInt64(res[10]), retryMs: asInt64(res[11])}
	s.noteReadQuota(queue, tag, r, asked.at)
	s.noteHint(queue, tag, r, asked)
	s.queueWaits.Store(queue, r.queueWait)
	r.msgs = decodeScriptMessages(res[4], tag)
	visible := time.Duration(asInt64(res[6])-r.nowMs) * time.Millisecond
	for i := range r.msgs {
		r.msgs[i].VisibleFor = visible
	}
	// res[5]: the fresh entries not handed out, or (res[8] = 1) those handed out.
	listed, _ := res[5].([]any)
	handedListed := asInt64(res[8]) == 1
	var set map[string]bool
	if len(listed) > 0 {
		set = make(map[string]bool, len(listed))
		for _, v := range listed {
			id, _ := v.(string)
			set[id] = true
		}
	}
	for i := range fresh {
		if set[fresh[i].id] != handedListed {
			continue
		}
		m := decodeEntry(fresh[i].id, fresh[i].fields)
		m.Tag, m.ReceiveCount = tag, 1
		m.FirstReceiveTime = time.UnixMilli(r.nowMs)
		m.VisibleFor = visible
		r.msgs = append(r.msgs, m)
	}
	return r, nil
}

// newEntry is a stream entry a receive read: its fields, and those the
// receive script needs to place it.
type newEntry struct {
	id                      string
	fields                  []any
	due, only, attrs, topic string
}

// readNew reads up to max entries beyond tag's cursor into its PEL, and
// (in the same round trip, just before) the queue's PEL epoch for the
// receive script ("" when unknown). A missing queue, stream or group reads
// nothing and is not ok (the script then reports which is missing).
func (s *Store) readNew(ctx context.Context, k queueKeys, tag string, max int) ([]newEntry, string, bool, error) {
	stream := k.stream
	pipe := s.rdb.Pipeline()
	// HMGET, not HGET: a missing field is no error reply (go-redis looks
	// at every error reply of a pipeline with errors.As, 2 % of tagqd's CPU).
	ep := pipe.HMGet(ctx, k.meta, "pep")
	rd := pipe.Do(ctx, "XREADGROUP", "GROUP", tag, "c", "COUNT", max, "STREAMS", stream, ">")
	_, _ = pipe.Exec(ctx)
	epoch := ""
	if v, err := ep.Result(); err == nil && len(v) == 1 {
		epoch, _ = v[0].(string)
		if v[0] == nil {
			epoch = "0"
		}
	}
	res, err := rd.Result()
	if isNil(err) {
		return nil, epoch, true, nil
	}
	if isScriptReply(err) {
		return nil, epoch, false, nil
	}
	if err != nil {
		return nil, epoch, false, mapErr(err, "", tag)
	}
	var list []any
	switch v := res.(type) {
	case []any: // RESP2: [[stream, entries]]
		if len(v) > 0 {
			if st, _ := v[0].([]any); len(st) == 2 {
				list, _ = st[1].([]any)
			}
		}
	case map[any]any: // RESP3: {stream: entries}
		list, _ = v[stream].([]any)
	}
	out := make([]newEntry, 0, len(list))
	for _, item := range list {
		e, _ := item.([]any)
		if len(e) < 2 {
			continue
		}
		id, _ := e[0].(string)
		fields, _ := e[1].([]any)
		ne := newEntry{id: id, fields: fields}
		for i := 0; i+1 < len(fields); i += 2 {
			switch k, _ := fields[i].(string); k {
			case "d":
				ne.due, _ = fields[i+1].(string)
			case "only":
				ne.only, _ = fields[i+1].(string)
			case "a":
				ne.attrs, _ = fields[i+1].(string)
			case "tp":
				ne.topic, _ = fields[i+1].(string)
			}
		}
		out = append(out, ne)
	}
	return out, epoch, true, nil
}
