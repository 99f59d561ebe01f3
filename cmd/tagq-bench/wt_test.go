package main

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// WT's rows mean something only if its runs do the work and its checks
// hold: on a tagqd of this repository, a short WT run on each API, plain
// and topic queue (5 topics, so each topic has many messages in the queue
// at once), receives every counted message once, each topic in send order,
// with the tag's counters agreeing (wtLoad.verify); and the table's rows
// carry numbers.
func TestWTRunsCheckEveryMessageAndTopicOrder(t *testing.T) {
	e := streamEnv(t)
	e.dur = time.Second
	var rows []result
	ratios := map[string][2]float64{}
	for _, sys := range []string{"tagq", "tagq-stream"} {
		plain := e.wtRun(sys, 0, 10)
		topic := e.wtRun(sys, 5, 10)
		for _, r := range []result{plain, topic} {
			require.NotContains(t, r.note, "error", "%s %s", sys, r.workload)
			require.Positive(t, r.msgs, "%s %s", sys, r.workload)
			require.GreaterOrEqual(t, r.sent, r.msgs, "%s %s", sys, r.workload)
			require.Positive(t, r.p99, "%s %s", sys, r.workload)
		}
		require.Contains(t, plain.note, "each received once")
		require.Contains(t, topic.note, "each topic in send order")
		cpu, rate := wtRatios([]result{plain}, []result{topic})
		require.Len(t, cpu, 1)
		require.Len(t, rate, 1)
		ratios[sys] = [2]float64{median(cpu), median(rate)}
		rows = append(rows, plain, topic)
	}
	table := wtTable(rows, ratios)
	t.Log("\n" + table)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 2+len(rows))
	for _, line := range lines[2:] {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		require.Len(t, cells, 13, line)
		// msg/s, p50, p99, max, server CPU, client CPU and total CPU per
		// 1,000 messages (this test's Redis is not tagqd's: no Redis CPU).
		for _, i := range []int{2, 4, 5, 6, 7, 9, 10} {
			v, err := strconv.ParseFloat(cells[i], 64)
			require.NoError(t, err, "column %d of %s", i, line)
			require.Positive(t, v, "column %d of %s", i, line)
		}
		if strings.HasPrefix(cells[0], "topic") {
			for _, i := range []int{3, 11} { // x plain msg/s, x plain CPU/msg
				_, err := strconv.ParseFloat(cells[i], 64)
				require.NoError(t, err, "column %d of %s", i, line)
			}
		}
	}
}

// The checks catch what they are for: a message received twice, a topic's
// messages out of send order, a message under another topic, and a run
// whose counters disagree with what was received.
func TestWTLoadChecksFail(t *testing.T) {
	msg := func(w *wtLoad, seq uint64, id string, topic string) *tagqv1.Message {
		b := stamped(w.size)
		binary.BigEndian.PutUint64(b[8:], seq)
		return &tagqv1.Message{MessageId: id, Body: b, Topic: topic}
	}
	fresh := func() *wtLoad {
		w := newWTLoad(2, 64)
		w.entries(4) // seqs 0-3: topics t0, t1, t0, t1
		return w
	}
	w := fresh()
	w.receive(msg(w, 0, "1-0", "t0"))
	w.receive(msg(w, 2, "1-2", "t0"))
	require.NoError(t, w.err)
	w.receive(msg(w, 2, "1-2", "t0"))
	require.ErrorContains(t, w.err, "received twice")

	w = fresh()
	w.receive(msg(w, 2, "2-0", "t0"))
	w.receive(msg(w, 0, "1-5", "t0"))
	require.ErrorContains(t, w.err, "out of send order")

	w = fresh()
	w.receive(msg(w, 1, "1-1", "t0"))
	require.ErrorContains(t, w.err, `topic "t0", sent with "t1"`)

	w = fresh()
	w.receive(msg(w, 9, "1-9", "t1"))
	require.ErrorContains(t, w.err, "never sent")

	w = fresh()
	w.receive(msg(w, 0, "1-0", "t0"))
	st := &tagqv1.TagState{DeletedTotal: 1, Available: 3}
	require.NoError(t, w.verify(result{msgs: 1, sent: 4}, st))
	require.ErrorContains(t, w.verify(result{msgs: 1, sent: 5}, st), "5 messages stored")
	st.InFlight = 1
	require.ErrorContains(t, w.verify(result{msgs: 1, sent: 4}, st), "in flight")
	require.Error(t, w.verify(result{msgs: 2, sent: 4}, &tagqv1.TagState{DeletedTotal: 2, Available: 2}))
}
