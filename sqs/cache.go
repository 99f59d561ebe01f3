package sqs

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// attemptCache keeps the answers of FIFO receives made with a
// ReceiveRequestAttemptId, so that a retry with the same id (say, after a
// lost answer) gets the same messages and receipt handles, as SQS does
// for 5 minutes, while those messages are still in flight. It is per
// process: a retry that reaches another tagqd replica receives anew.
//
// It is bounded by bytes (an answer holds up to ten message bodies of
// 1 MiB): at most maxAttemptBytes in all and maxAttemptBytesPerPrincipal
// for one principal (everyone's, with authentication off), and
// maxAttempts answers. An answer kept past its end (the earlier of the
// window's and its messages' visibility deadline) is dropped when another
// is kept; one that would take its principal over its bound is not kept
// (its retry receives anew, as one without an attempt id), nor is one
// whose messages are visible again at once (visibility 0: a retry could
// only hand out what others may hold). Beyond the overall bound the
// answers nearest their end make room.
type attemptCache struct {
	now   func() time.Time
	mu    sync.Mutex
	m     map[string]*attempt
	byEnd attemptHeap // soonest end first
	bytes int64
	of    map[string]int64 // bytes by principal
}

type attempt struct {
	key, principal string
	until          time.Time
	res            *receiveResult
	size           int64
	index          int // in byEnd
}

const (
	attemptWindow = 5 * time.Minute
	maxAttempts   = 10000 // answers kept

	// maxAttemptBytes and maxAttemptBytesPerPrincipal bound the answers
	// kept, as attemptSize counts them.
	maxAttemptBytes             = 64 << 20
	maxAttemptBytesPerPrincipal = 16 << 20
)

func newAttemptCache(now func() time.Time) *attemptCache {
	return &attemptCache{now: now, m: map[string]*attempt{}, of: map[string]int64{}}
}

func (a *attemptCache) get(key string) *receiveResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.m[key]
	if !ok {
		return nil
	}
	if !a.now().Before(at.until) {
		a.drop(at)
		return nil
	}
	return at.res
}

// put keeps res, received by principal, for key until the earlier of the
// window's end and the messages' visibility deadline.
func (a *attemptCache) put(key, principal string, res *receiveResult, visible time.Duration) {
	if visible <= 0 {
		return
	}
	size := attemptSize(key, res)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for len(a.byEnd) > 0 && !now.Before(a.byEnd[0].until) { // ended
		a.drop(a.byEnd[0])
	}
	if old, ok := a.m[key]; ok {
		a.drop(old)
	}
	if a.of[principal]+size > maxAttemptBytesPerPrincipal || size > maxAttemptBytes {
		return
	}
	for len(a.byEnd) > 0 && (a.bytes+size > maxAttemptBytes || len(a.m) >= maxAttempts) {
		a.drop(a.byEnd[0])
	}
	at := &attempt{key: key, principal: principal, until: now.Add(min(attemptWindow, visible)), res: res, size: size}
	a.m[key] = at
	heap.Push(&a.byEnd, at)
	a.bytes += size
	a.of[principal] += size
}

// drop forgets at (the lock held).
func (a *attemptCache) drop(at *attempt) {
	delete(a.m, at.key)
	heap.Remove(&a.byEnd, at.index)
	a.bytes -= at.size
	if a.of[at.principal] -= at.size; a.of[at.principal] <= 0 {
		delete(a.of, at.principal)
	}
}

// attemptSize is about what a kept answer holds in memory: its strings,
// and a little for each message's and attribute's own structure.
func attemptSize(key string, res *receiveResult) int64 {
	const overhead = 128
	n := int64(len(key) + overhead)
	for _, m := range res.Messages {
		n += int64(len(m.MessageID)+len(m.ReceiptHandle)+len(m.MD5OfBody)+len(m.Body)+len(m.MD5OfMessageAttributes)) + overhead
		for k, v := range m.Attributes {
			n += int64(len(k)+len(v)) + overhead
		}
		for k, v := range m.MessageAttributes {
			n += int64(len(k)+len(v.DataType)+len(v.BinaryValue)) + overhead
			if v.StringValue != nil {
				n += int64(len(*v.StringValue))
			}
			for _, s := range v.StringListValues {
				n += int64(len(s)) + 16
			}
			for _, b := range v.BinaryListValues {
				n += int64(len(b)) + 24
			}
		}
	}
	return n
}

// attemptHeap orders answers by their end (container/heap).
type attemptHeap []*attempt

func (h attemptHeap) Len() int           { return len(h) }
func (h attemptHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h attemptHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *attemptHeap) Push(x any) {
	at := x.(*attempt)
	at.index = len(*h)
	*h = append(*h, at)
}
func (h *attemptHeap) Pop() any {
	old := *h
	at := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return at
}

// defaultTags remembers what the endpoint checks of queues on every
// request without asking the gRPC server: their default tag's name (for the
// check that a receipt handle used on a queue's own URL is its default
// tag's) and whether they are FIFO (topic) queues (for the check that a
// URL's .fifo says so: target). Both are fixed at creation. Entries live
// a minute: a queue deleted and made again otherwise is seen within that.
// A queue that does not exist is not remembered.
type defaultTags struct {
	engine Engine
	now    func() time.Time
	mu     sync.Mutex
	m      map[string]defaultTag
}

type defaultTag struct {
	name  string
	fifo  bool
	until time.Time
}

const defaultTagTTL = time.Minute

func newDefaultTags(e Engine, now func() time.Time) *defaultTags {
	return &defaultTags{engine: e, now: now, m: map[string]defaultTag{}}
}

// of is queue's default tag name ("" when it has none, or is gone).
func (d *defaultTags) of(ctx context.Context, queue string) (string, error) {
	q, err := d.get(ctx, queue)
	return q.name, err
}

// get is what is remembered of queue, read from the engine when it is not
// (a queue that does not exist: the engine's error).
func (d *defaultTags) get(ctx context.Context, queue string) (defaultTag, error) {
	d.mu.Lock()
	e, ok := d.m[queue]
	d.mu.Unlock()
	if ok && d.now().Before(e.until) {
		return e, nil
	}
	q, err := d.engine.GetQueue(ctx, queue)
	if err != nil {
		return defaultTag{}, err
	}
	e = defaultTag{name: q.DefaultTagName, fifo: q.TopicQueue, until: d.now().Add(defaultTagTTL)}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.m) >= maxAttempts {
		clear(d.m)
	}
	d.m[queue] = e
	return e, nil
}
