package redisstore

import (
	"context"
	"reflect"
	"time"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/wake"
)

// Receives from a partitioned queue (partition.go): a receive gathers from
// every partition, each call starting at the next partition in turn, so
// that none starves and a busy one hides another's messages for one call
// at most. It asks a partition only for what it still lacks, and skips a
// partition its watch found drained (nothing new since, no redelivery
// due): one round trip per partition that may have something. A waiting
// receive or Consume stream is registered with every partition's watch
// and wakes on any (it takes no deliveries from sends: deliver.go's
// offers are a single queue's).

// partReader reads one tag of a partitioned queue: a Consume stream's, or
// a long poll's while it waits.
type partReader struct {
	s     *Store
	queue string
	tag   string
	visMs int64
	subs  []string
	ws    []*wake.Waiter
	woken []bool // a wake-up came for the partition: read it
	next  int    // the partition the next receive starts at
}

// newPartReader registers a reader of tag (resolved) with each of queue's
// n partitions.
func (s *Store) newPartReader(ctx context.Context, queue, tag string, n int, visMs int64) (*partReader, error) {
	r := &partReader{s: s, queue: queue, tag: tag, visMs: visMs, subs: partNames(queue, n), woken: make([]bool, n),
		next: s.nextPart(queue+partSep+tag, n)}
	for k, sub := range r.subs {
		w, err := s.register(ctx, sub, tag)
		if err != nil {
			r.Close()
			return nil, err
		}
		s.waiters.SetIdle(w, true)
		r.ws = append(r.ws, w)
		r.woken[k] = true // not read yet: read it
	}
	return r, nil
}

// Tag is the tag the reader reads.
func (r *partReader) Tag() string { return r.tag }

// Receive hands out 1 to n messages (1-100), waiting as long as it takes
// for the first (see Reader.Receive).
func (r *partReader) Receive(ctx context.Context, n int) ([]tags.Message, error) {
	if n < 1 || n > tags.MaxBatchEntries {
		return nil, tags.Invalid(tags.ReasonInvalidArgumentRange, "max_messages", "max_messages must be between 1 and %d, got %d",
			tags.MaxBatchEntries, n)
	}
	for {
		msgs, spentFor, err := r.receive(ctx, n, time.Time{})
		if err != nil || len(msgs) > 0 {
			return msgs, err
		}
		if spentFor > 0 { // every partition's share of the read quota is spent: the next second
			if err := r.pause(ctx, spentFor); err != nil {
				return nil, err
			}
		}
	}
}

// receive gathers up to n messages, waiting for the first until deadline
// (zero: no deadline) or ctx ends. Empty with spentFor > 0: every
// partition's share of the tag's read quota is spent, for that long.
func (r *partReader) receive(ctx context.Context, n int, deadline time.Time) (msgs []tags.Message, spentFor time.Duration, err error) {
	h := r.s.waiters
	for _, w := range r.ws {
		h.SetIdle(w, false) // before the first read: what comes after it wakes us
	}
	defer func() {
		for _, w := range r.ws {
			h.SetIdle(w, true)
		}
	}()
	// Receives that ran are heard out (their messages are in flight);
	// only the wait is cut short by ctx.
	sctx := context.WithoutCancel(ctx)
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		got, more, spent, err := r.pass(sctx, n)
		if len(got) > 0 || err != nil {
			return got, 0, err
		}
		if spent > 0 {
			return nil, spent, nil
		}
		if more {
			continue
		}
		k, why := r.wait(ctx, deadline)
		switch why {
		case awaitClosed:
			return nil, 0, tags.ErrClosed
		case awaitDone:
			return nil, 0, ctx.Err()
		case awaitTimeout:
			return nil, 0, nil
		}
		r.woken[k] = true
	}
}

