package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/wake"
)

// Send stores messages in one atomic step. Each message is checked first;
// the invalid ones get an error in their result and are not stored, the
// valid ones are all stored — but on a queue at a cap with
// OverflowRejectNew, where the entries from the first that does not fit
// on get QUEUE_FULL, on a queue whose write_quota_per_second is spent,
// where those beyond it get QUOTA_EXCEEDED (quota.go), and but for
// duplicates (a deduplication id seen within DeduplicationWindow), which
// store nothing and answer with the first message's id
// (SendResult.Duplicate). The error return is for the whole call (queue
// not found, backend unavailable, Redis memory near full): then nothing
// was stored.
func (s *Store) Send(ctx context.Context, queue string, msgs []tags.OutMessage) ([]tags.SendResult, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, e
	}
	n, err := s.partitions(ctx, queue)
	if err != nil {
		return nil, err
	}
	if n > 1 {
		return s.sendParts(ctx, queue, n, msgs)
	}
	return s.send(ctx, queue, msgs)
}

// send is Send to one queue or partition queue.
func (s *Store) send(ctx context.Context, queue string, msgs []tags.OutMessage) ([]tags.SendResult, error) {
	if len(msgs) == 0 || len(msgs) > tags.MaxBatchEntries {
		return nil, tags.Invalid(tags.ReasonBatchTooLarge, "entries", "a batch has 1-%d entries, got %d", tags.MaxBatchEntries, len(msgs))
	}
	if e := s.memoryFull(ctx, queue); e != nil {
		return nil, e
	}
	results := make([]tags.SendResult, len(msgs))
	// A write quota this process saw spent this second refuses the valid
	// entries without a round trip (the invalid ones get their own error).
	spentLimit, spentLeft, spentNow := s.spentFor(writeQuotaKey(queue))
	entries := make([]sendEntry, 0, len(msgs))
	sent := make([]int, 0, len(msgs))
	withIDs := false
	var lim sendLimits
	limKnown, limLoaded := false, false // the queue's send limits, read once (for the topic and priority checks)
	for i, m := range msgs {
		size, e := tags.CheckMessageAttributes(ctx, m.Attributes)
		if e == nil {
			e = tags.CheckRange("delay_seconds", m.DelaySeconds, 0, tags.MaxDelaySeconds)
		}
		if e == nil {
			e = tags.CheckDeduplicationID(m.DeduplicationID)
		}
		if e == nil {
			// Against the cached flag when known (send.lua checks again),
			// else the shape only.
			if !limLoaded {
				lim, limKnown = s.limitsOf(ctx, queue)
				limLoaded = true
			}
			tq := lim.topic
			if !limKnown {
				tq = m.Topic != ""
			}
			e = tags.CheckTopic(m.Topic, tq)
			if e == nil {
				pq := lim.priority
				if !limKnown {
					pq = m.Priority != 0
				}
				e = tags.CheckPriority(m.Priority, pq)
			}
			if e == nil && tq && m.DelaySeconds != nil && *m.DelaySeconds > 0 {
				// A per-message delay would reorder a topic (as SQS FIFO queues, refused).
				e = tags.Invalid(tags.ReasonInvalidArgumentRange, "delay_seconds",
					"a topic queue takes no per-message delay (the queue's delay_seconds applies to all)")
			}
		}
		size += len(m.Body)
		if e == nil && size == 0 {
			e = tags.Invalid(tags.ReasonInvalidArgumentRange, "body", "a message needs a body or attributes")
		}
		if e == nil && size > tags.MaxMaxMessageBytes {
			e = tags.MessageTooLarge(size, tags.MaxMaxMessageBytes)
		}
		if e == nil && spentNow {
			e = tags.QuotaExceeded(queue, "", tags.QuotaWrite, spentLimit, ceilMs(spentLeft))
		}
		if e != nil {
			results[i].Err = e
			continue
		}
		delay := int32(-1)
		if m.DelaySeconds != nil {
			delay = *m.DelaySeconds
		}
		entry := sendEntry{size: size, delay: delay, body: m.Body, attrs: encodeAttrs(m.Attributes), topic: m.Topic,
			priority: m.Priority}
		if m.DeduplicationID != nil {
			entry.dedupID, withIDs = *m.DeduplicationID, true
		}
		entries = append(entries, entry)
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return results, nil
	}
	done, over := false, false
	if !withIDs { // deduplication happens in send.lua only
		var err error
		if done, over, err = s.sendFast(ctx, queue, entries, sent, results); err != nil {
			return nil, err
		}
	}
	if !done {
		var err error
		if over, err = s.sendSlow(ctx, queue, entries, sent, results); err != nil {
			return nil, err
		}
	}
	if over {
		// OverflowDropOldest: the messages are stored; make room before
		// answering. A failure here loses nothing: the janitor trims later.
		if err := s.trimQueue(ctx, queue); err != nil {
			s.log.Warn("trimming a queue over its cap failed", "queue", queue, "err", err)
		}
	}
	return results, nil
}

