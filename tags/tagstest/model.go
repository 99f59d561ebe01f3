package tagstest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/streamid"
)

// testModel_RandomOperationsMatchReferenceModel runs random sequences of
// send (some entries with deduplication ids, answered as duplicates while
// the model says their window holds), receive, delete, change visibility,
// DeadMessage, moving dead letters back, time advancing, purge, janitor,
// seeks (S22) and tag create/delete against the storage and an in-memory reference
// model of S1-S12 and S22 (but S13), and fails on the first divergence (with a
// Twin, receives go through either storage at random: for redisstore.Store, one
// that keeps stream deliveries in the tag's PEL, the default, and one that
// keeps them in the in-flight zset, Config.InFlightZset: processes on one
// Redis may differ): a receive that returns a message the tag may not
// have, misses one it should, or reports a wrong receive count; a delete,
// visibility change or DeadMessage that the model would refuse (or the
// reverse); any tag counter, of the queue or of its DLQ, that differs; a
// retained message count that differs after any step, or retained bytes
// or drops that differ after the janitor; and, with an Inspector, a tag
// whose deliveries are kept amiss (redisstore.Store: a PEL holding anything but
// its recorded deliveries, pc, each in one batch, none also in v). The
// queue has a redrive policy (max receive count 3); every step ends with
// a sweep, as the background worker would run.
//
// Receives may return any valid choice of available messages (no order is
// promised); the model checks the choice and then follows it. Message ids
// are stream ids (package streamid): the model keeps messages in id order,
// which must be send order, as drop-oldest and the janitor trim them.
// TAGQ_MODEL_SEEDS and TAGQ_MODEL_OPS scale the run; TAGQ_MODEL_FIRST_SEED
// replays from a given seed (failures name their queue, model<seed>).
func testModel_RandomOperationsMatchReferenceModel(t *testing.T, b *B) {
	seeds, ops := b.modelSeeds(), envInt("TAGQ_MODEL_OPS", 250)
	first := envInt("TAGQ_MODEL_FIRST_SEED", 1)
	var mu sync.Mutex
	renewed := 0
	b.eachSeed(first, seeds, func(t *testing.T, b *B, seed int) {
		n := runModel(t, b, fmt.Sprintf("model%d", seed), uint64(seed), ops, false)
		mu.Lock()
		renewed += n
		mu.Unlock()
	})
	requireWindowsPassed(t, seeds, ops, renewed)
}

// testModel_CapsDropOldest is the model run on a queue with small caps on
// retained messages and bytes and OVERFLOW_POLICY_DROP_OLDEST: the sends
// that take it over drop its oldest messages, each counted as expired by
// every tag that had not finished it and as dropped by the queue; retained
// messages, bytes and drops are checked after every janitor pass.
func testModel_CapsDropOldest(t *testing.T, b *B) {
	seeds, ops := b.modelSeeds(), envInt("TAGQ_MODEL_OPS", 250)
	first := envInt("TAGQ_MODEL_FIRST_SEED", 1)
	b.eachSeed(first, seeds, func(t *testing.T, b *B, seed int) {
		runModel(t, b, fmt.Sprintf("capped%d", seed), uint64(seed), ops, true)
	})
}

// Caps of the capped model run: a few messages' worth.
const (
	modelMaxMsgs  = 10
	modelMaxBytes = 1200
)

// requireWindowsPassed fails a model run long enough for deduplication
// windows to pass in which none did.
func requireWindowsPassed(t *testing.T, seeds, ops, renewed int) {
	t.Helper()
	if seeds >= 3 && ops >= 200 && renewed == 0 {
		t.Fatal("no deduplication id was stored again after its window: window expiry went untested")
	}
}

// modelSeeds is how many seeds a model test runs: TAGQ_MODEL_SEEDS
// (default 6), or on a harness of partitioned queues (a Partitioner),
// whose every step costs a call per partition, TAGQ_MODEL_PARTITIONED_SEEDS
// (default 3): CI's deep run (20 seeds of 400 operations) took over ten
// minutes on the cluster's partitioned harness alone, which its
// unpartitioned twin's 20 seeds cover but for the routing.
func (b *B) modelSeeds() int {
	if b.extras().Partitioner != nil {
		return envInt("TAGQ_MODEL_PARTITIONED_SEEDS", 3)
	}
	return envInt("TAGQ_MODEL_SEEDS", 6)
}

// eachSeed runs fn for seeds first, first+1, … (seeds of them), one after
// another on t and b; on a harness of partitioned queues (a
// Partitioner), whose steps wait on a call per partition, in parallel
// subtests (seed<n>), each with a B of its own on the same storage.
func (b *B) eachSeed(first, seeds int, fn func(t *testing.T, b *B, seed int)) {
	hk := b.extras()
	if hk.Partitioner == nil {
		for seed := first; seed < first+seeds; seed++ {
			fn(b.t, b, seed)
		}
		return
	}
	b.t.Run("seeds", func(t *testing.T) { // returns when every seed has run
		for seed := first; seed < first+seeds; seed++ {
			t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
				t.Parallel()
				fn(t, &B{t: t, ctx: b.ctx, s: b.s, clock: b.clock, hooks: &hk, catch: b.catch}, seed)
			})
		}
	})
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

const (
	modelVis       = 30_000
	modelRetention = 600_000
	modelMaxRC     = 3
)

type mMsg struct {
	id      string
	body    string
	red     bool
	dueMs   int64
	trimmed bool
	only    string // moved back: for this tag alone
	moved   int    // times moved back
	part    int    // the partition that holds it (0 on a queue of one)
	sid     string // its stream id in that partition (id on a queue of one)
}

