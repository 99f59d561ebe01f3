package server

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tagq/tagq/tags"
)

// queueCollector exports every queue's and tag's state (what GetQueue and
// GetTag report) as Prometheus series. The store is read at most once per
// interval, by all replicas together: the first scrape after the interval,
// on any tagqd, reads (two pipelined round trips per 200 queues, see
// redisstore.Store.Stats) and leaves the figures in Redis for the others
// (tags.Storage.SharedStats); concurrent scrapes here wait for that read,
// and later ones are served from it, here and on every replica whose last
// scrape came before it: replicas scraped every period P, each at its own
// moment, read once per max(P, interval) between them. At most maxTags tag series are
// exported, queues in name order; tagq_metrics_truncated says when queues
// were left out.
//
// Every tagqd on one Redis exports the same figures (they come from Redis,
// not from the process): aggregate across replicas with max, not sum.
type queueCollector struct {
	store    tags.Storage
	interval time.Duration
	maxTags  int
	timeout  time.Duration
	now      func() time.Time

	mu       sync.Mutex
	read     time.Time // when the cached figures were read (zero: never)
	scraped  time.Time // this collector's last Collect
	cached   []prometheus.Metric
	failures prometheus.Counter
	duration prometheus.Gauge
}

var (
	queueLabels = []string{"queue"}
	tagLabels   = []string{"queue", "tag"}

	descQueueMessages = prometheus.NewDesc("tagq_queue_messages",
		"Messages the queue's stream retains (not yet trimmed).", queueLabels, nil)
	descQueueOutbox = prometheus.NewDesc("tagq_queue_outbox_messages",
		"Dead letters on their way from the queue to its DLQ (a growing outbox is a stuck relay).", queueLabels, nil)
	descMovesRunning = prometheus.NewDesc("tagq_queue_moves_running",
		"Running message moves out of this dead-letter queue.", queueLabels, nil)
	descMovesRemaining = prometheus.NewDesc("tagq_queue_moves_remaining_messages",
		"Dead letters the running moves out of this DLQ still have to move (estimated).", queueLabels, nil)
	descQueueDeduplicated = prometheus.NewDesc("tagq_queue_deduplicated_total",
		"Sends answered as duplicates of a message stored under the same deduplication id within 5 minutes (nothing stored).", queueLabels, nil)
	descAvailable = prometheus.NewDesc("tagq_tag_messages_available",
		"Messages the tag can receive now (its backlog).", tagLabels, nil)
	descInFlight = prometheus.NewDesc("tagq_tag_messages_in_flight",
		"Messages received by the tag and neither deleted nor visible again.", tagLabels, nil)
	descDelayed = prometheus.NewDesc("tagq_tag_messages_delayed",
		"Messages sent with a delay that has not passed yet.", tagLabels, nil)
	descOldest = prometheus.NewDesc("tagq_tag_oldest_available_age_seconds",
		"Age of the tag's oldest available message (0 when none).", tagLabels, nil)
	descReceived = prometheus.NewDesc("tagq_tag_received_total",
		"Deliveries to the tag (redeliveries included).", tagLabels, nil)
	descDeleted = prometheus.NewDesc("tagq_tag_deleted_total",
		"Messages the tag deleted (acknowledged).", tagLabels, nil)
	descDead = prometheus.NewDesc("tagq_tag_dead_total",
		"Messages the tag dead-lettered (max receive count or a dead call).", tagLabels, nil)
	descExpired = prometheus.NewDesc("tagq_tag_expired_total",
		"Messages that left retention before the tag finished them.", tagLabels, nil)
	descTruncated = prometheus.NewDesc("tagq_metrics_truncated",
		"1 when queues were left out of the per-queue series to keep the number of tag series bounded.", nil, nil)
	descAge = prometheus.NewDesc("tagq_metrics_age_seconds",
		"Age of the per-queue figures served (they are read at most once per refresh interval, by one replica for all).", nil, nil)
)

func newQueueCollector(store tags.Storage, interval time.Duration, maxTags int) *queueCollector {
	return &queueCollector{store: store, interval: interval, maxTags: maxTags, timeout: 10 * time.Second, now: time.Now,
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "tagq_metrics_read_failures_total",
			Help: "Reads of the per-queue figures that failed (the previous figures are served meanwhile)."}),
		duration: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tagq_metrics_read_duration_seconds",
			Help: "How long the last read of the per-queue figures took."}),
	}
}

// Describe sends no descriptions: the collector is unchecked, since its
// series come and go with queues and tags.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {}

// Collect serves the figures, reading them first when they are older than
// the interval.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.read.IsZero() || now.Sub(c.read) >= c.interval {
		// Figures another replica read since this one's last scrape are as
		// fresh as Prometheus sees them: served, so that replicas scraped
		// in turn read Redis once per scrape period between them, not once
		// each (up to shareMax).
		maxAge := c.interval
		if !c.scraped.IsZero() {
			maxAge = max(c.interval, min(now.Sub(c.scraped), shareMax))
		}
		c.refresh(now, maxAge)
	}
	c.scraped = now
	for _, m := range c.cached {
		ch <- m
	}
	if !c.read.IsZero() {
		ch <- prometheus.MustNewConstMetric(descAge, prometheus.GaugeValue, c.now().Sub(c.read).Seconds())
	}
	ch <- c.failures
	ch <- c.duration
}

// shareMax is the oldest figures read by another replica that a scrape
// may be served (when it is that long since this replica's last one).
const shareMax = time.Minute

func (c *queueCollector) refresh(now time.Time, maxAge time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	snap, err := c.store.SharedStats(ctx, c.maxTags, maxAge, now)
	c.duration.Set(c.now().Sub(now).Seconds())
	if err != nil {
		c.failures.Inc()
		return // keep serving the last figures; tagq_metrics_age_seconds grows
	}
	qs, truncated := snap.Queues, snap.Truncated
	ms := make([]prometheus.Metric, 0, 1+len(qs)*4)
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ms = append(ms, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ms = append(ms, prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...))
	}
	gauge(descTruncated, map[bool]float64{false: 0, true: 1}[truncated])
	for _, q := range qs {
		gauge(descQueueMessages, float64(q.Messages), q.Name)
		gauge(descQueueOutbox, float64(q.Outbox), q.Name)
		gauge(descMovesRunning, float64(q.MovesRunning), q.Name)
		gauge(descMovesRemaining, float64(q.MovesRemaining), q.Name)
		counter(descQueueDeduplicated, q.Deduplicated, q.Name)
		for _, t := range q.Tags {
			st := t.State
			gauge(descAvailable, float64(st.Available), q.Name, t.Name)
			gauge(descInFlight, float64(st.InFlight), q.Name, t.Name)
			gauge(descDelayed, float64(st.Delayed), q.Name, t.Name)
			gauge(descOldest, st.OldestAvailableAge.Seconds(), q.Name, t.Name)
			counter(descReceived, st.ReceivedTotal, q.Name, t.Name)
			counter(descDeleted, st.DeletedTotal, q.Name, t.Name)
			counter(descDead, st.DeadTotal, q.Name, t.Name)
			counter(descExpired, st.ExpiredTotal, q.Name, t.Name)
		}
	}
	c.cached, c.read = ms, snap.At // read now here, or earlier by another replica
}
