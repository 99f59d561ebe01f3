package sqs

import (
	"context"
	"sync"
	"time"
)

// attemptCache keeps the answers of FIFO receives made with a
// ReceiveRequestAttemptId, so that a retry with the same id (say, after a
// lost answer) gets the same messages and receipt handles, as SQS does
// for 5 minutes, while those messages are still in flight. It is per
// process: a retry that reaches another tagqd replica receives anew.
type attemptCache struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]attempt
}

type attempt struct {
	until time.Time
	res   *receiveResult
}

const (
	attemptWindow = 5 * time.Minute
	maxAttempts   = 10000 // entries kept; beyond, the oldest half is dropped
)

func newAttemptCache(now func() time.Time) *attemptCache {
	return &attemptCache{now: now, m: map[string]attempt{}}
}

func (a *attemptCache) get(key string) *receiveResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.m[key]
	if !ok || !a.now().Before(at.until) {
		delete(a.m, key)
		return nil
	}
	return at.res
}

// put keeps res for key until the earlier of the window's end and the
// messages' visibility deadline.
func (a *attemptCache) put(key string, res *receiveResult, visible time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if len(a.m) >= maxAttempts {
		for k, at := range a.m {
			if !now.Before(at.until) || len(a.m) >= maxAttempts/2 {
				delete(a.m, k)
			}
		}
	}
	until := now.Add(min(attemptWindow, visible))
	a.m[key] = attempt{until: until, res: res}
}

// defaultTags remembers queues' default tag names (fixed at creation),
// for the check that a receipt handle used on a queue's own URL is its
// default tag's. Entries live a minute: a queue deleted and made again
// with another default tag is seen within that.
type defaultTags struct {
	engine Engine
	now    func() time.Time
	mu     sync.Mutex
	m      map[string]defaultTag
}

type defaultTag struct {
	name  string
	until time.Time
}

const defaultTagTTL = time.Minute

func newDefaultTags(e Engine, now func() time.Time) *defaultTags {
	return &defaultTags{engine: e, now: now, m: map[string]defaultTag{}}
}

// of is queue's default tag name ("" when it has none, or is gone).
func (d *defaultTags) of(ctx context.Context, queue string) (string, error) {
	d.mu.Lock()
	e, ok := d.m[queue]
	d.mu.Unlock()
	if ok && d.now().Before(e.until) {
		return e.name, nil
	}
	q, err := d.engine.GetQueue(ctx, queue)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.m) >= maxAttempts {
		clear(d.m)
	}
	d.m[queue] = defaultTag{name: q.DefaultTagName, until: d.now().Add(defaultTagTTL)}
	return q.DefaultTagName, nil
}