// mDead is a dead letter in the model's DLQ.
type mDead struct {
	tag   string
	body  string
	red   bool
	moved int
}

type mHeld struct {
	rc       int
	firstMs  int64
	deadline int64
	done     bool
}

type mTag struct {
	name     string
	startIdx int
	excluded map[int]bool
	red      bool
	vis      int64 // ms, -1 = the queue's
	held     map[int]*mHeld
	rcv, del int64
	exp      int64
	dead     int64
	life     int // seeks so far (S22): a handle of an earlier life settles nothing
	// from, after a seek to a message id of a partitioned queue, is the
	// first index each partition's cursor admits (nil: startIdx for all).
	from []int
}

// start is the first index tg's cursor admits in partition part.
func (tg *mTag) start(part int) int {
	if tg.from != nil {
		return tg.from[part]
	}
	return tg.startIdx
}

type mHandle struct {
	tag    string
	idx    int
	gen    int
	life   int // the tag's life (seeks) it was issued in
	handle string
	d      tags.Delivery // what a consume stream keeps instead of the handle
}

type model struct {
	t         *testing.T
	b         *B
	bg        Maintainer
	insp      Inspector    // nil: none
	twin      tags.Storage // nil: none
	inspected int          // Inspector checks that found deliveries to check
	q         string
	rnd       *rand.Rand
	now       int64
	msgs      []*mMsg
	byID      map[string]int
	tags      map[string]*mTag
	handles   []mHandle
	dlq       []*mDead // dead letters in the DLQ, in order
	step      int
	op        string
	capped    bool  // the queue has the caps above and drops the oldest
	dropped   int64 // the queue's dropped_total
	sent      int   // messages sent (bodies are numbered by it)
	dedup     map[string]mDedup
	deduped   int64 // the queue's deduplicated_total
	renewed   int   // ids stored again once their window had passed
	// A partitioned queue is one model per partition: each message knows
	// its partition (pt.Locate), and the order of ids, the janitor, the
	// caps (each partition's share) and deduplication are each
	// partition's; receives may take from any partition.
	pt        Partitioner    // nil: a queue of one partition
	parts     int            // the queue's partitions
	capMsgs   int64          // each partition's cap on retained messages (capped)
	capBytes  int64          // and on retained bytes
	dedupPart map[string]int // the partition each deduplication id went to
	droppedIn map[int]bool   // partitions whose cap dropped a message
}

// mDedup is a deduplication id the queue remembers: the message first
// stored under it and when its window ends (purges keep it).
type mDedup struct {
	idx  int
	ends int64
}

// size is a message's size as max_message_bytes counts it.
func (msg *mMsg) size() int64 {
	if msg.red {
		return int64(len(msg.body) + len("color") + len("red"))
	}
	return int64(len(msg.body))
}

// retained is the count and bytes of the messages the streams hold.
func (m *model) retained() (n, bytes int64) { return m.retainedIn(-1) }

// retainedIn is the count and bytes of the messages partition part's
// stream holds (-1: every partition's).
func (m *model) retainedIn(part int) (n, bytes int64) {
	for _, msg := range m.msgs {
		if !msg.trimmed && (part < 0 || msg.part == part) {
			n++
			bytes += msg.size()
		}
	}
	return n, bytes
}

// over says whether partition part is over its share of a cap.
func (m *model) over(part int) bool {
	n, bytes := m.retainedIn(part)
	return m.capped && (n > m.capMsgs || bytes > m.capBytes)
}

// locate records which partition holds msg, by its id, and its stream id
// there.
func (m *model) locate(msg *mMsg) {
	m.t.Helper()
	if m.pt == nil {
		msg.part, msg.sid = 0, msg.id
		return
	}
	msg.part, msg.sid = m.pt.Locate(m.q, msg.id)
	if msg.part < 0 || msg.part >= m.parts {
		m.failf("message %s is in partition %d of %d", msg.id, msg.part, m.parts)
	}
}

// lastIn is the newest message of partition part whose id the model
// knows, or nil.
func (m *model) lastIn(part int) *mMsg {
	for i := len(m.msgs) - 1; i >= 0; i-- {
		if msg := m.msgs[i]; msg.part == part && msg.id != "" {
			return msg
		}
	}
	return nil
}

func (m *model) failf(format string, args ...any) {
	m.t.Helper()
	m.b.failure(fmt.Sprintf("queue %s step %d (%s): %s", m.q, m.step, m.op, fmt.Sprintf(format, args...)))
}

func (tg *mTag) admits(idx int, msg *mMsg) bool {
	if idx < tg.start(msg.part) || tg.excluded[idx] || msg.trimmed {
		return false
	}
	if msg.only != "" {
		return msg.only == tg.name
	}
	return !tg.red || msg.red
}

// status of message idx for tag: "" (not the tag's), "available",
// "inflight", "delayed" or "done".
func (m *model) status(tg *mTag, idx int) string {
	msg := m.msgs[idx]
	h := tg.held[idx]
	if h != nil {
		switch {
		case h.done:
			return "done"
		case h.deadline > m.now:
			return "inflight"
		default:
			return "available"
		}
	}
	if !tg.admits(idx, msg) {
		return ""
	}
	if msg.dueMs > m.now {
		return "delayed"
	}
	return "available"
}

func (m *model) expectState(tg *mTag) tags.TagState {
	st := tags.TagState{ReceivedTotal: tg.rcv, DeletedTotal: tg.del, ExpiredTotal: tg.exp, DeadTotal: tg.dead}
	for idx := range m.msgs {
		switch m.status(tg, idx) {
		case "available":
			st.Available++
		case "inflight":
			st.InFlight++
		case "delayed":
			st.Delayed++
		}
	}
	return st
}

