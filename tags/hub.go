package tags

import (
	"context"
	"errors"
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
	ready  chan struct{} // closed once the stream tails are known
	err    error         // set before ready closes
	dead   bool
}

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
		w = &watch{queue: queue, tags: map[string][]*waiter{}, timers: map[string]*tagTimer{}, ready: make(chan struct{})}
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
	if len(w.tags[wt.tag]) == 0 {
		delete(w.tags, wt.tag)
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
	signal := func(list []*waiter) {
		left := n
		for _, wt := range list {
			if left == 0 {
				return
			}
			if wt.idle {
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
	w := wt.w
	if w.dead {
		return
	}
	at := time.Now().Add(d)
	if tt := w.timers[wt.tag]; tt != nil {
		if !tt.at.After(at) {
			return
		}
		tt.t.Stop()
	}
	tag := wt.tag
	tt := &tagTimer{at: at}
	tt.t = time.AfterFunc(d, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if w.timers[tag] == tt {
			delete(w.timers, tag)
		}
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

// wakeOne signals one local waiter of (queue, tag), if any.
func (h *hub) wakeOne(queue, tag string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.watches[queue]; w != nil {
		h.wakeLocked(w, tag, 1)
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
				h.wakeLocked(w, "", len(st.Messages))
				continue
			}
			lastW = last
			for _, m := range st.Messages {
				if t, _ := m.Values["t"].(string); t != "" {
					h.s.forgetHint(w.queue, t) // something of t may be due sooner
					h.wakeLocked(w, t, 1)
				}
			}
		}
		h.mu.Unlock()
	}
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
