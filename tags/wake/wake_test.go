package wake

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// hints records what the hub told the storage's hint cache.
type hints struct {
	mu              sync.Mutex
	lowered, forgot []string
}

func (h *hints) Lower(queue, tag string, _ time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lowered = append(h.lowered, queue+"/"+tag)
}

func (h *hints) Forget(queue, tag string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgot = append(h.forgot, queue+"/"+tag)
}

func (h *hints) seen() (lowered, forgot []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lowered...), append([]string(nil), h.forgot...)
}

func newHub(t *testing.T) (*Hub, redis.UniversalClient, *hints) {
	t.Helper()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	blocking := redis.NewClient(&redis.Options{Addr: m.Addr()})
	hs := &hints{}
	h := New(Config{Client: rdb, Blocking: blocking, Hints: hs,
		Keys: func(q string) (string, string) { return q + ":s", q + ":wk" }})
	t.Cleanup(func() {
		h.Close()
		_ = blocking.Close() // ends a blocked XREAD at once
		_ = rdb.Close()
	})
	return h, rdb, hs
}

func signalled(w *Waiter) bool {
	select {
	case <-w.C():
		return true
	default:
		return false
	}
}

// within waits up to 5 s for w's signal.
func within(t *testing.T, w *Waiter) {
	t.Helper()
	select {
	case <-w.C():
	case <-time.After(5 * time.Second):
		t.Fatal("not woken")
	}
}

// A new stream entry wakes one waiter of each tag (the woken one passes
// a wake-up on with WakeNext when it read all it asked for); a wake-stream
// entry wakes one waiter of its tag only, and a due one makes the hint
// cache forget the tag; Sent wakes at once and the watch skips what it
// announced; a waiter leaving with an unread signal passes it on; Close
// releases every waiter.
func TestHub_WakesOneWaiterPerTagPerEvent(t *testing.T) {
	h, rdb, hs := newHub(t)
	ctx := context.Background()
	a1, err := h.Register(ctx, "q", "a")
	require.NoError(t, err)
	a2, err := h.Register(ctx, "q", "a")
	require.NoError(t, err)
	b1, err := h.Register(ctx, "q", "b")
	require.NoError(t, err)
	require.Equal(t, 3, h.Waiting("q"))
	require.Equal(t, 3, h.Waiting(""))

	require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: "q:s", Values: []any{"b", "x"}}).Err())
	within(t, a1)
	within(t, b1)
	require.False(t, signalled(a2), "one waiter per tag")
	h.WakeNext(a1)
	within(t, a2)

	require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: "q:wk", Values: []any{"t", "b", "at", "0"}}).Err())
	within(t, b1)
	require.False(t, signalled(a1) || signalled(a2), "a wake-up of tag b only")
	_, forgot := hs.seen()
	require.Equal(t, []string{"q/b"}, forgot)

	before := h.Counts(a1)
	id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "q:s", Values: []any{"b", "y"}}).Result()
	require.NoError(t, err)
	h.SendDone("q", Send{}, id, nil) // no send announced: as one begun before the watch
	require.True(t, signalled(a1) || signalled(a2), "a waiter of a is woken")
	require.Equal(t, id, h.Announced("q"))
	require.NotEqual(t, before, h.Counts(a1))

	// Drained: nothing seen since the note; news ends it.
	h.NoteDrained(a1, h.Counts(a1))
	require.True(t, h.Drained(a1))
	h.WakeOne("q", "a")
	require.False(t, h.Drained(a1))

	// A signal left unread on leaving goes to the tag's next waiter.
	signalled(a1)
	signalled(a2)
	h.WakeOne("q", "a")
	first, other := a1, a2
	if signalled(a1) {
		a1.ch <- struct{}{} // put back: a1 leaves without reading it
	} else {
		first, other = a2, a1
	}
	h.Unregister(first)
	within(t, other)
	require.Equal(t, 2, h.Waiting("q"))

	h.Close()
	select {
	case <-b1.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("Close released nobody")
	}
	h.Unregister(other)
	h.Unregister(b1)
	require.Zero(t, h.Waiting(""))
}

// held is what the watch of q holds, read while a send was in progress.
func held(h *Hub, q string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.watches[q]; w != nil {
		return w.held
	}
	return ""
}

