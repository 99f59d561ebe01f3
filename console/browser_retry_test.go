package console_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The retry backoff as a user sees it: set from the new queue form, shown
// with the attributes, changed and removed from the edit form (the update
// naming retry_policy alone), a bad range refused with its field.
func TestBrowser_RetryBackoff(t *testing.T) {
	e := start(t)
	b := newTab(t, e.browser, e.base, e.shots)
	b.do(chromedp.Navigate(e.base + "/ui/"))
	b.until("the queues page", `document.querySelector('#queue-table .empty')?.textContent === 'No queues.'`)
	b.open("#/new-queue")
	b.until("the new queue form", visible("#f-rb-min")+` && `+visible("#f-rb-max"))
	b.do(chromedp.SendKeys(chromedp.CSS("#f-name"), "jobs"), setValue("#f-rb-min", "2"), setValue("#f-rb-max", "60"),
		submit("#new-queue-form"))
	b.until("the queue's page", `location.hash === '#/queue/jobs' && !!document.querySelector('#queue-attributes')`)
	b.until("the policy shown", `document.querySelector('#queue-attributes').textContent.includes('Retry backoff2s to 60s')`)
	q := e.admin.call("GET", "/v1/queues/jobs", nil)["queue"].(map[string]any)
	require.Equal(t, map[string]any{"min_backoff_seconds": float64(2), "max_backoff_seconds": float64(60)}, q["retry_policy"])
	require.True(t, b.shown("#queue-attributes"))
	require.NotContains(t, b.eval(seenText("#queue-attributes")), "[object Object]")
	b.axe("a queue's page with a retry backoff")

	// Edit: change it; a bad range is refused naming its field.
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#edit-queue').open = true`))
	b.until("the edit form", `document.querySelector('#e-rb-min')?.value === '2' && document.querySelector('#e-rb-max')?.value === '60'`)
	b.do(setValue("#e-rb-min", "90"), submit("#e-rb-min"))
	b.until("the refusal", visible("#edit-queue .error"))
	refusal := b.eval(seenText("#edit-queue .error"))
	require.Contains(t, refusal, "INVALID_ARGUMENT_RANGE")
	require.Contains(t, refusal, "max_backoff_seconds")
	b.takeConsoleErrors() // the refused update's 400
	b.do(setValue("#e-rb-min", "5"), submit("#e-rb-min"))
	b.until("the saved policy", `document.querySelector('#queue-attributes').textContent.includes('Retry backoff5s to 60s')`)
	q = e.admin.call("GET", "/v1/queues/jobs", nil)["queue"].(map[string]any)
	require.Equal(t, float64(5), q["retry_policy"].(map[string]any)["min_backoff_seconds"])
	require.Equal(t, float64(30), q["visibility_timeout_seconds"], "fields not changed stay")

	// Emptied: removed.
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#edit-queue').open = true`))
	b.until("the edit form", `document.querySelector('#e-rb-min')?.value === '5'`)
	b.do(setValue("#e-rb-min", ""), setValue("#e-rb-max", ""), submit("#e-rb-min"))
	b.until("no policy", `document.querySelector('#queue-attributes').textContent.includes('Retry backoffnone')`)
	require.Nil(t, e.admin.call("GET", "/v1/queues/jobs", nil)["queue"].(map[string]any)["retry_policy"])
	b.noConsoleErrors("editing the retry backoff")
}