// runModel runs one seed and returns how many deduplication ids were
// stored again once their window had passed.
func runModel(t *testing.T, b *B, q string, seed uint64, ops int, capped bool) int {
	m := newModel(t, b, q, seed, capped)
	for m.step = 0; m.step < ops; m.step++ {
		switch r := m.rnd.IntN(100); {
		case r < 22:
			m.send()
		case r < 46:
			m.receive()
		case r < 56:
			m.delete()
		case r < 66:
			m.changeVisibility()
		case r < 71:
			m.dead()
		case r < 82:
			m.advance()
		case r < 86:
			m.janitor()
		case r < 90:
			m.createTag()
		case r < 93:
			m.deleteTag()
		case r < 94:
			m.purge()
		case r < 97:
			m.moveBack()
		case r < 99:
			m.seek()
		default:
			m.advance()
		}
		m.sweep()
		m.check()
	}
	if ops >= 200 && m.insp != nil && m.inspected == 0 {
		t.Fatalf("queue %s: no Inspector check found a delivery to check (redisstore.Store: in a PEL): the path went untested", q)
	}
	if ops >= 200 && !capped && m.deduped == 0 {
		t.Fatalf("queue %s: no send was a duplicate: deduplication went untested", q)
	}
	if ops >= 200 && m.parts > 1 {
		// Every partition's sequence was followed, and (capped) the caps
		// bit in more than one.
		used := map[int]bool{}
		for _, msg := range m.msgs {
			used[msg.part] = true
		}
		if len(used) < m.parts {
			t.Fatalf("queue %s: messages went to %d of its %d partitions", q, len(used), m.parts)
		}
		if capped && len(m.droppedIn) < 2 {
			t.Fatalf("queue %s: the caps dropped messages in %d partitions: per-partition caps went untested", q, len(m.droppedIn))
		}
	}
	return m.renewed
}

// newModel makes queue q (capped: with the caps above, dropping the
// oldest) and its DLQ, and a model of them with the tag "default"; both
// queues' clocks stand still at the start of a second.
func newModel(t *testing.T, b *B, q string, seed uint64, capped bool) *model {
	m := &model{t: t, b: b, bg: b.maintainer(), insp: b.extras().Inspector, twin: b.extras().Twin, q: q,
		rnd: rand.New(rand.NewPCG(seed, 42)), byID: map[string]int{}, tags: map[string]*mTag{},
		capped: capped, dedup: map[string]mDedup{}, dedupPart: map[string]int{}, droppedIn: map[int]bool{}, parts: 1,
		capMsgs: modelMaxMsgs, capBytes: modelMaxBytes}
	_, err := b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: q + "-dlq", DeadLetterQueue: true})
	require.NoError(t, err)
	cfg := tags.QueueConfig{Name: q, VisibilityTimeoutSeconds: i32(modelVis / 1000),
		MessageRetentionSeconds: i32(modelRetention / 1000),
		RedrivePolicy:           &tags.RedrivePolicy{DeadLetterQueue: q + "-dlq", MaxReceiveCount: modelMaxRC}}
	if capped {
		msgs, bytes := int64(modelMaxMsgs), int64(modelMaxBytes)
		cfg.MaxMessageBytes, cfg.MaxRetainedMessages, cfg.MaxRetainedBytes = i32(tags.MinMaxMessageBytes), &msgs, &bytes
		cfg.Overflow = tags.OverflowDropOldest
	}
	made, err := b.s.CreateQueue(b.ctx, cfg)
	require.NoError(t, err)
	if made.Partitions > 1 {
		if m.pt = b.extras().Partitioner; m.pt == nil {
			t.Skip("the harness gives no Partitioner (Hooks): the model cannot follow a partitioned queue")
		}
		got, err := b.s.GetQueue(b.ctx, q)
		require.NoError(t, err)
		m.parts = int(made.Partitions)
		m.capMsgs, m.capBytes = m.pt.CapShares(got)
	}
	// Runs replay by seed: what depends on time (the janitor's seconds of
	// message ids) is the same from any start on a second's boundary. The
	// start is days past the storage's own time (more for each seed), so
	// that a step that read the wrong clock would show.
	b.advance(q, 0)
	b.advance(q+"-dlq", 0)
	m.now = (max(b.now(q), b.now(q+"-dlq"))/1000+1)*1000 + int64(seed)*1_000_000_000
	m.clockTo(m.now)
	m.tags["default"] = &mTag{name: "default", held: map[int]*mHeld{}, excluded: map[int]bool{}, vis: -1}
	return m
}

func (m *model) tagNames() []string {
	names := make([]string, 0, len(m.tags))
	for _, n := range []string{"default", "t1", "t2", "t3", "t4"} {
		if m.tags[n] != nil {
			names = append(names, n)
		}
	}
	return names
}

func (m *model) pickTag() *mTag {
	names := m.tagNames()
	if len(names) == 0 {
		return nil
	}
	return m.tags[names[m.rnd.IntN(len(names))]]
}

