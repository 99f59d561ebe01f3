package tags

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// hub wakes waiting receives without polling. For each queue with waiters
// in this process, one goroutine blocks in XREAD on the queue's stream and
// wake stream, on the Blocking client (one connection per queue, never one
// per waiter), and signals local waiters: a new message wakes up to one
// waiter per message on every tag; a wake-stream entry (nack, new earliest
// deadline, on any process) wakes one waiter of its tag. A woken waiter runs
// the receive script again; one that finds nothing waits again, until the
// earliest deadline the script reported or its own long-poll deadline.
type hub struct {
	s       *Store
	mu      sync.Mutex
	watches map[string]*watch
	closed  bool
	stop    chan struct{}
}

type watch struct {
	queue  string
	tags   map[string][]*waiter
	timers map[string]*tagTimer // per tag: wake one waiter at the earliest known deadline
	n      int
	// The watch's counts of what it saw: new stream entries (entries) and
	// everything else that may make a tag's messages due (events: wake-
	// stream entries, deadlines, nacks here). drained: per tag, the counts
	// when a read that then found the tag drained began (see Reader).
	entries, events uint64
	drained         map[string]watchCounts
	// announced is the last entry this process's sends added and told the
	// watch of (sent); the watch's read skips up to it.
	announced string
	ready     chan struct{} // closed once the stream tails are known
	err       error         // set before ready closes
	dead      bool
}

type watchCounts struct{ entries, events uint64 }

type tagTimer struct {
	at time.Time
	t  *time.Timer
}

type waiter struct {
	ch   chan struct{}
	stop <-chan struct{}
	tag  string
	w    *watch
	idle bool // not receiving now (a consume stream between receives): never signalled
}

// How long one XREAD blocks: bounds how long a watch lingers after its last
// waiter left.
const watchBlock = 2 * time.Second

func newHub(s *Store) *hub {
	return &hub{s: s, watches: map[string]*watch{}, stop: make(chan struct{})}
}

// register adds a waiter for (queue, tag). When it returns, any message or
// wake-up that arrives later signals the waiter, so the caller must check
// for messages after registering and before waiting.
func (h *hub) register(ctx context.Context, queue, tag string) (*waiter, error) {
	h.mu.Lock()
	w := h.watches[queue]
	if w == nil || w.dead {
		w = &watch{queue: queue, tags: map[string][]*waiter{}, timers: map[string]*tagTimer{}, ready: make(chan struct{}),
			drained: map[string]watchCounts{}}
		if !h.closed {
			h.watches[queue] = w
			go h.run(w)
		} else {
			close(w.ready)
		}
	}
	wt := &waiter{ch: make(chan struct{}, 1), stop: h.stop, tag: tag, w: w}
	w.tags[tag] = append(w.tags[tag], wt)
	w.n++
	h.mu.Unlock()
	select {
	case <-w.ready:
	case <-ctx.Done():
		h.unregister(wt)
		return nil, ctx.Err()
	}
	if w.err != nil {
		h.unregister(wt)
		return nil, w.err
	}
	return wt, nil
}

func (h *hub) unregister(wt *waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := wt.w
	list := w.tags[wt.tag]
	for i, x := range list {
		if x == wt {
			w.tags[wt.tag] = append(list[:i:i], list[i+1:]...)
			w.n--
			break
		}
	}
	select {
	case <-wt.ch:
		// Signalled, and leaving without looking (its call ended): a
		// wake-up goes to one waiter only, so pass it on.
		h.wakeLocked(w, wt.tag, 1)
	default:
	}
	if len(w.tags[wt.tag]) == 0 {
		delete(w.tags, wt.tag)
		delete(w.drained, wt.tag)
		if tt := w.timers[wt.tag]; tt != nil {
			tt.t.Stop()
			delete(w.timers, wt.tag)
		}
	}
	if w.n == 0 {
		w.dead = true
		if h.watches[w.queue] == w {
			delete(h.watches, w.queue)
		}
	}
}

// wake signals up to n waiters of tag ("" = of every tag), first come
// first served, skipping waiters already signalled.
func (h *hub) wakeLocked(w *watch, tag string, n int) {
	h.wakeOthersLocked(w, tag, n, nil)
}

