// Package wake wakes waiting receives without polling Redis: long polls
// (ReceiveMessage with a wait) and Consume streams register as waiters of
// a queue's tag, and one watch per queue (one blocked XREAD on the queue's
// stream and its wake stream) signals them when something may be there for
// them. What a woken waiter finds is the storage engine's business (tags/redisstore):
// this package only says when to look.
package wake

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tagq/tagq/tags/streamid"
)

// Config is what a Hub needs of the storage.
type Config struct {
	// Client reads a stream's tail when a watch starts.
	Client redis.UniversalClient
	// Blocking runs the watches' XREAD BLOCK, one connection per queue
	// with waiters (a pool of its own: see redisstore.Config.Blocking).
	Blocking redis.UniversalClient
	// Keys names queue's message stream and wake stream.
	Keys func(queue string) (stream, wake string)
	// Hints is told what the wake stream says of a tag's next deadline.
	Hints Hints
	// IgnoreDeadlines: wake-stream deadlines are not on Redis's clock (a
	// test clock), so an entry wakes a waiter at once, whatever its time.
	IgnoreDeadlines bool
	// MaxWake bounds the waiters one event wakes and a watch's read.
	// Default 100.
	MaxWake int
	// Log. Default slog.Default().
	Log *slog.Logger
}

// Hints keeps the storage's cached "nothing of this tag is due before"
// times: a wake-stream entry lowers one to a deadline set elsewhere, or
// forgets it (something is due now).
type Hints interface {
	Lower(queue, tag string, at time.Time)
	Forget(queue, tag string)
}

// Hub wakes waiting receives without polling. For each queue with waiters
// in this process, one goroutine blocks in XREAD on the queue's stream and
// wake stream, on the Blocking client (one connection per queue, never one
// per waiter), and signals local waiters: a new message wakes up to one
// waiter per message on every tag; a wake-stream entry (nack, new earliest
// deadline, on any process) wakes one waiter of its tag. A woken waiter runs
// the receive script again; one that finds nothing waits again, until the
// earliest deadline the script reported or its own long-poll deadline.
type Hub struct {
	cfg     Config
	mu      sync.Mutex
	watches map[string]*watch
	closed  bool
	stop    chan struct{}
	// epochs: queue -> the epoch of its running watch (see Epoch); seq
	// numbers watches as they start.
	epochs sync.Map
	seq    uint64
}

type watch struct {
	queue  string
	epoch  uint64 // this watch's number (see Hub.Epoch)
	tags   map[string][]*Waiter
	timers map[string]*tagTimer // per tag: wake one waiter at the earliest known deadline
	n      int
	// The watch's counts of what it saw: new stream entries (entries) and
	// everything else that may make a tag's messages due (events: wake-
	// stream entries, deadlines, nacks here). drained: per tag, the counts
	// when a read that then found the tag drained began (see Reader).
	entries, events uint64
	drained         map[string]Counts
	// announced is the last entry this process's sends added and told the
	// watch of (sent); the watch's read skips up to it.
	announced string
	// sending counts this process's sends in progress (Sending); held is
	// the last entry the watch read meanwhile beyond announced ("" none),
	// news unless a send in progress announces it.
	sending int
	held    string
	ready   chan struct{} // closed once the stream tails are known
	err     error         // set before ready closes
	dead    bool
}

// Counts is what a watch has seen: new stream entries, and everything
// else that may make a tag's messages due (see Hub.Counts).
type Counts struct{ entries, events uint64 }

type tagTimer struct {
	at time.Time
	t  *time.Timer
}

// Waiter is one registered receive (Register).
type Waiter struct {
	ch   chan struct{}
	stop <-chan struct{}
	tag  string
	w    *watch
	idle bool // not receiving now (a consume stream between receives): never signalled
}

// C is signalled when something may be there for the waiter's tag.
func (wt *Waiter) C() <-chan struct{} { return wt.ch }

// Closed is closed when the hub closes: waiters return empty.
func (wt *Waiter) Closed() <-chan struct{} { return wt.stop }

// How long one XREAD blocks: bounds how long a watch lingers after its last
// waiter left.
const watchBlock = 2 * time.Second

// New makes a hub; Close it when done.
func New(cfg Config) *Hub {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.MaxWake <= 0 {
		cfg.MaxWake = 100
	}
	return &Hub{cfg: cfg, watches: map[string]*watch{}, stop: make(chan struct{})}
}

// Register adds a waiter for (queue, tag). When it returns, any message or
// wake-up that arrives later signals the waiter, so the caller must check
// for messages after registering and before waiting.
func (h *Hub) Register(ctx context.Context, queue, tag string) (*Waiter, error) {
	h.mu.Lock()
	w := h.watches[queue]
	if w == nil || w.dead {
		h.seq++
		w = &watch{queue: queue, epoch: h.seq, tags: map[string][]*Waiter{}, timers: map[string]*tagTimer{}, ready: make(chan struct{}),
			drained: map[string]Counts{}}
		if !h.closed {
			h.watches[queue] = w
			go h.run(w)
		} else {
			close(w.ready)
		}
	}
	wt := &Waiter{ch: make(chan struct{}, 1), stop: h.stop, tag: tag, w: w}
	w.tags[tag] = append(w.tags[tag], wt)
	w.n++
	h.mu.Unlock()
	select {
	case <-w.ready:
	case <-ctx.Done():
		h.Unregister(wt)
		return nil, ctx.Err()
	}
	if w.err != nil {
		h.Unregister(wt)
		return nil, w.err
	}
	return wt, nil
}