// An entry the watch reads while this process's send is in progress is
// news once: SendDone wakes one waiter per tag for the send's entries, and
// the watch, having held what it read, wakes nobody for them. What it held
// beyond the send's last entry came from elsewhere, and wakes a waiter
// once no send is in progress.
func TestHub_AnEntryReadDuringASendIsNewsOnce(t *testing.T) {
	h, rdb, _ := newHub(t)
	ctx := context.Background()
	a1, err := h.Register(ctx, "q", "a")
	require.NoError(t, err)
	a2, err := h.Register(ctx, "q", "a")
	require.NoError(t, err)
	add := func() string {
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "q:s", Values: []any{"b", "x"}}).Result()
		require.NoError(t, err)
		return id
	}
	woken := func() int {
		n := 0
		for _, w := range []*Waiter{a1, a2} {
			if signalled(w) {
				n++
			}
		}
		return n
	}
	heldIs := func(id string) {
		t.Helper()
		require.Eventually(t, func() bool { return held(h, "q") == id }, 5*time.Second, time.Millisecond,
			"the watch read the entry and held it")
	}

	// Ours, read by the watch before SendDone: one wake-up, one count.
	before := h.Counts(a1)
	s := h.Sending("q")
	id := add()
	heldIs(id)
	require.Zero(t, woken(), "the watch woke nobody for an entry a send in progress may have added")
	h.SendDone("q", s, id, nil)
	require.Equal(t, 1, woken())
	require.Equal(t, before.entries+1, h.Counts(a1).entries)
	require.Empty(t, held(h, "q"))

	// Another process's entry beyond ours: news too, once.
	s = h.Sending("q")
	ours := add()
	theirs := add()
	heldIs(theirs)
	h.SendDone("q", s, ours, nil)
	require.Equal(t, 2, woken(), "a wake-up for ours and one for theirs")
	require.Empty(t, held(h, "q"))

	// A send that stored nothing: what the watch held is news. With two
	// sends in progress, the first to end does not decide for the second.
	s1, s2 := h.Sending("q"), h.Sending("q")
	theirs = add()
	heldIs(theirs)
	h.SendDone("q", s1, "", nil)
	require.Zero(t, woken(), "another send in progress may yet announce it")
	h.SendDone("q", s2, "", nil)
	require.Equal(t, 1, woken())

	// The tags a send delivered to are passed over; the counts it returns
	// include its entries.
	b1, err := h.Register(ctx, "q", "b")
	require.NoError(t, err)
	s = h.Sending("q")
	id = add()
	seen := h.SendDone("q", s, id, map[string]bool{"a": true})
	require.Zero(t, woken(), "tag a was delivered to")
	require.True(t, signalled(b1))
	require.Equal(t, h.Counts(a1), seen)
}

// A wake-stream entry with a deadline ahead lowers the tag's hint and
// wakes a waiter at the deadline, not before (load only delays it).
func TestHub_ADeadlineSetElsewhereWakesAtItsTime(t *testing.T) {
	h, rdb, hs := newHub(t)
	ctx := context.Background()
	w, err := h.Register(ctx, "q", "a")
	require.NoError(t, err)
	now, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	id, at := now.UnixMilli(), now.UnixMilli()+300
	start := time.Now()
	require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: "q:wk", ID: strconv.FormatInt(id, 10) + "-0",
		Values: []any{"t", "a", "at", strconv.FormatInt(at, 10)}}).Err())
	within(t, w)
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond, "woken before the deadline")
	lowered, forgot := hs.seen()
	require.Equal(t, []string{"q/a"}, lowered)
	require.Empty(t, forgot)
}

// A queue's watch has an epoch from when it knows the streams' tails
// until it stops (the storage trusts hints learned under it that long);
// the next watch of the queue has another.
func TestEpochNamesARunningWatch(t *testing.T) {
	h, _, _ := newHub(t)
	ctx := context.Background()
	require.Zero(t, h.Epoch("q"), "no watch")
	w1, err := h.Register(ctx, "q", "t")
	require.NoError(t, err)
	e1 := h.Epoch("q")
	require.NotZero(t, e1, "a waiter registered: its watch runs")
	w2, err := h.Register(ctx, "q", "u")
	require.NoError(t, err)
	require.Equal(t, e1, h.Epoch("q"), "one watch per queue")
	require.Zero(t, h.Epoch("other"))
	h.Unregister(w1)
	require.Equal(t, e1, h.Epoch("q"), "a waiter is left")
	h.Unregister(w2)
	require.Zero(t, h.Epoch("q"), "the watch stopped with its last waiter")
	w3, err := h.Register(ctx, "q", "t")
	require.NoError(t, err)
	defer h.Unregister(w3)
	require.NotZero(t, h.Epoch("q"))
	require.NotEqual(t, e1, h.Epoch("q"), "a new watch, a new epoch")
}
