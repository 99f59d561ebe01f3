package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// W1 with --partitions 3 on a tagqd of this repository: its tagq and
// tagq-stream rows run on queues of three partitions, every message goes
// to one of them and is received once, and what a row counts is what it
// received; the unary row's queue, left behind, has deleted exactly that
// many and holds none in flight.
func TestPartitionedW1ReceivesAndDeletesEachOnce(t *testing.T) {
	e := streamEnv(t)
	e.dur, e.partitions = 2*time.Second, 3
	e.w1Systems = map[string]bool{"tagq": true, "tagq-stream": true}
	e.rawKey = func(n string) string { return "raw:{" + n + "}" } // W1 clears its raw stream even when raw does not run
	var mu sync.Mutex
	seen := map[string]map[string]int{} // queue -> message id -> receives
	e.got = func(queue string, m *tagqv1.Message) {
		mu.Lock()
		defer mu.Unlock()
		if seen[queue] == nil {
			seen[queue] = map[string]int{}
		}
		seen[queue][m.GetMessageId()]++
	}
	rs := e.w1(10)
	require.Len(t, rs, 2)
	for i, queue := range []string{"w1", "w1s"} {
		r := rs[i]
		require.Empty(t, r.note, "%s", r.system)
		require.Equal(t, 3, r.partitions, "%s", r.system)
		require.Positive(t, r.msgs, "%s", r.system)
		require.Len(t, seen[queue], int(r.msgs), "%s: distinct messages received = messages counted", r.system)
		parts := map[string]bool{}
		for id, n := range seen[queue] {
			require.Equal(t, 1, n, "%s received %s %d times", r.system, id, n)
			p := "0"
			if _, k, ok := strings.Cut(id, "@"); ok {
				p = k
			}
			parts[p] = true
		}
		require.Equal(t, map[string]bool{"0": true, "1": true, "2": true}, parts, "%s: partitions the %d messages came from", r.system, r.msgs)
	}
	q, err := e.q.GetQueue(e.ctx, &tagqv1.GetQueueRequest{Name: "w1"})
	require.NoError(t, err)
	require.EqualValues(t, 3, q.GetQueue().GetPartitions())
	st := tagState(t, e, "w1", "default")
	require.Equal(t, rs[0].msgs, st.GetDeletedTotal(), "%v", st)
	require.Zero(t, st.GetInFlight(), "%v", st)
	require.Positive(t, rs[0].sent)
	require.Equal(t, rs[0].sent, st.GetDeletedTotal()+st.GetAvailable(), "stored = deleted + available: %v", st)
}

// --partitions 1 sends no partitions field: today's queue.
func TestOnePartitionSendsNoField(t *testing.T) {
	require.Nil(t, (&env{partitions: 1}).partitioned())
	require.EqualValues(t, 12, (&env{partitions: 12}).partitioned().GetPartitions())
	require.Equal(t, []string{"q", "q#1", "q#2"}, partitionTags("q", 3))
}

// Each master's share and the replicas' CPU are printed from the nodes'
// CPU of a row.
func TestWriteNodesShares(t *testing.T) {
	nodes := []redisNode{{addr: "a:1"}, {addr: "b:2"}, {addr: "c:3", replica: true}}
	r := result{workload: "W1 batch 10", system: "tagq-stream", msgs: 1000, partitions: 12,
		nodeCPU:  []time.Duration{300 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond},
		cpuRedis: 450 * time.Millisecond, cpuTagqd: time.Second, cpuClient: 550 * time.Millisecond, redisNet: 5_000_000}
	var b strings.Builder
	writeNodes(&b, nodes, []result{r})
	require.Contains(t, b.String(), fmt.Sprintf("| W1 batch 10 | tagq-stream | 12 | a:1 75 %%, b:2 25 %% | 75 %% | 0.400 | 0.050 (c:3 0.050) | 2.000 | 5000 |"), b.String())
	b.Reset()
	writeNodes(&b, nodes[:1], []result{r})
	require.Empty(t, b.String(), "one node: no table")
}