func (h *Hub) Unregister(wt *Waiter) {
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
		h.epochs.CompareAndDelete(w.queue, w.epoch)
		if h.watches[w.queue] == w {
			delete(h.watches, w.queue)
		}
	}
}

// Epoch names queue's watch while it runs: a number that stays the same
// from when the watch knows the tails of the queue's streams (everything
// written to them later wakes its waiters and reaches Hints) until it
// stops, and is never used again; 0 when no watch runs. The storage
// trusts a cached hint learned while an epoch runs for as long as it does:
// whatever changes it meanwhile comes through the wake stream.
func (h *Hub) Epoch(queue string) uint64 {
	if v, ok := h.epochs.Load(queue); ok {
		return v.(uint64)
	}
	return 0
}

// wake signals up to n waiters of tag ("" = of every tag), first come
// first served, skipping waiters already signalled.
func (h *Hub) wakeLocked(w *watch, tag string, n int) {
	h.wakeOthersLocked(w, tag, n, nil)
}

// wakeOthersLocked is wakeLocked passing over except.
func (h *Hub) wakeOthersLocked(w *watch, tag string, n int, except *Waiter) {
	if tag != "" {
		h.signalLocked(w.tags[tag], n, except)
		return
	}
	for _, list := range w.tags {
		h.signalLocked(list, n, except)
	}
}

// signalLocked signals up to n of a tag's waiters, passing over except.
func (h *Hub) signalLocked(list []*Waiter, n int, except *Waiter) {
	for _, wt := range list {
		if n == 0 {
			return
		}
		if wt.idle || wt == except {
			continue
		}
		select {
		case wt.ch <- struct{}{}:
			n--
		default:
		}
	}
}

// NoteDeadline tells the watch of wt that a message of wt's tag becomes
// visible after d (the receive script's hint): one waiter of the tag is
// woken then, whichever waiters come and go meanwhile.
func (h *Hub) NoteDeadline(wt *Waiter, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deadlineLocked(wt.w, wt.tag, d)
}

// deadlineLocked wakes one waiter of tag on w after d (an earlier deadline
// known for the tag stands).
func (h *Hub) deadlineLocked(w *watch, tag string, d time.Duration) {
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

// SetIdle marks wt as not receiving (true) or receiving again (false). An
// idle waiter is skipped by wake-ups, which go to waiters that will act on
// them; one that stops being idle must try a receive before it waits.
func (h *Hub) SetIdle(wt *Waiter, idle bool) {
	h.mu.Lock()
	wt.idle = idle
	h.mu.Unlock()
}

// Counts is what wt's watch has seen so far, for noteDrained.
func (h *Hub) Counts(wt *Waiter) Counts {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Counts{wt.w.entries, wt.w.events}
}

// noteDrained: a read of wt's tag that began when its watch had seen c
// found the tag drained (it handed out fewer than asked, with nothing more
// to read). Reads that began earlier and end later leave a newer note.
func (h *Hub) NoteDrained(wt *Waiter, c Counts) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d, ok := wt.w.drained[wt.tag]; !ok || c.entries >= d.entries && c.events >= d.events {
		wt.w.drained[wt.tag] = c
	}
}

// drained: a read of wt's tag found it drained, and the watch has seen
// nothing since: no new entry, wake-stream entry, deadline or nack. (Due
// redeliveries the cached hint knows of are the caller's to check.)
func (h *Hub) Drained(wt *Waiter) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := wt.w.drained[wt.tag]
	return ok && d == Counts{wt.w.entries, wt.w.events}
}

// WakeOne signals one local waiter of (queue, tag), if any.
func (h *Hub) WakeOne(queue, tag string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.watches[queue]; w != nil {
		w.events++
		h.wakeLocked(w, tag, 1)
	}
}

// Send is a send in progress, between Sending and SendDone.
type Send struct{ w *watch }

// Sending tells queue's watch, if any, that this process is about to add
// entries to the stream. Until SendDone, what the watch reads of the
// stream may be those entries, whose waiters SendDone wakes: the watch
// holds what it reads meanwhile instead of counting it as news. Without
// that, an entry the watch read before SendDone came was news twice, two
// wake-ups and a read that found nothing.
func (h *Hub) Sending(queue string) Send {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.watches[queue]
	if w == nil || w.dead {
		return Send{}
	}
	w.sending++
	return Send{w: w}
}

