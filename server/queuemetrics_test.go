package server

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags/redisstore"
)

// series gathers the registry into "name{label=value,...}" -> value, for
// the metrics whose names start with prefix.
func series(t *testing.T, b *testBundle, prefix string) map[string]float64 {
	t.Helper()
	mfs, err := b.reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), prefix) {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out[mf.GetName()+"{"+strings.Join(ls, ",")+"}"] = v
		}
	}
	return out
}

func TestQueueMetrics_ReportTagStateAtMostOncePerInterval(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clock := time.Unix(1_800_000_000, 0)
	b.srv.queueMetrics.now = func() time.Time { return clock }
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "orders"}})
	require.NoError(t, err)
	_, err = b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "orders", Tag: &tagqv1.Tag{Name: "billing"}})
	require.NoError(t, err)
	send := func(n int) {
		for range n {
			_, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "orders", Body: []byte("x")})
			require.NoError(t, err)
		}
	}
	send(3)
	got, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "orders", Tag: "billing", MaxMessages: i32(1)})
	require.NoError(t, err)
	require.Len(t, got.GetMessages(), 1)

	s := series(t, b, "tagq_")
	require.Equal(t, 3.0, s["tagq_tag_messages_available{queue=orders,tag=default}"])
	require.Equal(t, 2.0, s["tagq_tag_messages_available{queue=orders,tag=billing}"])
	require.Equal(t, 1.0, s["tagq_tag_messages_in_flight{queue=orders,tag=billing}"])
	require.Equal(t, 1.0, s["tagq_tag_received_total{queue=orders,tag=billing}"])
	require.Equal(t, 0.0, s["tagq_tag_deleted_total{queue=orders,tag=billing}"])
	require.Equal(t, 3.0, s["tagq_queue_messages{queue=orders}"])
	require.Equal(t, 0.0, s["tagq_queue_outbox_messages{queue=orders}"])
	require.Equal(t, 0.0, s["tagq_metrics_truncated{}"])
	require.Equal(t, 0.0, s["tagq_metrics_age_seconds{}"])
	require.Contains(t, s, "tagq_tag_oldest_available_age_seconds{queue=orders,tag=billing}")

	send(1) // not seen until the interval has passed
	clock = clock.Add(4 * time.Second)
	s = series(t, b, "tagq_")
	require.Equal(t, 3.0, s["tagq_tag_messages_available{queue=orders,tag=default}"])
	require.Equal(t, 4.0, s["tagq_metrics_age_seconds{}"])
	clock = clock.Add(time.Second)
	s = series(t, b, "tagq_")
	require.Equal(t, 4.0, s["tagq_tag_messages_available{queue=orders,tag=default}"])
	require.Equal(t, 0.0, s["tagq_metrics_age_seconds{}"])

	// With Redis gone, the last figures stay, older, and the failure counts.
	b.mr.Close()
	clock = clock.Add(6 * time.Second)
	s = series(t, b, "tagq_")
	require.Equal(t, 4.0, s["tagq_tag_messages_available{queue=orders,tag=default}"])
	require.Equal(t, 6.0, s["tagq_metrics_age_seconds{}"])
	require.Equal(t, 1.0, s["tagq_metrics_read_failures_total{}"])
}

func TestQueueMetrics_CapTheTagSeries(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.QueueMetricsMaxTags = 2 })
	for _, q := range []string{"a", "b"} {
		_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: q}})
		require.NoError(t, err)
	}
	_, err := b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "a", Tag: &tagqv1.Tag{Name: "x"}})
	require.NoError(t, err)
	s := series(t, b, "tagq_tag_messages_available")
	require.Equal(t, map[string]float64{
		"tagq_tag_messages_available{queue=a,tag=default}": 0,
		"tagq_tag_messages_available{queue=a,tag=x}":       0,
	}, s, "queue b would pass the cap")
	require.Equal(t, 1.0, series(t, b, "tagq_metrics_truncated")["tagq_metrics_truncated{}"])
}

func TestQueueMetrics_Off(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.QueueMetricsInterval = -1 })
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "a"}})
	require.NoError(t, err)
	require.Empty(t, series(t, b, "tagq_tag_"))
	require.Empty(t, series(t, b, "tagq_metrics_"))
}

// DESIGN §8: replicas scraped in turn read the figures once per scrape
// period between them. Two replicas scraped every 15 s, half a period
// apart: each serves the figures the other read since its own last
// scrape, and Redis is read once per 15 s, not once per scrape.
func TestQueueMetrics_ReplicasShareTheirReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clock := time.Unix(1_800_000_000, 0)
	b.srv.queueMetrics.now = func() time.Time { return clock }
	rdb := redis.NewClient(&redis.Options{Addr: b.mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	store, err := redisstore.New(b.ctx, redisstore.Config{Client: rdb})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	other := newQueueCollector(store, 5*time.Second, b.srv.queueMetrics.maxTags)
	other.now = func() time.Time { return clock }
	reg := prometheus.NewRegistry()
	reg.MustRegister(other)
	available := func(g prometheus.Gatherer) float64 {
		mfs, err := g.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "tagq_tag_messages_available" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no tagq_tag_messages_available")
		return 0
	}
	_, err = b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	sent := 0
	send := func() {
		_, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")})
		require.NoError(t, err)
		sent++
	}
	send()
	require.EqualValues(t, 1, available(b.reg)) // this replica reads
	send()
	clock = clock.Add(7500 * time.Millisecond)
	require.EqualValues(t, 2, available(reg)) // the other's first scrape: it knows no period yet, and reads
	for round := range 4 {
		send()
		clock = clock.Add(7500 * time.Millisecond)
		// This replica's turn, 15 s since its last scrape: the other's
		// read, 7.5 s old.
		require.EqualValues(t, sent-1, available(b.reg), "round %d", round)
		send()
		clock = clock.Add(7500 * time.Millisecond)
		// The other's: its own read is 15 s old, as old as its last
		// scrape: read anew (once per period between the two).
		require.EqualValues(t, sent, available(reg), "round %d", round)
	}
}