// pass reads the partitions once, from the next in turn, for up to n
// messages. more: a partition may hold more now; spent > 0: every
// partition asked was out of read quota, for that long.
func (r *partReader) pass(ctx context.Context, n int) (got []tags.Message, more bool, spent time.Duration, err error) {
	h := r.s.waiters
	p := len(r.subs)
	first := r.next
	r.next = (r.next + 1) % p
	asked, spentAll := 0, true
	for i := 0; i < p && len(got) < n; i++ {
		k := (first + i) % p
		sub := r.subs[k]
		if _, left, ok := r.s.spentFor(tagKey{sub, r.tag}); ok {
			spent = max(spent, left)
			continue
		}
		spentAll = false
		if !r.woken[k] && h.Drained(r.ws[k]) && !r.s.dueMaybe(sub, r.tag) {
			continue // its watch saw nothing since it was found drained
		}
		r.woken[k] = false
		asked++
		seen := h.Counts(r.ws[k])
		want := n - len(got)
		res, err := r.s.receiveOnce(ctx, sub, r.tag, "", want, r.visMs)
		if err != nil {
			if tags.ReasonOf(err) == tags.ReasonQueueNotFound {
				r.s.forgetPartitions(r.queue)
				err = tags.QueueNotFound(r.queue)
			}
			if len(got) > 0 {
				return got, false, 0, nil // what was received goes out; the error comes again
			}
			return nil, false, 0, err
		}
		if len(res.msgs) < want && !res.more && !res.spent() {
			h.NoteDrained(r.ws[k], seen)
		}
		if res.more {
			more, r.woken[k] = true, true
		}
		if res.hintMs < infMs {
			h.NoteDeadline(r.ws[k], max(time.Duration(res.hintMs-res.nowMs)*time.Millisecond, time.Millisecond))
		}
		got = append(got, withUserIDs(sub, res.msgs)...)
	}
	if asked > 0 || !spentAll {
		spent = 0
	}
	return got, more, spent, nil
}

// withUserIDs gives msgs of partition queue sub their API message ids.
func withUserIDs(sub string, msgs []tags.Message) []tags.Message {
	if partIndex(sub) == 0 {
		return msgs
	}
	for i := range msgs {
		msgs[i].ID = userID(sub, msgs[i].ID)
	}
	return msgs
}

// wait waits for a wake-up of any partition (its index), the deadline,
// the store's close or ctx's end.
func (r *partReader) wait(ctx context.Context, deadline time.Time) (int, int) {
	cases := make([]reflect.SelectCase, 0, len(r.ws)+3)
	for _, w := range r.ws {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w.C())})
	}
	cases = append(cases,
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.ws[0].Closed())},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(t.C)})
	}
	i, _, _ := reflect.Select(cases)
	switch {
	case i < len(r.ws):
		return i, awaitWoken
	case i == len(r.ws):
		return 0, awaitClosed
	case i == len(r.ws)+1:
		return 0, awaitDone
	}
	return 0, awaitTimeout
}

// pause waits d, or less under the test clock (see Reader.pause).
func (r *partReader) pause(ctx context.Context, d time.Duration) error {
	if r.s.rdb.testClock {
		d = min(d, quotaPoll)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-r.ws[0].Closed():
		return tags.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close unregisters the reader. Safe to call more than once.
func (r *partReader) Close() {
	for _, w := range r.ws {
		r.s.waiters.Unregister(w)
	}
	r.ws = nil
}

var _ tags.TagReader = (*partReader)(nil)

// receiveParts is Receive on a queue of n partitions: one pass over them,
// and when it finds nothing and the receive may wait, a wait on all of
// them.
func (s *Store) receiveParts(ctx context.Context, queue, tag, expect string, n int, opt tags.ReceiveOptions, visMs int64) ([]tags.Message, error) {
	start := time.Now()
	var got []tags.Message
	wait := int32(-1)
	first := s.nextPart(queue+partSep+tag, n)
	spentAll := true
	var spent tags.Error
	for i := 0; i < n && len(got) < opt.MaxMessages; i++ {
		sub := partName(queue, (first+i)%n)
		if limit, left, ok := s.spentFor(tagKey{sub, tag}); ok {
			spent = *tags.QuotaExceeded(queue, tag, tags.QuotaRead, limit, ceilMs(left))
			continue
		}
		spentAll = false
		r, err := s.receiveOnce(ctx, sub, tag, expect, opt.MaxMessages-len(got), visMs)
		if err != nil {
			if tags.ReasonOf(err) == tags.ReasonQueueNotFound {
				s.forgetPartitions(queue)
				err = tags.QueueNotFound(queue)
			}
			if len(got) > 0 {
				return got, nil
			}
			return nil, err
		}
		wait = r.queueWait
		got = append(got, withUserIDs(sub, r.msgs)...)
	}
	if len(got) > 0 {
		return got, nil
	}
	if spentAll {
		return nil, &spent
	}
	if opt.WaitSeconds != nil {
		wait = *opt.WaitSeconds
	}
	if wait <= 0 {
		return nil, nil
	}
	r, err := s.newPartReader(ctx, queue, tag, n, visMs)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	msgs, _, err := r.receive(ctx, opt.MaxMessages, start.Add(time.Duration(wait)*time.Second))
	if err == tags.ErrClosed {
		return nil, nil // the store closes: a waiting receive returns empty
	}
	return msgs, err
}
