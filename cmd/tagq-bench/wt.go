package main

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// ---- WT: topic queues (S13, issue 14) against a plain queue in W1's shape.
//
// One run of W1's shape (4 producers x 4 consumers, batch 10, --size
// bodies) on a plain queue and on a topic queue whose messages cycle over
// --topics topics, through the unary API and through the streams, in
// interleaved rounds. Each body carries its send time (latency, as W3) and
// a sequence number unique in the run; every message received is checked:
// received once, and on the topic queue after every earlier message of its
// topic (below).

// wtConfig is WT's: --topics, --wt-batch.
type wtConfig struct{ topics, batch int }

// wtHeader is a WT body's header: send time (as stamped), then the sequence
// number.
const wtHeader = 16

// wtLoad makes one WT run's messages and checks what consumers receive.
type wtLoad struct {
	topics int      // 0: a plain queue
	names  []string // topic names, by seq % topics
	size   int
	next   atomic.Uint64 // sequence numbers handed out
	lat    latencies

	mu   sync.Mutex
	seen []uint64    // bit per sequence number received
	last [][2]uint64 // per topic: the stream id (ms, seq) received last
	got  int64       // distinct messages received
	err  error       // the first failed check
}

func newWTLoad(topics, size int) *wtLoad {
	w := &wtLoad{topics: topics, size: max(size, wtHeader), last: make([][2]uint64, topics)}
	for i := range topics {
		w.names = append(w.names, "t"+strconv.Itoa(i))
	}
	return w
}

// entries makes a batch: stamped bodies with the next sequence numbers,
// each with its topic (seq % topics) on a topic queue.
func (w *wtLoad) entries(batch int) []*tagqv1.SendMessageBatchEntry {
	first := w.next.Add(uint64(batch)) - uint64(batch)
	out := make([]*tagqv1.SendMessageBatchEntry, batch)
	for i := range out {
		seq := first + uint64(i)
		b := stamped(w.size)
		binary.BigEndian.PutUint64(b[8:], seq)
		out[i] = &tagqv1.SendMessageBatchEntry{Id: strconv.Itoa(i), Body: b}
		if w.topics > 0 {
			out[i].Topic = w.names[seq%uint64(w.topics)]
		}
	}
	return out
}

// receive checks a message received, before it is deleted or acknowledged:
// its sequence number was sent and not received before; on a topic queue
// it carries its topic, and its id is above the id received last of that
// topic. The ids of one queue grow in the order the server stored the
// messages (Redis stream ids), which is a topic's send order; the order
// the client numbered them in is not, since a Publish stream stores its
// frames in flight concurrently. One in flight per topic means the next
// message of a topic is handed out only once this one is deleted, so
// checking under one lock, in the order the server hands messages out,
// is valid across consumers.
func (w *wtLoad) receive(m *tagqv1.Message) {
	b := m.GetBody()
	if len(b) < wtHeader {
		w.fail(fmt.Errorf("message %s: a body of %d bytes, not a WT body", m.GetMessageId(), len(b)))
		return
	}
	w.lat.add(since(b))
	seq := binary.BigEndian.Uint64(b[8:])
	w.mu.Lock()
	defer w.mu.Unlock()
	if seq >= w.next.Load() {
		w.failLocked(fmt.Errorf("message %s: sequence number %d never sent", m.GetMessageId(), seq))
		return
	}
	word, bit := seq/64, uint64(1)<<(seq%64)
	for uint64(len(w.seen)) <= word {
		w.seen = append(w.seen, 0)
	}
	if w.seen[word]&bit != 0 {
		w.failLocked(fmt.Errorf("message %d (id %s) received twice", seq, m.GetMessageId()))
		return
	}
	w.seen[word] |= bit
	w.got++
	if w.topics == 0 {
		return
	}
	t := seq % uint64(w.topics)
	if m.GetTopic() != w.names[t] {
		w.failLocked(fmt.Errorf("message %d: topic %q, sent with %q", seq, m.GetTopic(), w.names[t]))
		return
	}
	id, ok := streamID(m.GetMessageId())
	if !ok {
		w.failLocked(fmt.Errorf("message %d: id %q is not a stream id", seq, m.GetMessageId()))
		return
	}
	if prev := w.last[t]; cmp.Or(cmp.Compare(id[0], prev[0]), cmp.Compare(id[1], prev[1])) <= 0 {
		w.failLocked(fmt.Errorf("topic %s: message %d (id %s) received after id %d-%d: out of send order",
			w.names[t], seq, m.GetMessageId(), prev[0], prev[1]))
		return
	}
	w.last[t] = id
}