// wakeOthersLocked is wakeLocked passing over except.
func (h *hub) wakeOthersLocked(w *watch, tag string, n int, except *waiter) {
	signal := func(list []*waiter) {
		left := n
		for _, wt := range list {
			if left == 0 {
				return
			}
			if wt.idle || wt == except {
				continue
			}
			select {
			case wt.ch <- struct{}{}:
				left--
			default:
			}
		}
	}
	if tag != "" {
		signal(w.tags[tag])
		return
	}
	for _, list := range w.tags {
		signal(list)
	}
}

// noteDeadline tells the watch of wt that a message of wt's tag becomes
// visible after d (the receive script's hint): one waiter of the tag is
// woken then, whichever waiters come and go meanwhile.
func (h *hub) noteDeadline(wt *waiter, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deadlineLocked(wt.w, wt.tag, d)
}

// deadlineLocked wakes one waiter of tag on w after d (an earlier deadline
// known for the tag stands).
func (h *hub) deadlineLocked(w *watch, tag string, d time.Duration) {
	if w.dead {
		return
	}
	at := time.Now().Add(d)
	if tt := w.timers[tag]; tt != nil {
		if !tt.at.After(at) {
			return
		}
		tt.t.Stop()
	}
	tt := &tagTimer{at: at}
	tt.t = time.AfterFunc(d, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if w.timers[tag] == tt {
			delete(w.timers, tag)
		}
		w.events++
		h.wakeLocked(w, tag, 1)
	})
	w.timers[tag] = tt
}

// setIdle marks wt as not receiving (true) or receiving again (false). An
// idle waiter is skipped by wake-ups, which go to waiters that will act on
// them; one that stops being idle must try a receive before it waits.
func (h *hub) setIdle(wt *waiter, idle bool) {
	h.mu.Lock()
	wt.idle = idle
	h.mu.Unlock()
}

// counts is what wt's watch has seen so far, for noteDrained.
func (h *hub) counts(wt *waiter) watchCounts {
	h.mu.Lock()
	defer h.mu.Unlock()
	return watchCounts{wt.w.entries, wt.w.events}
}

// noteDrained: a read of wt's tag that began when its watch had seen c
// found the tag drained (it handed out fewer than asked, with nothing more
// to read). Reads that began earlier and end later leave a newer note.
func (h *hub) noteDrained(wt *waiter, c watchCounts) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d, ok := wt.w.drained[wt.tag]; !ok || c.entries >= d.entries && c.events >= d.events {
		wt.w.drained[wt.tag] = c
	}
}

// drained: a read of wt's tag found it drained, and the watch has seen
// nothing since: no new entry, wake-stream entry, deadline or nack. (Due
// redeliveries the cached hint knows of are the caller's to check.)
func (h *hub) drained(wt *waiter) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := wt.w.drained[wt.tag]
	return ok && d == watchCounts{wt.w.entries, wt.w.events}
}

// wakeOne signals one local waiter of (queue, tag), if any.
func (h *hub) wakeOne(queue, tag string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.watches[queue]; w != nil {
		w.events++
		h.wakeLocked(w, tag, 1)
	}
}

// sent tells queue's watch, if any, that this process added entries up to
// last (a stream id) and they are stored: its waiters are woken now, one per
// tag, and the watch's read need not bring them (their bodies) back.
func (h *hub) sent(queue, last string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.watches[queue]
	if w == nil || w.dead {
		return
	}
	if w.announced == "" || idAfter(last, w.announced) {
		w.announced = last
	}
	w.entries++
	h.wakeLocked(w, "", 1)
}

