package redisstore

import (
	"context"
	"time"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/wake"
)

// Reader receives one tag's messages for a consume stream: a long poll
// that stays registered with the wake-up hub between receives, so a stream
// that waits, receives and waits again costs no registration (and no
// watch set-up) each time. Between receives it takes no wake-ups, which go
// to the receives and readers that are waiting.
type Reader struct {
	s          *Store
	queue, tag string
	visMs      int64
	w          *wake.Waiter
	off        *offer // to sends, while it waits (deliver.go)
}

// NewReader opens a reader of tag ("" = the queue's default tag, resolved
// now) with an optional visibility override. It checks names and ranges;
// an unknown queue or tag is reported by the first Receive. Close it when
// done.
func (s *Store) NewReader(ctx context.Context, queue, tag string, visibilitySeconds *int32) (*Reader, error) {
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if tag != "" {
		if e := tags.CheckName("tag", "tag", tag); e != nil {
			return nil, e
		}
	}
	if e := tags.CheckRange("visibility_seconds", visibilitySeconds, 0, tags.MaxVisibilitySeconds); e != nil {
		return nil, e
	}
	tag, err := s.resolveTag(ctx, queue, tag)
	if err != nil {
		return nil, err
	}
	r := &Reader{s: s, queue: queue, tag: tag, visMs: -1}
	if visibilitySeconds != nil {
		r.visMs = int64(*visibilitySeconds) * 1000
	}
	r.off = newOffer(queue, tag, "", r.visMs)
	if r.w, err = s.register(ctx, queue, tag); err != nil {
		return nil, err
	}
	s.waiters.SetIdle(r.w, true)
	return r, nil
}

// Tag is the tag the reader reads (the default tag's name, if it was
// opened with "").
func (r *Reader) Tag() string { return r.tag }

// Receive hands out 1 to n messages (1-100), waiting as long as it takes
// for the first: until ctx ends (its error), or the store closes
// (tags.ErrClosed). While the tag's read quota is spent it waits for the next
// second (of the Redis clock, as this process sees it) instead of failing.
func (r *Reader) Receive(ctx context.Context, n int) ([]tags.Message, error) {
	if n < 1 || n > tags.MaxBatchEntries {
		return nil, tags.Invalid(tags.ReasonInvalidArgumentRange, "max_messages", "max_messages must be between 1 and %d, got %d",
			tags.MaxBatchEntries, n)
	}
	h := r.s.waiters
	h.SetIdle(r.w, false) // before the first attempt: whatever comes after it wakes us
	defer h.SetIdle(r.w, true)
	// A receive that ran must be heard out: cancelled mid-call, its
	// messages would be in flight with nobody to hand them to until their
	// deadline. Only the wait is cut short by ctx.
	sctx := context.WithoutCancel(ctx)
	woken := false
	var got *delivery // what a send received for this reader while it waited
	for {
		var res receiveResult
		var seen wake.Counts
		if got != nil {
			// Its messages are handed out whatever ctx says now (the
			// caller gives back what it cannot pass on).
			res, seen = r.s.received(ctx, r.off, got), got.seen
			got = nil
		} else {
			// Nor does one start once ctx has ended (a wake-up and the end of
			// the stream can come together): its messages would go back with
			// a receive counted that no client saw.
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if _, left, ok := r.s.spentFor(tagKey{r.queue, r.tag}); ok {
				if err := r.pause(ctx, left); err != nil {
					return nil, err
				}
				continue
			}
			if !woken && !r.mayHaveMore() {
				// A read now would find nothing (another reader of the tag here
				// found it drained, and nothing came since): wait, for the
				// earliest deadline the last script reported too.
				if hn, ok := r.s.hintOf(r.queue, r.tag, time.Now()); ok {
					h.NoteDeadline(r.w, max(time.Until(r.s.wakeAt(r.queue, hn)), time.Millisecond))
				}
				var err error
				if got, err = r.wait(ctx, n); err != nil {
					return nil, err
				}
				woken = got == nil // a wake-up is for this reader to act on: it reads
				continue
			}
			woken = false
			seen = h.Counts(r.w) // before the read: what comes after it is news
			var err error
			if res, err = r.s.receiveOnce(sctx, r.queue, r.tag, "", n, r.visMs); err != nil {
				return nil, err
			}
		}
		if len(res.msgs) < n && !res.more && !res.spent() {
			h.NoteDrained(r.w, seen)
		}
		if len(res.msgs) == 0 && res.spent() {
			// The tag's read quota is spent: a stream waits for the next
			// second rather than fail.
			if err := r.pause(ctx, time.Duration(res.retryMs)*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		}
		if len(res.msgs) > 0 {
			if len(res.msgs) == n || res.more {
				h.WakeNext(r.w) // there may be more for another waiter
			}
			return res.msgs, nil
		}
		if res.more {
			continue
		}
		if res.hintMs < infMs {
			h.NoteDeadline(r.w, max(time.Duration(res.hintMs-res.nowMs)*time.Millisecond, time.Millisecond))
		}
		var err error
		if got, err = r.wait(ctx, n); err != nil {
			return nil, err
		}
		woken = got == nil
	}
}

// mayHaveMore: a read now may find something: the tag was not found
// drained since the watch last saw something, or a redelivery may be due.
func (r *Reader) mayHaveMore() bool {
	return !r.s.waiters.Drained(r.w) || r.s.dueMaybe(r.queue, r.tag)
}

// wait waits for a wake-up (nil) or for what a send received for the
// reader (see Store.await): when that holds messages they come back
// without error even if ctx ended or the store closed meanwhile (the
// caller gives back what it cannot pass on).
func (r *Reader) wait(ctx context.Context, n int) (*delivery, error) {
	d, why := r.s.await(ctx, r.w, r.off, n, nil)
	switch why {
	case awaitClosed:
		return nil, tags.ErrClosed
	case awaitDone:
		return nil, ctx.Err()
	}
	return d, nil
}

// pause waits d (the rest of a second whose read quota is spent), or,
// under the test clock, which tests move at will, at most quotaPoll.
func (r *Reader) pause(ctx context.Context, d time.Duration) error {
	if r.s.rdb.testClock {
		d = min(d, quotaPoll)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-r.w.Closed():
		return tags.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// quotaPoll is how often a Reader paused by a spent read quota looks again
// under the test clock.
const quotaPoll = 20 * time.Millisecond

// Close unregisters the reader. Safe to call more than once.
func (r *Reader) Close() {
	if r.w != nil {
		r.s.waiters.Unregister(r.w)
		r.w = nil
	}
}

// The Store is a storage for the server and for the background worker.
var (
	_ tags.Storage    = (*Store)(nil)
	_ tags.Maintainer = (*Store)(nil)
	_ tags.TagReader  = (*Reader)(nil)
)

// OpenReader is NewReader as tags.Storage has it.
func (s *Store) OpenReader(ctx context.Context, queue, tag string, visibilitySeconds *int32) (tags.TagReader, error) {
	r, err := s.NewReader(ctx, queue, tag, visibilitySeconds)
	if err != nil {
		return nil, err
	}
	n, err := s.partitions(ctx, queue)
	if err != nil || n == 1 {
		return r, err
	}
	// A partitioned queue's stream reads every partition.
	r.Close()
	return s.newPartReader(ctx, queue, r.tag, n, r.visMs)
}