func (w *wtLoad) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failLocked(err)
}

func (w *wtLoad) failLocked(err error) {
	if w.err == nil {
		w.err = err
	}
}

// streamID parses a message id "ms-seq".
func streamID(s string) ([2]uint64, bool) {
	a, b, ok := strings.Cut(s, "-")
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return [2]uint64{ms, seq}, ok && err1 == nil && err2 == nil
}

// verify checks the run's end against the tag's counters: every message
// stored was received once (receive) and deleted, or is still available;
// none is left in flight.
func (w *wtLoad) verify(r result, st *tagqv1.TagState) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.err != nil:
		return w.err
	case w.got != r.msgs:
		return fmt.Errorf("%d distinct messages received, %d counted", w.got, r.msgs)
	case st.GetDeletedTotal() != r.msgs:
		return fmt.Errorf("%d messages received and deleted, the tag counts %d deleted", r.msgs, st.GetDeletedTotal())
	case st.GetInFlight() != 0:
		return fmt.Errorf("%d messages still in flight after the run", st.GetInFlight())
	case st.GetAvailable()+st.GetDeletedTotal() != r.sent:
		return fmt.Errorf("%d messages stored, %d deleted + %d available", r.sent, st.GetDeletedTotal(), st.GetAvailable())
	}
	return nil
}

// wtRun is one WT run: a plain queue (topics 0) or a topic queue, through
// the unary API (system tagq) or the streams (tagq-stream).
func (e *env) wtRun(system string, topics, batch int) result {
	queue, cfg, name := "wt-plain", &tagqv1.Queue{}, "WT plain queue"
	if topics > 0 {
		queue, cfg, name = "wt-topics", &tagqv1.Queue{TopicQueue: true}, fmt.Sprintf("WT topic queue, %d topics", topics)
	}
	e.tagqQueue(queue, 1, cfg)
	defer func() { _, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: queue, Force: true}) }()
	w := newWTLoad(topics, len(e.body))
	sl := streamLoad{workload: name, queue: queue, tags: tagNames(1), producers: 4, consumers: 4, batch: batch,
		entries: func() []*tagqv1.SendMessageBatchEntry { return w.entries(batch) }, got: w.receive}
	var r result
	if system == "tagq-stream" {
		r = e.runStream(sl)
	} else {
		r = e.runUnary(e.m, e.pid, system, sl)
	}
	r.p50, r.p99, r.max = w.lat.pct()
	note := fmt.Sprintf("%d stored, %d left at the end", r.sent, r.sent-r.msgs)
	if r.note == "" {
		st, err := e.q.GetTag(e.ctx, &tagqv1.GetTagRequest{Queue: queue, Name: "default"})
		if err == nil {
			err = w.verify(r, st.GetTag().GetState())
		}
		if err != nil {
			r.note = "error: " + err.Error()
		} else if topics > 0 {
			note += "; each received once, each topic in send order"
		} else {
			note += "; each received once"
		}
	}
	r.note = strings.TrimPrefix(r.note+"; "+note, "; ")
	return r
}