// SendDone ends s: this process added entries up to last (a stream id; ""
// when it stored none) and they are stored. One waiter per tag is woken
// now, but for the tags in skip (the send handed their waiters what it
// had itself), and the watch's read need not bring the entries (their
// bodies) back. What the watch held meanwhile beyond last came from
// elsewhere: news, once no send of this process is in progress. It
// returns the watch's counts with the send's entries counted, before
// that news (a read that covers the send's entries saw those).
func (h *Hub) SendDone(queue string, s Send, last string, skip map[string]bool) Counts {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := s.w
	if w == nil {
		// No watch when the send began: one may have started since.
		w = h.watches[queue]
	} else {
		w.sending--
	}
	if w == nil || w.dead {
		return Counts{}
	}
	if last != "" {
		if w.announced == "" || streamid.After(last, w.announced) {
			w.announced = last
		}
		w.entries++
		for tag, list := range w.tags {
			if !skip[tag] {
				h.signalLocked(list, 1, nil)
			}
		}
	}
	seen := Counts{w.entries, w.events}
	if w.held != "" && w.announced != "" && !streamid.After(w.held, w.announced) {
		w.held = "" // all announced
	}
	if w.held != "" && w.sending == 0 {
		w.held = ""
		w.entries++
		h.wakeLocked(w, "", 1)
	}
	return seen
}

// Announced is the last entry SendDone announced for queue's watch ("" none,
// or no watch): what its read skips to.
func (h *Hub) Announced(queue string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.watches[queue]; w != nil {
		return w.announced
	}
	return ""
}

// WakeNext signals one other waiter of wt's tag, if any: wt's receive was
// full, and there may be more for the next.
func (h *Hub) WakeNext(wt *Waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !wt.w.dead {
		h.wakeOthersLocked(wt.w, wt.tag, 1, wt)
	}
}

func (h *Hub) Close() {
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
func (h *Hub) run(w *watch) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer h.epochs.CompareAndDelete(w.queue, w.epoch) // whatever ends it
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	kStream, kWake := h.cfg.Keys(w.queue)
	lastS, errS := h.tail(ctx, kStream)
	lastW, errW := h.tail(ctx, kWake)
	w.err = errors.Join(errS, errW)
	if w.err != nil && ctx.Err() != nil {
		w.err = nil // closing: waiters see the stop signal and return empty
	}
	if w.err == nil {
		h.mu.Lock()
		if !w.dead {
			h.epochs.Store(w.queue, w.epoch)
		}
		h.mu.Unlock()
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
		count := int64(min(w.n, h.cfg.MaxWake))
		h.mu.Unlock()
		res, err := h.cfg.Blocking.XRead(ctx, &redis.XReadArgs{
			Streams: []string{kStream, kWake, lastS, lastW}, Count: count, Block: watchBlock}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			h.cfg.Log.Warn("long-poll watch failed; retrying", "queue", w.queue, "err", err)
			h.mu.Lock()
			w.events++
			h.wakeLocked(w, "", h.cfg.MaxWake) // let waiters retry and see the error
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
			if st.Stream == kStream {
				lastS = last
				if w.announced != "" && !streamid.After(last, w.announced) {
					// Sent by this process, which woke the waiters already
					// (SendDone): go on from its last entry, not reading the
					// bodies in between.
					lastS = w.announced
					continue
				}
				if w.sending > 0 {
					// Perhaps sent by this process, not yet announced:
					// SendDone tells.
					if w.held == "" || streamid.After(last, w.held) {
						w.held = last
					}
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
				if d := wakeDelay(m); d > 0 && !h.cfg.IgnoreDeadlines {
					h.cfg.Hints.Lower(w.queue, t, time.Now().Add(d))
					h.deadlineLocked(w, t, d)
					continue
				}
				h.cfg.Hints.Forget(w.queue, t)
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
	ms, _, ok := streamid.Parse(m.ID)
	if err != nil || !ok || atMs <= int64(ms) {
		return 0
	}
	return time.Duration(atMs-int64(ms)) * time.Millisecond
}

// tail is the id after which new entries of a stream will appear: its last
// generated id, or 0-0 when it does not exist.
func (h *Hub) tail(ctx context.Context, key string) (string, error) {
	info, err := h.cfg.Client.XInfoStream(ctx, key).Result()
	if err == nil {
		if info.LastGeneratedID != "" {
			return info.LastGeneratedID, nil
		}
	} else if !strings.Contains(err.Error(), "no such key") {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if _, ok := err.(redis.Error); !ok {
			return "", err
		}
	}
	// Fallback (or no such key): the last existing entry is as good, since
	// every new entry's id is greater than it.
	msgs, err := h.cfg.Client.XRevRangeN(ctx, key, "+", "-", 1).Result()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", err
	}
	if len(msgs) == 0 {
		return "0-0", nil
	}
	return msgs[0].ID, nil
}

// Waiting is the number of receives waiting on queue in this process
// ("": on every queue).
func (h *Hub) Waiting(queue string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if queue == "" {
		n := 0
		for _, w := range h.watches {
			n += w.n
		}
		return n
	}
	if w := h.watches[queue]; w != nil {
		return w.n
	}
	return 0
}