func (m *model) send() {
	n := 1 + m.rnd.IntN(4)
	out := make([]tags.OutMessage, n)
	added := make([]*mMsg, n)
	for i := range out {
		m.sent++
		msg := &mMsg{body: fmt.Sprintf("m%d", m.sent), red: m.rnd.IntN(2) == 0, dueMs: m.now}
		if m.capped { // sizes that make the byte cap bite as well as the count
			pad := 200
			if m.parts > 1 { // a partition's byte cap is at least max_message_bytes
				pad = 600
			}
			msg.body += strings.Repeat(".", m.rnd.IntN(pad))
		}
		out[i].Body = []byte(msg.body)
		if msg.red {
			out[i].Attributes = map[string]tags.Attribute{"color": {String: "red"}}
		}
		if d := []int32{0, 0, 0, 5, 40}[m.rnd.IntN(5)]; d > 0 || m.rnd.IntN(2) == 0 {
			out[i].DelaySeconds = i32(d)
			msg.dueMs = m.now + int64(d)*1000
		}
		// A few ids, so that batches and windows repeat them.
		if m.rnd.IntN(3) == 0 {
			id := fmt.Sprintf("d%d", m.rnd.IntN(6))
			out[i].DeduplicationID = &id
		}
		added[i] = msg
	}
	m.store(out, added)
}

// store sends out, whose messages the model holds as added.
func (m *model) store(out []tags.OutMessage, added []*mMsg) {
	m.op = fmt.Sprintf("send %d", len(out))
	res, err := m.b.s.Send(m.b.ctx, m.q, out)
	if err != nil {
		m.failf("send: %v", err)
	}
	if len(res) != len(out) {
		m.failf("%d results for %d entries", len(res), len(out))
	}
	touched := map[int]bool{} // partitions the send stored to
	for i, r := range res {
		if r.Err != nil {
			m.failf("send entry %d: %v", i, r.Err)
		}
		did := ""
		if p := out[i].DeduplicationID; p != nil {
			did = *p
		}
		if d, ok := m.dedup[did]; ok && d.ends > m.now {
			if !r.Duplicate || r.ID != m.msgs[d.idx].id {
				m.failf("send entry %d (deduplication id %s): got %s duplicate %v, want a duplicate of %s",
					i, did, r.ID, r.Duplicate, m.msgs[d.idx].id)
			}
			m.deduped++
			touched[m.msgs[d.idx].part] = true
			continue
		}
		if r.Duplicate {
			m.failf("send entry %d (deduplication id %q) answered as a duplicate of %s", i, did, r.ID)
		}
		if did != "" {
			if _, ok := m.dedup[did]; ok {
				m.renewed++
			}
			m.dedup[did] = mDedup{idx: len(m.msgs), ends: m.now + tags.DeduplicationWindow.Milliseconds()}
		}
		added[i].id = r.ID
		if _, ok := m.byID[r.ID]; ok {
			m.failf("send entry %d: id %s is another message's", i, r.ID)
		}
		if r.SendTime.UnixMilli() != m.now {
			m.failf("send time %v, model clock %d", r.SendTime.UnixMilli(), m.now)
		}
		m.locate(added[i])
		// A partition's ids are in send order (its stream's), and a
		// deduplication id always goes to the same partition (S19).
		if prev := m.lastIn(added[i].part); prev != nil && !idLess(prev.sid, added[i].sid) {
			m.failf("send entry %d: id %s after %s in partition %d", i, r.ID, prev.id, added[i].part)
		}
		if did != "" {
			if p, ok := m.dedupPart[did]; ok && p != added[i].part {
				m.failf("deduplication id %s stored in partition %d, before in %d", did, added[i].part, p)
			}
			m.dedupPart[did] = added[i].part
		}
		touched[added[i].part] = true
		m.byID[r.ID] = len(m.msgs)
		m.msgs = append(m.msgs, added[i])
	}
	for k := range m.parts {
		if touched[k] && m.over(k) {
			m.trimPart(k) // the send ran the partition's janitor before it returned
		}
	}
}

func (m *model) receive() {
	tg := m.pickTag()
	if tg == nil {
		return
	}
	max := 1 + m.rnd.IntN(5)
	var visOverride *int32
	if m.rnd.IntN(3) == 0 {
		visOverride = i32([]int32{0, 10, 60}[m.rnd.IntN(3)])
	}
	zset := m.rnd.IntN(3) == 0
	m.receiveWith(tg, max, visOverride, zset, m.available(tg) > 0 && m.rnd.IntN(2) == 0)
}

// available counts the messages available to tg.
func (m *model) available(tg *mTag) int {
	avail := 0
	for idx := range m.msgs {
		if m.status(tg, idx) == "available" {
			avail++
		}
	}
	return avail
}

// receiveWith receives up to max messages for tg, through the in-flight
// zset store when zset, as a consume stream when stream (only when some
// are available: a Reader waits while none is).
func (m *model) receiveWith(tg *mTag, max int, visOverride *int32, zset, stream bool) {
	m.op = fmt.Sprintf("receive tag=%s max=%d vis=%v", tg.name, max, visOverride)
	avail := m.available(tg)
	var got []tags.Message
	var err error
	s := m.b.s
	if zset && m.twin != nil {
		s = m.twin
		m.op += " (twin)"
	}
	if stream {
		m.op += " (stream)"
		var r tags.TagReader
		if r, err = s.OpenReader(m.b.ctx, m.q, tg.name, visOverride); err == nil {
			got, err = r.Receive(m.b.ctx, max)
			r.Close()
		}
	} else {
		got, err = s.Receive(m.b.ctx, m.q, tg.name, tags.ReceiveOptions{MaxMessages: max, WaitSeconds: i32(0), VisibilitySeconds: visOverride})
	}
	if err != nil {
		m.failf("receive: %v", err)
	}
	if want := min(max, avail); len(got) != want {
		m.failf("received %d messages, %d were available (max %d)", len(got), avail, max)
	}
	vis := int64(modelVis)
	if tg.vis >= 0 {
		vis = tg.vis
	}
	if visOverride != nil {
		vis = int64(*visOverride) * 1000
	}
	seen := map[int]bool{}
	for _, msg := range got {
		idx, ok := m.byID[msg.ID]
		if !ok {
			m.failf("received unknown message %s", msg.ID)
		}
		if seen[idx] || m.status(tg, idx) != "available" {
			m.failf("received %s (%s) which is %q for the tag", msg.ID, m.msgs[idx].body, m.status(tg, idx))
		}
		seen[idx] = true
		if string(msg.Body) != m.msgs[idx].body || msg.MoveCount != m.msgs[idx].moved {
			m.failf("body %q moved %d, want %q moved %d", msg.Body, msg.MoveCount, m.msgs[idx].body, m.msgs[idx].moved)
		}
		h := tg.held[idx]
		if h == nil {
			h = &mHeld{firstMs: m.now}
			tg.held[idx] = h
		}
		h.rc++
		h.deadline = m.now + vis
		tg.rcv++
		if msg.ReceiveCount != h.rc || msg.FirstReceiveTime.UnixMilli() != h.firstMs {
			m.failf("%s: receive count %d first %d, want %d first %d", msg.ID, msg.ReceiveCount,
				msg.FirstReceiveTime.UnixMilli(), h.rc, h.firstMs)
		}
		m.handles = append(m.handles, mHandle{tag: tg.name, idx: idx, gen: h.rc, life: tg.life, handle: msg.ReceiptHandle,
			d: msg.Delivery(m.q)})
	}
}