// wakeNext signals one other waiter of wt's tag, if any: wt's receive was
// full, and there may be more for the next.
func (h *hub) wakeNext(wt *waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !wt.w.dead {
		h.wakeOthersLocked(wt.w, wt.tag, 1, wt)
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
}

// run is the watch's goroutine. Close does not wait for it: a blocked XREAD
// only notices the cancel when it returns (within watchBlock, or at once
// when the caller closes the Blocking client).
func (h *hub) run(w *watch) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	k := h.s.qkeys(w.queue)
	lastS, errS := h.tail(ctx, k.stream)
	lastW, errW := h.tail(ctx, k.wake)
	w.err = errors.Join(errS, errW)
	if w.err != nil && ctx.Err() != nil {
		w.err = nil // closing: waiters see the stop signal and return empty
	}
	close(w.ready)
	if w.err != nil {
		h.mu.Lock()
		w.dead = true
		if h.watches[w.queue] == w {
			delete(h.watches, w.queue)
		}
		h.mu.Unlock()
		return
	}
	for {
		h.mu.Lock()
		if w.dead || h.closed {
			h.mu.Unlock()
			return
		}
		count := int64(min(w.n, MaxBatchEntries))
		h.mu.Unlock()
		res, err := h.s.blocking.XRead(ctx, &redis.XReadArgs{
			Streams: []string{k.stream, k.wake, lastS, lastW}, Count: count, Block: watchBlock}).Result()
		if isNil(err) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			h.s.log.Warn("long-poll watch failed; retrying", "queue", w.queue, "err", err)
			h.mu.Lock()
			w.events++
			h.wakeLocked(w, "", MaxBatchEntries) // let waiters retry and see the error
			h.mu.Unlock()
			select {
			case <-time.After(250 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			continue
		}
		h.mu.Lock()
		for _, st := range res {
			if len(st.Messages) == 0 {
				continue
			}
			last := st.Messages[len(st.Messages)-1].ID
			if st.Stream == k.stream {
				lastS = last
				if w.announced != "" && !idAfter(last, w.announced) {
					// Sent by this process, which woke the waiters already
					// (sent): go on from its last entry, not reading the
					// bodies in between.
					lastS = w.announced
					continue
				}
				// One waiter per tag: one that reads all it asked for wakes
				// the next (wakeNext), so no more read than there is for.
				w.entries++
				h.wakeLocked(w, "", 1)
				continue
			}
			lastW = last
			for _, m := range st.Messages {
				t, _ := m.Values["t"].(string)
				if t == "" {
					continue
				}
				// Something of t is due at "at" (Redis's ms); written at the
				// entry's id ms. Due now (a nack): a waiter of t looks at
				// once. Later (a receive's or an extend's deadline): t's
				// hint comes down to it and a waiter looks then.
				if d := wakeDelay(m); d > 0 && !h.s.rdb.testClock { // a test clock's "at" is not Redis's
					h.s.lowerHint(w.queue, t, time.Now().Add(d))
					h.deadlineLocked(w, t, d)
					continue
				}
				h.s.forgetHint(w.queue, t)
				w.events++
				h.wakeLocked(w, t, 1)
			}
		}
		h.mu.Unlock()
	}
}

// wakeDelay is how long after it was written a wake-stream entry's "at"
// falls (0: due then, or unreadable).
func wakeDelay(m redis.XMessage) time.Duration {
	at, _ := m.Values["at"].(string)
	atMs, err := strconv.ParseInt(at, 10, 64)
	ms, _, ok := parseID(m.ID)
	if err != nil || !ok || atMs <= int64(ms) {
		return 0
	}
	return time.Duration(atMs-int64(ms)) * time.Millisecond
}

// tail is the id after which new entries of a stream will appear: its last
// generated id, or 0-0 when it does not exist.
func (h *hub) tail(ctx context.Context, key string) (string, error) {
	info, err := h.s.rdb.XInfoStream(ctx, key).Result()
	if err == nil {
		if info.LastGeneratedID != "" {
			return info.LastGeneratedID, nil
		}
	} else if !strings.Contains(err.Error(), "no such key") {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if _, ok := err.(redis.Error); !ok {
			return "", StorageError(err)
		}
	}
	// Fallback (or no such key): the last existing entry is as good, since
	// every new entry's id is greater than it.
	msgs, err := h.s.rdb.XRevRangeN(ctx, key, "+", "-", 1).Result()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", StorageError(err)
	}
	if len(msgs) == 0 {
		return "0-0", nil
	}
	return msgs[0].ID, nil
}

// waiting is the number of receives waiting on queue in this process.
func (h *hub) waiting(queue string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.watches[queue]; w != nil {
		return w.n
	}
	return 0
}

// Waiting is the number of receives waiting in this process, on all queues.
func (s *Store) Waiting() int {
	h := s.waiters
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, w := range h.watches {
		n += w.n
	}
	return n
}
