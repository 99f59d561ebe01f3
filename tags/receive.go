package tags

import (
	"context"
	"errors"
	"strings"
	"time"
)

// scanLimit bounds the stream entries one receive script call reads for a
// filtered tag (work per call, so Redis is never blocked for long).
const scanLimit = 1000

// Receive hands out up to opt.MaxMessages messages to a tag ("" = the
// queue's default tag), each with a new receipt handle, waiting up to the
// long-poll wait for the first. A waiting receive is woken by a send, a
// nack or a deadline on any tagqd sharing the Redis, and returns empty when
// the store closes.
func (s *Store) Receive(ctx context.Context, queue, tag string, opt ReceiveOptions) ([]Message, error) {
	if e := checkName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if tag != "" {
		if e := checkName("tag", "tag", tag); e != nil {
			return nil, e
		}
	}
	if opt.MaxMessages < 1 || opt.MaxMessages > MaxBatchEntries {
		return nil, invalid(ReasonInvalidArgumentRange, "max_messages", "max_messages must be between 1 and %d, got %d",
			MaxBatchEntries, opt.MaxMessages)
	}
	if e := checkRange("wait_seconds", opt.WaitSeconds, 0, MaxWaitSeconds); e != nil {
		return nil, e
	}
	if e := checkRange("visibility_seconds", opt.VisibilitySeconds, 0, MaxVisibilitySeconds); e != nil {
		return nil, e
	}
	// The default tag's name is cached; the receive script checks it.
	expect := ""
	if tag == "" {
		if v, ok := s.dtags.Load(queue); ok {
			tag = v.(string)
		} else {
			dtag, err := s.resolveTag(ctx, queue, "")
			if err != nil {
				return nil, err
			}
			s.dtags.Store(queue, dtag)
			tag = dtag
		}
		expect = tag
	}
	visMs := int64(-1)
	if opt.VisibilitySeconds != nil {
		visMs = int64(*opt.VisibilitySeconds) * 1000
	}
	start := time.Now()
	r, err := s.receiveOnce(ctx, queue, tag, expect, opt.MaxMessages, visMs)
	if errors.Is(err, errDefaultTagChanged) || ReasonOf(err) == ReasonQueueNotFound || ReasonOf(err) == ReasonTagNotFound {
		s.dtags.Delete(queue) // re-created, or its default tag deleted
		if expect != "" && errors.Is(err, errDefaultTagChanged) {
			return s.Receive(ctx, queue, "", opt)
		}
	}
	if err != nil || len(r.msgs) > 0 {
		return r.msgs, err
	}
	wait := r.queueWait
	if opt.WaitSeconds != nil {
		wait = *opt.WaitSeconds
	}
	if wait <= 0 && !r.more {
		return r.msgs, nil
	}
	deadline := start.Add(time.Duration(wait) * time.Second)

	w, err := s.waiters.register(ctx, queue, tag)
	if err != nil {
		return nil, err
	}
	defer func() {
		if w != nil {
			s.waiters.unregister(w)
		}
	}()
	for {
		// Registered before this attempt: whatever arrives after it wakes us.
		r, err = s.receiveOnce(ctx, queue, tag, expect, opt.MaxMessages, visMs)
		if errors.Is(err, errDefaultTagChanged) {
			s.dtags.Delete(queue)
			s.waiters.unregister(w)
			w = nil
			return s.Receive(ctx, queue, "", opt)
		}
		if err != nil {
			return nil, err
		}
		if len(r.msgs) > 0 {
			if len(r.msgs) == opt.MaxMessages {
				s.waiters.wakeOne(queue, tag) // there may be more for the next waiter
			}
			return r.msgs, nil
		}
		if r.more {
			continue
		}
		left := time.Until(deadline)
		if left <= 0 {
			return r.msgs, nil
		}
		if r.hintMs < infMs {
			s.waiters.noteDeadline(w, max(time.Duration(r.hintMs-r.nowMs)*time.Millisecond, time.Millisecond))
		}
		t := time.NewTimer(left)
		select {
		case <-w.ch:
		case <-t.C:
		case <-w.stop:
			t.Stop()
			return nil, nil
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		t.Stop()
	}
}

const infMs = 9007199254740991

// resolveTag is tag, or the queue's default tag when tag is "".
func (s *Store) resolveTag(ctx context.Context, queue, tag string) (string, error) {
	if tag != "" {
		return tag, nil
	}
	dtag, err := s.rdb.HGet(ctx, s.qkeys(queue).meta, "dtag").Result()
	if isNil(err) {
		return "", queueNotFound(queue)
	}
	if err != nil {
		return "", mapErr(err, queue, "")
	}
	return dtag, nil
}

type receiveResult struct {
	msgs      []Message
	nowMs     int64
	hintMs    int64
	more      bool
	queueWait int32
	dead      int // dead-lettered by this call: their outbox entries await the relay
}

// errDefaultTagChanged: the cached default tag name is out of date.
var errDefaultTagChanged = errors.New("DEFAULT_TAG_CHANGED")

func (s *Store) receiveOnce(ctx context.Context, queue, tag, expectDefault string, max int, visMs int64) (receiveResult, error) {
	k := s.qkeys(queue)
	tk := k.tag(tag)
	res, err := scriptReceive.Run(ctx, s.rdb,
		[]string{k.meta, k.stream, tk.state, tk.visible, tk.parked, k.wake, tk.last, k.outbox},
		tag, max, visMs, scanLimit, queue, expectDefault).Slice()
	if err != nil {
		if strings.Contains(err.Error(), "DEFAULT_TAG_CHANGED") {
			return receiveResult{}, errDefaultTagChanged
		}
		return receiveResult{}, mapErr(err, queue, tag)
	}
	if len(res) != 6 {
		return receiveResult{}, &Error{Kind: KindInternal, Reason: ReasonInternal, Message: "receive: unexpected reply"}
	}
	r := receiveResult{nowMs: asInt64(res[0]), hintMs: asInt64(res[1]), more: asInt64(res[2]) == 1,
		queueWait: int32(asInt64(res[3])), dead: int(asInt64(res[4]))}
	r.msgs = decodeScriptMessages(res[5], tag)
	if r.dead > 0 {
		// This receive dead-lettered messages instead of handing them out
		// (S7): relay them now; the background relay retries on failure.
		if _, err := s.RelayOutbox(ctx, queue); err != nil {
			s.log.Warn("dead letters staged; relay to the dead-letter queue will retry", "queue", queue, "err", err)
		}
	}
	for i := range r.msgs {
		m := &r.msgs[i]
		m.ReceiptHandle = s.handles.encode(handle{Queue: queue, Tag: tag, ID: m.ID, Gen: m.ReceiveCount, FirstMs: m.firstMs})
	}
	return r, nil
}