func (m *model) pickHandle() (mHandle, bool) {
	if len(m.handles) == 0 {
		return mHandle{}, false
	}
	// Prefer recent handles (mostly current), sometimes old ones (stale).
	i := len(m.handles) - 1 - m.rnd.IntN(min(len(m.handles), 8))
	if m.rnd.IntN(4) == 0 {
		i = m.rnd.IntN(len(m.handles))
	}
	return m.handles[i], true
}

func (m *model) delete() {
	h, ok := m.pickHandle()
	if !ok {
		return
	}
	m.op = fmt.Sprintf("delete %s %s gen %d", h.tag, m.msgs[h.idx].body, h.gen)
	errs, err := m.settleOr(tags.Settlement{Kind: tags.SettleAck, Delivery: h.d}, func() ([]error, error) {
		return m.b.s.Delete(m.b.ctx, m.q, []string{h.handle})
	})
	if err != nil {
		m.failf("delete: %v", err)
	}
	tg := m.tags[h.tag]
	if tg == nil {
		if tags.ReasonOf(errs[0]) != tags.ReasonTagNotFound {
			m.failf("delete on a deleted tag: %v, want TAG_NOT_FOUND", errs[0])
		}
		return
	}
	if errs[0] != nil {
		m.failf("delete: %v", errs[0])
	}
	// S3: any handle of the message deletes it while the tag holds it;
	// S22: not one from before the tag's last seek.
	if st := m.status(tg, h.idx); h.life == tg.life && (st == "inflight" || (st == "available" && tg.held[h.idx] != nil)) {
		tg.held[h.idx].done = true
		tg.del++
	}
}

func (m *model) changeVisibility() {
	h, ok := m.pickHandle()
	if !ok {
		return
	}
	m.changeVisibilityWith(h, []int32{0, 5, 40}[m.rnd.IntN(3)])
}

// changeVisibilityWith sets the visibility of h's message to secs.
func (m *model) changeVisibilityWith(h mHandle, secs int32) {
	m.op = fmt.Sprintf("visibility %s %s gen %d -> %ds", h.tag, m.msgs[h.idx].body, h.gen, secs)
	op := tags.Settlement{Kind: tags.SettleVisibility, Delivery: h.d, VisibilityMs: int64(secs) * 1000}
	if held := m.settleLatest("visibility", h, op, func() ([]error, error) {
		return m.b.s.ChangeVisibility(m.b.ctx, m.q, []tags.VisibilityChange{{ReceiptHandle: h.handle, VisibilitySeconds: secs}})
	}); held != nil {
		held.deadline = m.now + int64(secs)*1000
	}
}

// settleLatest runs op, which the latest receive's handle h alone may
// take (a visibility change, DeadMessage), through settleOr, and checks
// the answer: TAG_NOT_FOUND once h's tag is gone, RECEIPT_HANDLE_STALE
// unless h is the current handle of a message its tag holds, else none.
// It returns what the tag holds of h's message when h was current (the
// caller applies op to it), else nil.
func (m *model) settleLatest(name string, h mHandle, op tags.Settlement, unary func() ([]error, error)) *mHeld {
	errs, err := m.settleOr(op, unary)
	if err != nil {
		m.failf("%s: %v", name, err)
	}
	tg := m.tags[h.tag]
	if tg == nil {
		if tags.ReasonOf(errs[0]) != tags.ReasonTagNotFound {
			m.failf("%s on a deleted tag: %v, want TAG_NOT_FOUND", name, errs[0])
		}
		return nil
	}
	held := tg.held[h.idx]
	current := held != nil && !held.done && held.rc == h.gen && h.life == tg.life
	switch {
	case current && errs[0] != nil:
		m.failf("current handle refused: %v", errs[0])
	case !current && tags.ReasonOf(errs[0]) != tags.ReasonReceiptHandleStale:
		m.failf("stale handle: got %v, want RECEIPT_HANDLE_STALE", errs[0])
	case current:
		return held
	}
	return nil
}

// settleOr runs op through the storage's Settle, as consume streams
// settle, or (as often) the unary call; both must give the same answer.
func (m *model) settleOr(op tags.Settlement, unary func() ([]error, error)) ([]error, error) {
	if m.rnd.IntN(2) == 0 {
		return unary()
	}
	m.op += " (stream)"
	b := &tags.SettleBatch{Queue: m.q, Tag: op.Delivery.Tag, Ops: []tags.Settlement{op}}
	if err := m.b.s.Settle(m.b.ctx, []*tags.SettleBatch{b}); err != nil {
		return nil, err
	}
	return b.Errs, nil
}