// wt runs WT: rounds of plain and topic queue on each API, the two in
// turn (the plain queue first in odd rounds, the topic queue first in even
// ones), and prints each row's median run with the topic rows' cost per
// message against the plain row of the same API and round.
func (e *env) wt(topics, batch, rounds int) []result {
	systems := []string{"tagq"}
	if e.streaming {
		systems = append(systems, "tagq-stream")
	}
	runs := map[string][2][]result{} // system -> plain runs, topic runs (by round)
	for round := range rounds {
		for _, sys := range systems {
			rs := runs[sys]
			order := []int{0, 1}
			if round%2 == 1 {
				order = []int{1, 0}
			}
			for _, k := range order {
				rs[k] = append(rs[k], e.wtRun(sys, topics*k, batch))
			}
			runs[sys] = rs
		}
	}
	var rows []result
	var costs []string
	ratios := map[string][2]float64{}
	for _, sys := range systems {
		plain, topic := runs[sys][0], runs[sys][1]
		rows = append(rows, medianRun(plain, sys), medianRun(topic, sys))
		cpu, rate := wtRatios(plain, topic)
		ratios[sys] = [2]float64{median(cpu), median(rate)}
		costs = append(costs, wtCost(sys, cpu, rate))
	}
	fmt.Printf("## WT: topic queue (%d topics) against a plain queue, W1's shape (4 producers x 4 consumers, batch %d), median of %d rounds\n\n",
		topics, batch, rounds)
	fmt.Print(wtTable(rows, ratios))
	for _, c := range costs {
		fmt.Println(c)
	}
	fmt.Println()
	printLoad()
	return rows
}

// cpuPerMsg is the server's, Redis's and the client's CPU per message.
func cpuPerMsg(r result) float64 {
	if r.msgs == 0 {
		return 0
	}
	return (r.cpuTagqd + r.cpuRedis + r.cpuClient).Seconds() / float64(r.msgs)
}

// wtRatios are a topic run's CPU per message and msg/s against the plain
// run of the same round, by round.
func wtRatios(plain, topic []result) (cpu, rate []float64) {
	cpu = perRound(plain, topic, func(p, t result) (float64, bool) {
		return cpuPerMsg(t) / cpuPerMsg(p), cpuPerMsg(p) > 0 && cpuPerMsg(t) > 0
	})
	rate = perRound(plain, topic, func(p, t result) (float64, bool) { return t.rate() / p.rate(), p.rate() > 0 })
	return cpu, rate
}

func joinRatios(xs []float64) string {
	each := make([]string, len(xs))
	for i, x := range xs {
		each[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(each, ", ")
}

// wtCost says a system's topic/plain ratios by round, their medians, and
// whether the cost per message meets issue 14's bar (at most 2x).
func wtCost(system string, cpu, rate []float64) string {
	if len(cpu) == 0 {
		return fmt.Sprintf("- %s: no pair of runs with messages", system)
	}
	verdict := "met"
	if median(cpu) > 2 {
		verdict = "NOT met"
	}
	return fmt.Sprintf("- %s: topic/plain CPU per message %s by round, median %.2f (bar: at most 2: %s); msg/s %s by round, median %.2f",
		system, joinRatios(cpu), median(cpu), verdict, joinRatios(rate), median(rate))
}

// wtTable is WT's table of runs; a topic row's "x plain" columns are
// ratios[system]: the medians of its per-round ratios (CPU per message,
// msg/s) to the plain run of the same API.
func wtTable(rows []result, ratios map[string][2]float64) string {
	var b strings.Builder
	fmt.Fprintln(&b, "| queue | system | msg/s | x plain msg/s | p50 ms | p99 ms | max ms | server CPU s/1000 msg | Redis CPU s/1000 msg | client CPU s/1000 msg | total CPU s/1000 msg | x plain CPU/msg | note |")
	fmt.Fprintln(&b, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		xr, xc := "-", "-"
		if v, ok := ratios[r.system]; ok && strings.HasPrefix(r.workload, "WT topic") {
			xc, xr = fmt.Sprintf("%.2f", v[0]), fmt.Sprintf("%.2f", v[1])
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			strings.TrimPrefix(r.workload, "WT "), r.system, r.rate(), xr, ms(r.p50), ms(r.p99), ms(r.max),
			per1000(r.cpuTagqd, r.msgs), per1000(r.cpuRedis, r.msgs), per1000(r.cpuClient, r.msgs),
			per1000(r.cpuTagqd+r.cpuRedis+r.cpuClient, r.msgs), xc, scriptNote(r))
	}
	fmt.Fprintln(&b)
	return b.String()
}
