package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/redisstore"
)

// The queue's and the tag's charts of the rates tagqd keeps (the last
// hour, GetQueueRates) as a user sees them: drawn from the API, with the
// figures in text (peak and latest), axe-clean. The samples are taken on
// driven ticks by a sampler of the test's own on the same Redis (tagqd
// runs with --no-rates), so it needs TAGQ_TEST_REDIS_URL.
func TestBrowser_QueueRatesChart(t *testing.T) {
	e := start(t, "--no-rates")
	if e.redisURL == "" {
		t.Skip("needs TAGQ_TEST_REDIS_URL: the test samples the rates on driven ticks on that Redis")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opt, err := redis.ParseURL(e.redisURL)
	require.NoError(t, err)
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	newSampler := func() *redisstore.Store {
		s, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Prefix: e.prefix, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}

	admin := e.admin
	admin.call("POST", "/v1/queues", map[string]any{"name": "orders"})
	now, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	t2 := now.Truncate(tags.RatesResolution)
	// One sampler records the counters and stops; another takes over at
	// t2, visiting every queue (as a sampler taking over does).
	first := newSampler()
	ok, err := first.SampleRates(ctx, t2.Add(-tags.RatesResolution))
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, first.Close())
	sampler := newSampler()
	for i := 0; i < 5; i++ {
		entries := make([]map[string]any, 10)
		for j := range entries {
			entries[j] = map[string]any{"id": fmt.Sprint(j), "body": "eA=="}
		}
		admin.call("POST", "/v1/queues/orders/messages:batchSend", map[string]any{"entries": entries})
	}
	got := admin.call("POST", "/v1/queues/orders/messages:receive", map[string]any{"max_messages": 10})
	for _, m := range got["messages"].([]any) {
		admin.call("POST", "/v1/messages:delete", map[string]any{"receipt_handle": m.(map[string]any)["receipt_handle"]})
	}
	ok, err = sampler.SampleRates(ctx, t2)
	require.NoError(t, err)
	require.True(t, ok)

	b := newTab(t, e.browser, e.base, e.shots)
	b.do(chromedp.Navigate(e.base + "/ui/#/queue/orders"))
	b.until("the queue's chart", visible("#queue-history svg polyline[data-series='in']")+
		` && document.querySelector('#queue-history figure')?.dataset.max === '5'`)
	legend := b.eval(seenText("#queue-history .legend"))
	require.Contains(t, legend, "in: peak 5.00/s")
	require.Contains(t, legend, "latest")
	require.Contains(t, legend, "deleted: peak 1.00/s")
	require.Contains(t, legend, "dead-lettered: 0/s")
	label := b.eval(`document.querySelector('#queue-history svg').getAttribute('aria-label')`)
	require.Contains(t, label, "Rates of queue orders per second over the last 60 minutes")
	require.Contains(t, label, "in: peak 5.00/s")
	require.Equal(t, "3", b.eval(`String(document.querySelectorAll('#queue-history svg polyline').length)`))
	require.Equal(t, "360", b.eval(`String(document.querySelector('#queue-history polyline').getAttribute('points').split(' ').length)`),
		"a point every 10 s over the hour")
	b.shot("rates-01-queue")
	b.axe("a queue's page with its rates chart")
	b.noConsoleErrors("the queue's rates chart")

	b.open("#/queue/orders/tag/default")
	b.until("the tag's chart", visible("#tag-history svg polyline[data-series='deleted']")+
		` && document.querySelector('#tag-history figure')?.dataset.max === '5'`)
	require.Contains(t, b.eval(seenText("#tag-history .legend")), "deleted: peak 1.00/s")
	require.Contains(t, b.eval(`document.querySelector('#tag-history svg').getAttribute('aria-label')`), "Rates of tag default")
	b.shot("rates-02-tag")
	b.axe("a tag's page with its rates chart")
	b.noConsoleErrors("the tag's rates chart")
}