func (m *model) advance() {
	m.advanceBy([]int64{1, 5, 10, 31}[m.rnd.IntN(4)] * 1000)
}

// advanceBy moves both queues' clocks d ms on.
func (m *model) advanceBy(d int64) {
	m.op = fmt.Sprintf("advance %dms", d)
	m.now += d
	m.clockTo(m.now)
}

// clockTo moves the clocks of the queue and its DLQ on to ms (one move
// when the storage's clock is one for all queues).
func (m *model) clockTo(ms int64) {
	m.t.Helper()
	for _, q := range []string{m.q, m.q + "-dlq"} {
		d := ms - m.b.now(q)
		if d < 0 {
			m.failf("queue %s's clock is at %d, past the model's %d", q, ms-d, ms)
		}
		if d > 0 {
			m.b.advance(q, time.Duration(d)*time.Millisecond)
		}
	}
}

// toDLQ records that tag dead-lettered message idx.
func (m *model) toDLQ(tg *mTag, idx int) {
	msg := m.msgs[idx]
	tg.held[idx].done = true
	tg.dead++
	m.dlq = append(m.dlq, &mDead{tag: tg.name, body: msg.body, red: msg.red, moved: msg.moved})
}

// sweep: what the background worker does after every step (S7). Messages a
// tag received modelMaxRC times whose deadline passed are dead letters.
func (m *model) sweep() {
	if err := m.bg.Sweep(m.b.ctx, m.q); err != nil {
		m.failf("sweep: %v", err)
	}
	for _, name := range m.tagNames() {
		tg := m.tags[name]
		for idx := range m.msgs {
			if h := tg.held[idx]; h != nil && !h.done && h.rc >= modelMaxRC && h.deadline <= m.now {
				m.toDLQ(tg, idx)
			}
		}
	}
}

func (m *model) dead() {
	h, ok := m.pickHandle()
	if !ok {
		return
	}
	m.op = fmt.Sprintf("dead %s %s gen %d", h.tag, m.msgs[h.idx].body, h.gen)
	if held := m.settleLatest("dead", h, tags.Settlement{Kind: tags.SettleDead, Delivery: h.d}, func() ([]error, error) {
		return m.b.s.DeadLetter(m.b.ctx, m.q, []tags.DeadRequest{{ReceiptHandle: h.handle}})
	}); held != nil {
		m.toDLQ(m.tags[h.tag], h.idx)
	}
}

// moveBack moves every dead letter back to the tag it died in (S10); those
// whose tag is gone stay.
func (m *model) moveBack() {
	m.op = "move back"
	if _, err := m.b.s.StartMove(m.b.ctx, m.q+"-dlq", "", "", tags.MaxMoveRate); err != nil {
		m.failf("start move: %v", err)
	}
	for run := 0; ; run++ {
		if run == 100 {
			m.failf("the move still runs after %d runs", run)
		}
		if err := m.bg.RunMove(m.b.ctx, m.q+"-dlq", time.Second); err != nil {
			m.failf("run move: %v", err)
		}
		tasks, err := m.b.s.ListMoves(m.b.ctx, m.q+"-dlq")
		if err != nil {
			m.failf("list moves: %v", err)
		}
		if tasks[0].State != tags.MoveRunning {
			break
		}
	}
	var stay []*mDead
	for _, d := range m.dlq {
		if m.tags[d.tag] == nil {
			stay = append(stay, d)
			continue
		}
		msg := &mMsg{body: d.body, red: d.red, dueMs: m.now, only: d.tag, moved: d.moved + 1}
		m.msgs = append(m.msgs, msg)
	}
	m.dlq = stay
	// The moved-back messages are the ones the model has no id for, each
	// available to its tag alone; the DLQ's order (the sweep's) need not
	// be the model's, so pair them by content. The order check below
	// makes them the newest.
	fresh := 0
	for i := len(m.msgs) - 1; i >= 0 && m.msgs[i].id == ""; i-- {
		fresh++
	}
	if fresh == 0 {
		return
	}
	entries := m.unknownAvailable()
	if len(entries) != fresh {
		m.failf("%d moved-back messages available, model %d", len(entries), fresh)
	}
	for _, e := range entries {
		found := false
		for i := len(m.msgs) - fresh; i < len(m.msgs); i++ {
			msg := m.msgs[i]
			if msg.id == "" && msg.body == string(e.Body) && msg.only == e.Tag && msg.moved == e.MoveCount {
				msg.id = e.ID
				m.locate(msg)
				m.byID[e.ID] = i
				found = true
				break
			}
		}
		if !found {
			m.failf("moved-back message %s (%s for %s, moved %d) is not in the model", e.ID, e.Body, e.Tag, e.MoveCount)
		}
	}
	// The model keeps each partition's messages in stream order (trimPart
	// drops them from the head, as the janitor does), so the moved-back
	// ones go in the order of their ids, not the model's DLQ order.
	moved := m.msgs[len(m.msgs)-fresh:]
	slices.SortFunc(moved, func(a, b *mMsg) int {
		switch {
		case a.sid != b.sid && idLess(a.sid, b.sid):
			return -1
		case a.sid != b.sid:
			return 1
		}
		return a.part - b.part // ids are unique per partition
	})
	for i, msg := range moved {
		m.byID[msg.id] = len(m.msgs) - fresh + i
	}
	last := map[int]*mMsg{}
	for _, msg := range m.msgs {
		if prev := last[msg.part]; prev != nil && !idLess(prev.sid, msg.sid) {
			m.failf("the model holds %s before %s: not in stream order", prev.id, msg.id)
		}
		last[msg.part] = msg
	}
}

