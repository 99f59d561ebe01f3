package tagstest

import (
	"context"
	"strings"
	"testing"

	"github.com/tagq/tagq/tags"
)

// testModel_ChecksCatchWrongDeliveries shows that the model tests' checks
// can fail, on this harness's queues (partitioned ones too): it runs the
// plain and the topic model on the storage behind a wrapper that
// corrupts what the storage answers in one way each, and requires the
// model to catch it, with the check that names it:
//
//   - dup: a receive hands out again the tag's last delivery (still in
//     flight, or done, or received once more than it says): a duplicate or
//     a message delivered while invisible;
//   - lose: a receive of two or more drops the last (the storage holds it
//     in flight, the consumer never sees it): a lost message;
//   - count: a receive reports a receive count one too high;
//   - swap: a send answers the ids of two new messages of one partition
//     swapped: a partition's messages out of send order;
//   - order (topic model): a receive hands out a later message of a topic
//     in place of the first one the tag has not finished: out of order
//     within a topic (and so within its partition);
//   - share (partitioned queues, capped model): the storage is right but
//     the model is told each partition's cap is one message less than it
//     is: the drops the caps make must not match.
func testModel_ChecksCatchWrongDeliveries(t *testing.T, b *B) {
	hk := b.extras()
	hk.Twin = nil // every receive through the wrapper
	for _, c := range []struct {
		mode   string
		want   []string // the failure names one of these
		topic  bool
		capped bool
	}{
		{"dup", []string{"which is", "receive count"}, false, false},
		{"lose", []string{"messages,"}, false, false},
		{"count", []string{"receive count"}, false, false},
		{"swap", []string{"in partition"}, false, false},
		{"order", []string{"not ready"}, true, false},
		{"share", []string{"retains", "retained", "dropped", "state"}, false, true},
	} {
		w := &wrongStorage{Storage: b.s, mode: c.mode, pt: hk.Partitioner, last: map[string]tags.Message{}}
		hks := hk
		if c.mode == "share" {
			if hk.Partitioner == nil {
				continue // a queue of one partition: no shares
			}
			hks.Partitioner = wrongShares{hk.Partitioner}
			w.done = 1 // every answer the model reads of the caps is off
		}
		bb := &B{t: t, ctx: b.ctx, s: w, clock: b.clock, hooks: &hks, catch: true}
		msg := caught(func() {
			q := "wrong" + c.mode
			if c.topic {
				runTopicModel(t, bb, q, 1, 250)
			} else {
				runModel(t, bb, q, 1, 250, c.capped)
			}
		})
		switch {
		case msg == "":
			t.Errorf("%s: the model passed a storage that answers wrongly (%d corrupted answers)", c.mode, w.done)
		case w.done == 0:
			t.Errorf("%s: the model failed before any corrupted answer: %s", c.mode, msg)
		case !containsAny(msg, c.want):
			t.Errorf("%s: the model failed for another reason than the check expected (%q): %s", c.mode, c.want, msg)
		default:
			t.Logf("%s: caught: %s", c.mode, msg)
		}
	}
}

// modelFailure is what a model's failf panics with when its B catches
// failures (a test of the model's own checks).
type modelFailure struct{ msg string }

// caught runs fn and returns the model failure it ended with ("" when
// it ended without one).
func caught(fn func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(modelFailure)
			if !ok {
				panic(r)
			}
			msg = f.msg
		}
	}()
	fn()
	return ""
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// wrongStorage answers as its storage does, but corrupts receives or sends
// as mode says (see testModel_ChecksCatchWrongDeliveries); done counts the
// answers it corrupted.
type wrongStorage struct {
	tags.Storage
	mode string
	pt   Partitioner             // nil: one partition
	last map[string]tags.Message // per tag: the last message a receive handed out
	sent []tags.Message          // every message sent (ID, topic, body), in order
	done int
}

func (w *wrongStorage) Send(ctx context.Context, q string, msgs []tags.OutMessage) ([]tags.SendResult, error) {
	res, err := w.Storage.Send(ctx, q, msgs)
	if err != nil {
		return res, err
	}
	for i, r := range res {
		if r.Err == nil && !r.Duplicate {
			w.sent = append(w.sent, tags.Message{ID: r.ID, Topic: msgs[i].Topic, Body: msgs[i].Body})
		}
	}
	if w.mode != "swap" {
		return res, nil
	}
	for i := range res {
		for j := i + 1; j < len(res); j++ {
			if res[i].Err == nil && res[j].Err == nil && !res[i].Duplicate && !res[j].Duplicate && w.part(q, res[i].ID) == w.part(q, res[j].ID) {
				res[i].ID, res[j].ID = res[j].ID, res[i].ID
				w.done++
				return res, nil
			}
		}
	}
	return res, nil
}

func (w *wrongStorage) part(q, id string) int {
	if w.pt == nil {
		return 0
	}
	k, _ := w.pt.Locate(q, id)
	return k
}

func (w *wrongStorage) Receive(ctx context.Context, q, tag string, o tags.ReceiveOptions) ([]tags.Message, error) {
	got, err := w.Storage.Receive(ctx, q, tag, o)
	if err != nil {
		return got, err
	}
	return w.corrupt(tag, got), nil
}

func (w *wrongStorage) OpenReader(ctx context.Context, q, tag string, vis *int32) (tags.TagReader, error) {
	r, err := w.Storage.OpenReader(ctx, q, tag, vis)
	if err != nil {
		return r, err
	}
	return wrongReader{TagReader: r, w: w, tag: tag}, nil
}

type wrongReader struct {
	tags.TagReader
	w   *wrongStorage
	tag string
}

func (r wrongReader) Receive(ctx context.Context, n int) ([]tags.Message, error) {
	got, err := r.TagReader.Receive(ctx, n)
	if err != nil {
		return got, err
	}
	return r.w.corrupt(r.tag, got), nil
}

// corrupt is what a receive of tag answers instead of got.
func (w *wrongStorage) corrupt(tag string, got []tags.Message) []tags.Message {
	if len(got) == 0 {
		return got
	}
	prev, had := w.last[tag]
	w.last[tag] = got[len(got)-1]
	switch w.mode {
	case "dup":
		if !had {
			return got
		}
		for _, m := range got {
			if m.ID == prev.ID {
				return got
			}
		}
		got[len(got)-1] = prev
	case "lose":
		if len(got) < 2 {
			return got
		}
		got = got[:len(got)-1]
	case "count":
		got[0].ReceiveCount++
	case "order":
		m := &got[0]
		later := -1
		for i, s := range w.sent {
			if s.ID == m.ID {
				later = i
			}
		}
		for i := later + 1; later >= 0 && i < len(w.sent); i++ {
			if s := w.sent[i]; s.Topic == m.Topic {
				m.ID, m.Body = s.ID, s.Body
				w.done++
				return got
			}
		}
		return got
	default:
		return got
	}
	w.done++
	return got
}

// failure ends a model run with msg: the test fails, or (a B that catches
// failures) the run panics with a modelFailure for caught.
func (b *B) failure(msg string) {
	b.t.Helper()
	if b.catch {
		panic(modelFailure{msg: msg})
	}
	b.t.Fatal(msg)
}

// wrongShares tells the model each partition's cap on retained messages
// is one less than its Partitioner says.
type wrongShares struct{ Partitioner }

func (w wrongShares) CapShares(q *tags.Queue) (int64, int64) {
	n, bytes := w.Partitioner.CapShares(q)
	return max(n-1, 1), bytes
}