// sendEntry is one checked message of a batch, as the send scripts take it.
type sendEntry struct {
	size    int   // counted against max_message_bytes
	delay   int32 // -1: the queue's default
	body    []byte
	attrs   string // attributes JSON, "" for none
	dedupID string // the sender's deduplication id, "" for none
	topic   string // "" for none
	// priority: 0 for none (a priority queue's default)
	priority int32
}

// contentDedupID is the deduplication id of a body on a queue with
// content-based deduplication: its SHA-256 in hex (as SQS makes it).
func contentDedupID(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// sendArgs are send.lua's ARGV for entries; with contentBased, an entry
// without a deduplication id gets its body's.
func sendArgs(entries []sendEntry, contentBased bool) []any {
	args := make([]any, 0, 3+7*len(entries))
	args = append(args, len(entries), tags.DeduplicationWindow.Milliseconds(), boolStr(contentBased))
	for _, e := range entries {
		id := e.dedupID
		if id == "" && contentBased {
			id = contentDedupID(e.body)
		}
		args = append(args, e.size, e.delay, e.body, e.attrs, id, e.topic, e.priority)
	}
	return args
}

// sendSlow stores a checked batch through send.lua (which deduplicates) and
// says whether the queue is now over a cap it drops the oldest for.
func (s *Store) sendSlow(ctx context.Context, queue string, entries []sendEntry, sent []int, results []tags.SendResult) (bool, error) {
	k := s.qkeys(queue)
	keys := []string{k.meta, k.stream, k.filters, k.delayed, k.sizes, k.holes, k.sendDedup, k.sendDedupExp}
	var reply []any
	var asked time.Time
	for attempt := 0; ; attempt++ {
		// Content-based deduplication as this process knows it; send.lua
		// refuses the call, storing nothing, when the queue says otherwise.
		lim, _ := s.limitsOf(ctx, queue)
		var err error
		asked = time.Now()
		reply, err = scriptSend.Run(ctx, s.rdb, keys, sendArgs(entries, lim.contentDedup)...).Slice()
		if err != nil && redis.HasErrorPrefix(err, "STALE_LIMITS") && attempt < 3 {
			s.limits.Delete(queue)
			continue
		}
		if err != nil {
			return false, mapErr(err, queue, "")
		}
		break
	}
	res, _ := reply[0].([]any)
	for j, r := range res {
		i := sent[j]
		parts, _ := r.([]any)
		switch {
		case len(parts) == 1 && parts[0] == tags.ReasonQueueFull:
			results[i].Err = tags.QueueFull(queue)
		case len(parts) == 1 && (parts[0] == "TOPIC_REQUIRED" || parts[0] == "TOPIC_NOT_ALLOWED"):
			s.limits.Delete(queue) // the cached flag was wrong
			results[i].Err = tags.CheckTopic(entries[j].topic, parts[0] == "TOPIC_REQUIRED")
		case len(parts) == 1 && parts[0] == "PRIORITY_NOT_ALLOWED":
			s.limits.Delete(queue) // the cached flag was wrong
			results[i].Err = tags.CheckPriority(entries[j].priority, false)
		case len(parts) == 3 && parts[0] == tags.ReasonQuotaExceeded:
			limit, retry := asInt64(parts[2]), asInt64(parts[1])
			results[i].Err = tags.QuotaExceeded(queue, "", tags.QuotaWrite, limit, retry)
			s.noteSpent(writeQuotaKey(queue), limit, retry, asked)
		case len(parts) == 1:
			id, _ := parts[0].(string)
			results[i] = tags.SendResult{ID: id, SendTime: idTime(id)}
		case parts[0] == "DUPLICATE":
			id, _ := parts[1].(string)
			results[i] = tags.SendResult{ID: id, SendTime: idTime(id), Duplicate: true}
		default:
			results[i].Err = tags.MessageTooLarge(entries[j].size, int(asInt64(parts[1])))
		}
	}
	return asInt64(reply[1]) == 1, nil
}

// sendLimits are the queue attributes a send's fast path checks against,
// cached per queue; sendpost.lua refuses a send made against stale ones.
// (Caps it checks itself, whatever the cache says.)
type sendLimits struct {
	maxBytes     int
	delay        int
	reject       bool // the queue has a cap and refuses sends beyond it
	contentDedup bool // content_based_deduplication: every send goes through send.lua
	topic        bool // a topic queue (S13): every send goes through send.lua
	priority     bool // a priority queue: every send goes through send.lua (field pr)
}

func (s *Store) limitsOf(ctx context.Context, queue string) (sendLimits, bool) {
	if v, ok := s.limits.Load(queue); ok {
		return v.(sendLimits), true
	}
	m, err := s.rdb.HMGet(ctx, s.qkeys(queue).meta, "mmb", "delay", "cmax", "bmax", "ovf", "cbd", "topic", "prq").Result()
	if err != nil || len(m) != 8 || m[0] == nil || m[1] == nil {
		return sendLimits{}, false // the slow path tells what is wrong
	}
	str := func(v any) string { x, _ := v.(string); return x }
	mmb, _ := strconv.Atoi(str(m[0]))
	delay, _ := strconv.Atoi(str(m[1]))
	capped := (str(m[2]) != "" && str(m[2]) != "0") || (str(m[3]) != "" && str(m[3]) != "0")
	l := sendLimits{maxBytes: mmb, delay: delay, reject: capped && str(m[4]) != "drop", contentDedup: str(m[5]) == "1",
		topic: str(m[6]) == "1", priority: str(m[7]) == "1"}
	s.limits.Store(queue, l)
	return l, true
}

// sendFast stores a checked batch (entries, sent the indexes of their
// results) with plain XADDs followed by sendpost.lua in one MULTI, so no
// body passes through Lua. It does so only on the production clock, for
// undelayed messages within the queue's cached limits on a queue without
// content-based deduplication; it reports false (not done), having stored
// nothing, when send.lua must do it. Batches sent concurrently (Publish frames, SendMessageBatch calls)
// share one round trip: see sendCoalescer. over: the queue is now over a
// cap it drops the oldest for.
func (s *Store) sendFast(ctx context.Context, queue string, entries []sendEntry, sent []int, results []tags.SendResult) (done, over bool, err error) {
	if s.rdb.testClock {
		return false, false, nil
	}
	lim, ok := s.limitsOf(ctx, queue)
	if !ok || lim.delay != 0 || lim.contentDedup || lim.topic || lim.priority {
		return false, false, nil
	}
	for _, e := range entries {
		if e.delay > 0 || e.size > lim.maxBytes {
			return false, false, nil // delayed, or (by the cache) too large: send.lua decides
		}
	}
	if lim.reject {
		keep, err := s.roomFor(ctx, queue, entries)
		if err != nil {
			return true, false, err
		}
		for _, i := range sent[keep:] {
			results[i].Err = tags.QueueFull(queue)
		}
		if keep == 0 {
			return true, false, nil
		}
		// Should send.lua have to do it after all, it decides for every
		// entry again.
		sent, entries = sent[:keep], entries[:keep]
	}
	f := &fastSend{queue: queue, entries: entries, sent: sent, results: results, done: make(chan struct{}), asked: time.Now()}
	s.sends.submit(s, f)
	select {
	case <-f.done:
	case <-ctx.Done():
		// The batch may still be stored: not acknowledged, so the caller
		// may send it again (at-least-once), never lost.
		return true, false, ctx.Err()
	}
	return f.ok, f.over, f.err
}

// fastSend is one batch on the fast path, and its outcome.
type fastSend struct {
	queue   string
	entries []sendEntry
	sent    []int
	results []tags.SendResult
	ok      bool // stored (or failed for good: err); false: send.lua must do it
	over    bool // the queue is over a cap it drops the oldest for
	err     error
	done    chan struct{}
	asked   time.Time // before the round trip (see noteSpent)
}

// sendGroup is the batches of one queue in one coalesced transaction: their
// XADDs in order, then one sendpost.lua call that checks and counts them
// all, as if they were one batch (its first k entries kept: the earlier
// batches' first).
type sendGroup struct {
	queue  string
	frames []*fastSend
	n      int                // entries of all frames
	adds   []*redis.StringCmd // every frame's XADD, in order
	check  *redis.Cmd
	post   []any
	claims []*deliverClaim // readers its receives deliver to (deliver.go)
}

// sendCoalescer runs the fast-path batches that arrive together in one
// pipelined transaction (one MULTI per cluster slot): while one round trip
// runs, the next batches gather, so an idle store adds no wait.
type sendCoalescer struct {
	mu       sync.Mutex
	pending  []*fastSend
	flushing bool
}

// submit runs f in the next round trip. With none running, the caller
// runs it itself (no hand-over to another goroutine: at low rates that was
// a scheduling delay on every send), and what gathers meanwhile goes on
// in a goroutine.
func (c *sendCoalescer) submit(s *Store, f *fastSend) {
	c.mu.Lock()
	c.pending = append(c.pending, f)
	lead := !c.flushing
	c.flushing = true
	c.mu.Unlock()
	if !lead {
		return
	}
	c.flushOnce(s) // f among what was pending
	c.mu.Lock()
	more := len(c.pending) > 0
	c.flushing = more
	c.mu.Unlock()
	if more {
		go c.run(s)
	}
}

func (c *sendCoalescer) run(s *Store) {
	for c.flushOnce(s) {
	}
}

// flushOnce runs what is pending in one round trip; false when nothing
// was (flushing is over).
func (c *sendCoalescer) flushOnce(s *Store) bool {
	c.mu.Lock()
	batch := c.pending
	c.pending = nil
	if len(batch) == 0 {
		c.flushing = false
		c.mu.Unlock()
		return false
	}
	c.mu.Unlock()
	s.flushSends(batch)
	return true
}

// sendFlushTimeout bounds one coalesced round trip.
const sendFlushTimeout = 10 * time.Second

func (s *Store) flushSends(batch []*fastSend) {
	ctx, cancel := context.WithTimeout(context.Background(), sendFlushTimeout+s.acks.Timeout())
	defer cancel()
	ctx = s.acked(ctx) // S20: the batches are acknowledged once replicated
	// A transaction may not span cluster slots: on a cluster, one per queue
	// (run together); on one server, one for all.
	if _, cluster := s.rdb.UniversalClient.(*redis.ClusterClient); cluster {
		byQueue := map[string][]*fastSend{}
		for _, f := range batch {
			byQueue[f.queue] = append(byQueue[f.queue], f)
		}
		if len(byQueue) > 1 {
			var wg sync.WaitGroup
			for _, fs := range byQueue {
				wg.Add(1)
				go func() { defer wg.Done(); s.execSends(ctx, fs) }()
			}
			wg.Wait()
			return
		}
	}
	s.execSends(ctx, batch)
}

// maxGroupEntries bounds the entries one sendpost.lua call takes (Lua
// unpacks its arguments onto a stack of at most 8,000 slots): a queue's
// batches beyond it in one round trip make a group of their own.
const maxGroupEntries = 1000

func (s *Store) execSends(ctx context.Context, batch []*fastSend) {
	var groups []*sendGroup
	byQueue := map[string]*sendGroup{}
	for _, f := range batch {
		g := byQueue[f.queue]
		if g == nil || g.n+len(f.entries) > maxGroupEntries {
			g = &sendGroup{queue: f.queue}
			byQueue[f.queue] = g
			groups = append(groups, g)
		}
		g.frames = append(g.frames, f)
		g.n += len(f.entries)
	}
	tx := &durable.Tx{}
	post := scriptSendPost.build(&client{embedded: s.rdb.embedded}) // the fast path runs on the production clock
	for _, g := range groups {
		k := s.qkeys(g.queue)
		// ARGV: n, largest, 0 (not a repair), the sizes' sum, the sizes,
		// the attributes (sendpost.lua).
		g.post = make([]any, 4+2*g.n)
		g.post[0], g.post[2] = g.n, 0
		g.adds = make([]*redis.StringCmd, 0, g.n)
		largest, total, j := 0, 0, 0
		var stream any = k.stream // boxed once for all the XADDs
		for _, f := range g.frames {
			for _, e := range f.entries {
				largest, total = max(largest, e.size), total+e.size
				// XADD made here: go-redis's XAdd builds an argument
				// struct and a values slice per entry.
				var add *redis.StringCmd
				if e.attrs == "" {
					add = redis.NewStringCmd(ctx, "xadd", stream, "nomkstream", "*", "b", e.body)
				} else {
					add = redis.NewStringCmd(ctx, "xadd", stream, "nomkstream", "*", "b", e.body, "a", e.attrs)
				}
				_ = tx.Process(ctx, add) // queued: its error is read with its reply
				g.adds = append(g.adds, add)
				g.post[4+j], g.post[4+g.n+j] = e.size, e.attrs
				j++
			}
		}
		g.post[1], g.post[3] = largest, total
		g.check = post.EvalSha(ctx, tx, []string{k.meta, k.stream, k.filters, k.sizes, k.holes}, g.post...)
		if g == byQueue[g.queue] { // the queue's last group: its receives see every entry
			g.claims = s.claimOffers(g.queue)
			s.queueDeliveries(ctx, tx, g.claims)
		}
	}
	sending := make([]wake.Send, len(groups))
	for i, g := range groups {
		sending[i] = s.waiters.Sending(g.queue)
	}
	s.execSendTx(ctx, batch[0].queue, tx.Cmds()) // errors are read per command
	for i, g := range groups {
		last := s.finishFastSends(ctx, g)
		s.deliver(g.claims, s.waiters.SendDone(g.queue, sending[i], last, claimedTags(g.claims)))
		for _, f := range g.frames {
			close(f.done)
		}
	}
}

// execSendTx runs a coalesced send's commands as one transaction (on a
// cluster they are all in queue's slot: see flushSends). With Config.Acks
// wanting replicas, the transaction and its WAIT go in one round trip on
// a connection of their own to queue's master (S20): a write the replicas
// did not confirm gets REPLICATION_TIMEOUT, and on a master known short
// nothing is sent.
func (s *Store) execSendTx(ctx context.Context, queue string, cmds []redis.Cmder) {
	if s.acks.Replicas() > 0 {
		_ = s.acks.ExecTx(ctx, s.qkeys(queue).stream, cmds)
		return
	}
	pipe := s.rdb.TxPipeline()
	for _, c := range cmds {
		_ = pipe.Process(ctx, c)
	}
	_, _ = pipe.Exec(ctx)
}

// finishFastSends reads one group's replies into its batches' results,
// and says the id of the last entry it stored ("" none).
func (s *Store) finishFastSends(ctx context.Context, g *sendGroup) (last string) {
	done := func(ok bool, err error) {
		for _, f := range g.frames {
			f.ok, f.err = ok, err
		}
	}
	k := s.qkeys(g.queue)
	check := g.check
	if err := g.check.Err(); err != nil {
		switch {
		case redis.HasErrorPrefix(err, "NOSCRIPT"):
			// Redis lost its scripts (a restart) after the XADDs ran: they
			// stand; count them.
			for _, a := range g.adds {
				if a.Err() != nil {
					done(true, mapErr(a.Err(), g.queue, ""))
					return
				}
			}
			g.post[2] = 1
			check = scriptSendPost.Run(ctx, s.rdb, []string{k.meta, k.stream, k.filters, k.sizes, k.holes}, g.post...)
			if err := check.Err(); err != nil {
				done(true, mapErr(err, g.queue, ""))
				return
			}
		case redis.HasErrorPrefix(err, "STALE_LIMITS"), redis.HasErrorPrefix(err, "NO_STREAM"):
			s.limits.Delete(g.queue)
			done(false, nil) // nothing stands: each batch goes through send.lua
			return
		default:
			s.limits.Delete(g.queue)
			done(true, mapErr(err, g.queue, ""))
			return
		}
	}
	reply, _ := check.Int64Slice()
	keep := len(g.adds)
	byQuota, over := false, false
	if len(reply) == 8 {
		keep = int(reply[0])
		over = reply[1] == 1
		s.noteRoom(g.queue, reply[2], reply[3])
		if reply[5] == 0 { // the write quota is spent for this second
			s.noteSpent(writeQuotaKey(g.queue), reply[7], reply[6], g.frames[0].asked)
		}
		byQuota = reply[4] == 1
	}
	var refused error // what the entries taken back get
	switch {
	case keep < len(g.adds) && byQuota:
		refused = tags.QuotaExceeded(g.queue, "", tags.QuotaWrite, reply[7], reply[6])
	case keep < len(g.adds):
		refused = tags.QueueFull(g.queue)
	}
	if keep < len(g.adds) && !byQuota {
		// A cap this process did not know of (set elsewhere): read the
		// limits again, so that the next sends look at the room first.
		s.limits.Delete(g.queue)
	}
	off := 0 // the frame's first entry in g.adds
	for _, f := range g.frames {
		f.ok, f.over = true, over
		for idx, i := range f.sent {
			j := off + idx
			if j >= keep {
				f.results[i].Err = refused // taken back by sendpost.lua
				continue
			}
			id, err := g.adds[j].Result()
			if err != nil {
				f.err = mapErr(err, g.queue, "")
				break
			}
			f.results[i] = tags.SendResult{ID: id, SendTime: idTime(id)}
			last = id
		}
		off += len(f.sent)
	}
	return last
}