// unknownAvailable lists the messages available to the model's tags
// (PeekPage) whose ids the model does not know, each with the tag it is
// available to.
func (m *model) unknownAvailable() []tags.Message {
	var out []tags.Message
	tagOf := map[string]string{}
	for _, name := range m.tagNames() {
		for from, pages := "", 0; ; pages++ {
			if pages == 1000 {
				m.failf("tag %s: peek pages do not end", name)
			}
			page, next, err := m.b.s.PeekPage(m.b.ctx, m.q, name, tags.MaxBatchEntries, from)
			if err != nil {
				m.failf("peek %s: %v", name, err)
			}
			for _, msg := range page {
				if _, ok := m.byID[msg.ID]; ok {
					continue
				}
				if other, ok := tagOf[msg.ID]; ok {
					if other != name {
						m.failf("moved-back message %s is available to tags %s and %s", msg.ID, other, name)
					}
					continue // listed again (pages are a listing, not a snapshot)
				}
				tagOf[msg.ID] = name
				msg.Tag = name
				out = append(out, msg)
			}
			if next == "" {
				break
			}
			from = next
		}
	}
	return out
}

// sameSecondHeld: the janitor knows a tag's in-flight messages only as a
// count per second of message id, so it keeps every entry of a second in
// which the tag holds one (received, not deleted, dead or expired) in the
// same partition.
func (m *model) sameSecondHeld(tg *mTag, msg *mMsg) bool {
	sec := func(id string) uint64 {
		ms, _, _ := streamid.Parse(id)
		return ms / 1000
	}
	for j, h := range tg.held {
		if o := m.msgs[j]; h != nil && !h.done && o.id != "" && o.part == msg.part && sec(o.sid) == sec(msg.sid) {
			return true
		}
	}
	return false
}

func (m *model) janitor() {
	m.op = "janitor"
	if err := m.bg.Janitor(m.b.ctx, m.q); err != nil {
		m.failf("janitor: %v", err)
	}
	for k := range m.parts {
		m.trimPart(k)
	}
	q, err := m.b.s.GetQueue(m.b.ctx, m.q)
	if err != nil {
		m.failf("get queue: %v", err)
	}
	retained, bytes := m.retained()
	if q.RetainedMessages != retained {
		m.failf("retained %d messages, model %d", q.RetainedMessages, retained)
	}
	if q.RetainedBytes != bytes {
		m.failf("retained %d bytes, model %d", q.RetainedBytes, bytes)
	}
	if q.DroppedTotal != m.dropped {
		m.failf("dropped %d messages, model %d", q.DroppedTotal, m.dropped)
	}
}

// trimPart is what the janitor does to partition part of the model:
// messages expired, or (over its cap) the oldest, counted for each tag
// that had not finished them; then those every tag is done with, up to
// the first one needed.
func (m *model) trimPart(part int) {
	for idx, msg := range m.msgs {
		if msg.trimmed || msg.part != part {
			continue
		}
		if expired := msg.dueMs+modelRetention <= m.now; expired || m.over(part) {
			needed := len(m.tags) == 0
			for _, tg := range m.tags {
				if st := m.status(tg, idx); st != "" && st != "done" {
					needed = true
					tg.exp++
					if tg.held[idx] == nil {
						tg.held[idx] = &mHeld{}
					}
					tg.held[idx].done = true
				}
			}
			if needed && !expired {
				m.dropped++
				m.droppedIn[part] = true
			}
			msg.trimmed = true
			continue
		}
		if len(m.tags) == 0 {
			break
		}
		needed := false
		for _, tg := range m.tags {
			if st := m.status(tg, idx); (st != "" && st != "done") || m.sameSecondHeld(tg, msg) {
				needed = true
			}
		}
		if needed {
			break
		}
		msg.trimmed = true
	}
}

func (m *model) createTag() {
	var name string
	for _, n := range []string{"t1", "t2", "t3", "t4"} {
		if m.tags[n] == nil {
			name = n
			break
		}
	}
	if name == "" {
		return
	}
	tg := &mTag{name: name, held: map[int]*mHeld{}, excluded: map[int]bool{}, vis: -1, startIdx: len(m.msgs)}
	cfg := tags.TagConfig{Name: name}
	if m.rnd.IntN(2) == 0 {
		cfg.Start = tags.Start{Kind: tags.StartOldest}
		tg.startIdx = 0
		for idx, msg := range m.msgs {
			if msg.trimmed {
				tg.excluded[idx] = true
			}
		}
	}
	if m.rnd.IntN(2) == 0 {
		red := "red"
		cfg.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "color", Value: &red}}}
		tg.red = true
	}
	if m.rnd.IntN(3) == 0 {
		cfg.VisibilityTimeoutSeconds = i32(20)
		tg.vis = 20_000
	}
	m.op = fmt.Sprintf("create tag %s start=%d red=%v", name, cfg.Start.Kind, tg.red)
	if _, err := m.b.s.CreateTag(m.b.ctx, m.q, cfg); err != nil {
		m.failf("create tag: %v", err)
	}
	m.tags[name] = tg
}

func (m *model) deleteTag() {
	tg := m.pickTag()
	if tg == nil {
		return
	}
	m.op = "delete tag " + tg.name
	if err := m.b.s.DeleteTag(m.b.ctx, m.q, tg.name); err != nil {
		m.failf("delete tag: %v", err)
	}
	delete(m.tags, tg.name)
	// Handles of the deleted tag name a message in flight of a tag that no
	// longer exists; a new tag of the same name is another tag (its
	// in-flight members differ), so the model forgets them.
	kept := m.handles[:0]
	for _, h := range m.handles {
		if h.tag != tg.name {
			kept = append(kept, h)
		}
	}
	m.handles = kept
}

func (m *model) purge() {
	m.op = "purge"
	n, err := m.b.s.PurgeQueue(m.b.ctx, m.q)
	if err != nil {
		m.failf("purge: %v", err)
	}
	retained := 0
	for idx, msg := range m.msgs {
		if msg.trimmed {
			continue
		}
		retained++
		for _, tg := range m.tags {
			if tg.held[idx] == nil {
				tg.held[idx] = &mHeld{}
			}
			tg.held[idx].done = true
		}
		msg.trimmed = true
	}
	if n != int64(retained) {
		m.failf("purged %d, model %d", n, retained)
	}
}

func (m *model) check() {
	dlq, err := m.b.s.GetTag(m.b.ctx, m.q+"-dlq", "default")
	if err != nil {
		m.failf("get DLQ tag: %v", err)
	}
	q, err := m.b.s.GetQueue(m.b.ctx, m.q)
	if err != nil || q.DeduplicatedTotal != m.deduped {
		m.failf("queue deduplicated_total: %+v %v, model %d", q, err, m.deduped)
	}
	if n, _ := m.retained(); q.RetainedMessages != n {
		m.failf("the queue retains %d messages, model %d", q.RetainedMessages, n)
	}
	if dlq.State.Available != int64(len(m.dlq)) {
		m.failf("DLQ holds %d dead letters, model %d", dlq.State.Available, len(m.dlq))
	}
	for _, name := range m.tagNames() {
		if m.insp != nil {
			n, err := m.insp.CheckTag(m.b.ctx, m.q, name)
			if err != nil {
				m.failf("tag %s: %v", name, err)
			}
			if n > 0 {
				m.inspected++
			}
		}
		tg := m.tags[name]
		got, err := m.b.s.GetTag(m.b.ctx, m.q, name)
		if err != nil {
			m.failf("get tag %s: %v", name, err)
		}
		st := got.State
		st.OldestAvailableAge = 0
		if want := m.expectState(tg); st != want {
			m.failf("tag %s state\n got  %+v\n want %+v", name, st, want)
		}
	}
}

// idLess says whether message id a comes before b (stream ids).
func idLess(a, b string) bool { return streamid.After(b, a) }

// testModel_MovedBackInStreamOrder: dead letters move back in the DLQ's
// order, which need not be the order the model dead-lettered them in: one
// sweep takes a queue's tags in HKEYS order (on Redis, a small hash's
// insertion order; miniredis sorts) and a tag's messages by deadline. The
// model must hold them in stream order all the same, as drop-oldest trims
// them. Here t4 is made before t2, x and y die in both in one sweep (y's
// deadline first), and a send then drops the oldest moved-back entry:
// counted as expired by its own tag (t4 on Redis) and of its own size.
func testModel_MovedBackInStreamOrder(t *testing.T, b *B) {
	m := newModel(t, b, "movedorder", 1, true)
	if m.parts > 1 {
		t.Skip("a scenario of one stream's cap; on partitioned queues the capped model's moves back cover it")
	}
	m.op = "setup"
	require.NoError(t, b.s.DeleteTag(b.ctx, m.q, "default"))
	delete(m.tags, "default")
	for _, name := range []string{"t4", "t2"} {
		_, err := b.s.CreateTag(b.ctx, m.q, tags.TagConfig{Name: name})
		require.NoError(t, err)
		m.tags[name] = &mTag{name: name, held: map[int]*mHeld{}, excluded: map[int]bool{}, vis: -1}
	}
	plain := func(bodies ...string) ([]tags.OutMessage, []*mMsg) {
		out, added := make([]tags.OutMessage, len(bodies)), make([]*mMsg, len(bodies))
		for i, body := range bodies {
			out[i].Body = []byte(body)
			added[i] = &mMsg{body: body, dueMs: m.now}
		}
		return out, added
	}
	m.store(plain("x"+strings.Repeat(".", 50), "y"))
	x, y := 0, 1
	m.check()
	for round := 1; round <= modelMaxRC; round++ {
		vis := int32(0) // available again at once
		if round == modelMaxRC {
			vis = 10
		}
		for _, name := range []string{"t4", "t2"} {
			m.receiveWith(m.tags[name], 10, &vis, false, false)
			m.check()
		}
	}
	for _, h := range m.handles {
		if h.idx == y && h.gen == modelMaxRC {
			m.changeVisibilityWith(h, 5)
		}
	}
	m.check()
	m.advanceBy(10_000)
	m.sweep()
	m.check()
	for _, name := range []string{"t4", "t2"} {
		require.True(t, m.tags[name].held[x].done && m.tags[name].held[y].done, "tag %s dead-lettered both", name)
	}
	require.Len(t, m.dlq, 4)
	m.moveBack()
	m.check()
	m.janitor() // x and y themselves: every tag is done with them
	if n, _ := m.retained(); n != 4 {
		t.Fatalf("retained %d messages after the janitor, want the 4 moved back", n)
	}
	m.store(plain("1", "2", "3", "4", "5", "6", "7")) // one over the cap: drops the oldest moved back
	if n, _ := m.retained(); n != modelMaxMsgs {
		t.Fatalf("model retains %d messages, want %d", n, modelMaxMsgs)
	}
	m.check()
	m.janitor()
	require.Equal(t, int64(1), m.tags["t2"].exp+m.tags["t4"].exp, "expired in all")
}
