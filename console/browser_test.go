package console_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/tagqdtest"
)

// The browser test drives Debian's headless Chromium through the console
// of a real tagqd with authentication on. It runs with
// TAGQ_BROWSER_TESTS=1 (CI sets it; without Chromium it then fails rather
// than skips); TAGQ_CHROMIUM names the browser (default: chromium on
// PATH). Screenshots of every page go to $TAGQ_CONSOLE_SCREENSHOTS, else
// to the test's artifact directory (kept with go test -artifacts).

const adminKey = "console browser test bootstrap admin key 0123456789"

func chromiumPath(t *testing.T) string {
	t.Helper()
	if os.Getenv("TAGQ_BROWSER_TESTS") != "1" {
		t.Skip("set TAGQ_BROWSER_TESTS=1 to run the browser tests (needs Debian's chromium)")
	}
	if p := os.Getenv("TAGQ_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("TAGQ_BROWSER_TESTS=1 but no chromium on PATH (apt-get install chromium) and no TAGQ_CHROMIUM")
	return ""
}

// api calls tagqd's REST API as a client would.
type api struct {
	t    *testing.T
	base string
	key  string
}

func (a api) call(method, path string, body any) map[string]any {
	a.t.Helper()
	out, code := a.try(method, path, body)
	require.Less(a.t, code, 300, "%s %s: %v", method, path, out)
	return out
}

func (a api) try(method, path string, body any) (map[string]any, int) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(a.t, err)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	require.NoError(a.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	out := map[string]any{}
	require.NoError(a.t, json.NewDecoder(resp.Body).Decode(&out))
	return out, resp.StatusCode
}

// tab is one browser tab on the console.
type tab struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string

	mu       sync.Mutex
	problems []string // exceptions and CSP violations the page reported
	errors   []string // errors in the browser's console (a refused fetch among them)
	axeSrc   string   // axe-core, read when first needed
}

const waitFor = 30 * time.Second

func newTab(t *testing.T, parent context.Context, base, shots string) *tab {
	ctx, cancel := chromedp.NewContext(parent)
	t.Cleanup(cancel)
	tb := &tab{t: t, ctx: ctx, base: base, shots: shots}
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)))
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Refused to") {
				tb.problems = append(tb.problems, m.String())
			} else if m.Type == chromedp.ConsoleError {
				tb.errors = append(tb.errors, m.String())
			}
			tb.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		require.Empty(t, tb.problems, "the page reported errors")
	})
	return tb
}

func (b *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitFor)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, steps...))
}

// until polls a JavaScript condition until it is true or waitFor passes.
func (b *tab) until(what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitFor+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(waitFor)))
	if err != nil {
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('main').innerText`))
		b.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
		b.t.Fatalf("waiting for %s (%s): %v\npage text:\n%s", what, cond, err, html)
	}
}

func (b *tab) eval(expr string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitFor)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	require.NoError(b.t, err, expr)
	return s
}

func (b *tab) open(hash string) {
	b.t.Helper()
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, hash)))
}

// shot writes a PNG of the whole page to the screenshot folder.
func (b *tab) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitFor)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(b.t, err)
	require.NoError(b.t, os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644))
}

// submit submits the form of the element a CSS selector finds, as the
// Enter key or a submit button does (form.submit() would skip the
// page's submit handler).
func submit(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(e => (e.form || e).requestSubmit())(document.querySelector(%q))`, sel))
}

// clickNow clicks the element a CSS selector finds in one step in the
// page: the tables refresh by redrawing, and a click that finds a node,
// then moves the mouse to it, can land between a redraw's removal and
// insertion.
func clickNow(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).click()`, sel))
}

// setValue sets a form field's value as typing or choosing would (input
// and change events).
func setValue(sel, v string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`(e => { e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })(document.querySelector(%q))`, v, sel))
}

// text is the text of the element a CSS selector finds ("" if none).
func text(sel string) string {
	return fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? '').trim()`, sel)
}

func dropPrefix(t *testing.T, url, prefix string) {
	opt, err := redis.ParseURL(url)
	require.NoError(t, err)
	c := redis.NewClient(opt)
	defer c.Close()
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
	for iter.Next(ctx) {
		require.NoError(t, c.Del(ctx, iter.Val()).Err())
	}
	require.NoError(t, iter.Err())
}

var (
	buildOnce sync.Once
	tagqdBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if tagqdBin != "" {
		_ = os.RemoveAll(filepath.Dir(tagqdBin))
	}
	os.Exit(code)
}

// env is a tagqd (built once per test binary) and a headless Chromium.
type env struct {
	base, shots string
	browser     context.Context
	admin       api
	tagqd       *tagqdtest.Daemon
	// redisURL and prefix: where tagqd keeps its data, on a shared Redis
	// (TAGQ_TEST_REDIS_URL; empty: the embedded store).
	redisURL, prefix string
}

// start runs tagqd with args (on TAGQ_TEST_REDIS_URL's Redis when set,
// under a key prefix of the test's own) and a browser.
func start(t *testing.T, args ...string) env {
	t.Helper()
	chromium := chromiumPath(t)
	shots := os.Getenv("TAGQ_CONSOLE_SCREENSHOTS")
	if shots == "" {
		shots = t.ArtifactDir()
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))
	t.Logf("screenshots in %s", shots)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tagq-console-test")
		if err != nil {
			buildErr = err
			return
		}
		tagqdBin, buildErr = tagqdtest.Build(dir)
	})
	require.NoError(t, buildErr)

	url, prefix := os.Getenv("TAGQ_TEST_REDIS_URL"), ""
	if url != "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		prefix = "tagqconsole-" + hex.EncodeToString(b[:])
		args = append(args, "--redis-url", url, "--key-prefix", prefix)
		t.Cleanup(func() { dropPrefix(t, url, prefix) })
	}
	d, err := tagqdtest.Start(tagqdBin, args...)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = d.Stop() })
	base := "http://" + d.HTTP

	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-gpu", true))...)
	t.Cleanup(cancel)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	require.NoError(t, chromedp.Do(browser)) // start it
	return env{base: base, shots: shots, browser: browser, admin: api{t: t, base: base, key: adminKey}, tagqd: d,
		redisURL: url, prefix: prefix}
}

func TestBrowser_ConsoleScenario(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "admin.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(adminKey+"\n"), 0o600))
	e := start(t, "--auth", "--admin-key-file", keyFile)
	base, shots, browser, admin := e.base, e.shots, e.browser, e.admin

	b := newTab(t, browser, base, shots)

	// / goes to the console, which asks for a key; a wrong one is refused.
	b.do(chromedp.Navigate(base + "/"))
	b.until("the sign-in form", `!!document.querySelector('#apikey')`)
	require.Equal(t, base+"/ui/", b.eval(`location.href`), "/ redirects to the console")
	b.shot("01-signin")
	// Nothing to sign out of yet; and asking for a key needed no refused probe.
	require.False(t, b.shown("#signout"), "Sign out is not offered on the sign-in page")
	b.noConsoleErrors("loading the sign-in page")
	b.axe("the sign-in page")
	b.do(chromedp.SendKeys(chromedp.CSS("#apikey"), "tagq_wrong_key"), submit("#signin-form"))
	b.until("the refusal", visible("#signin-form .error")+` && document.querySelector('#signin-form .error').innerText.includes('UNAUTHENTICATED')`)
	refusal := b.eval(seenText("#signin-form .error"))
	require.Equal(t, 1, strings.Count(refusal, "UNAUTHENTICATED"), "the reason is shown once: %q", refusal)
	require.Len(t, b.takeConsoleErrors(), 1, "the wrong key's 401, and nothing else")
	require.Empty(t, b.eval(`sessionStorage.getItem('tagq.apiKey') ?? ''`), "a refused key is not kept")
	b.do(setValue("#apikey", ""), chromedp.SendKeys(chromedp.CSS("#apikey"), adminKey), submit("#signin-form"))
	b.until("the queues page", `document.querySelector('#queue-table .empty')?.textContent === 'No queues.'`)
	require.Equal(t, "signed in: admin", b.eval(text("#who")))
	require.True(t, b.shown("#signout"), "a signed-in admin can sign out")
	require.True(t, b.shown(`[data-nav="new-queue"]`), "an admin is offered New queue")
	b.noConsoleErrors("signing in and loading the queues")
	b.axe("the empty queues page")
	require.Equal(t, adminKey, b.eval(`sessionStorage.getItem('tagq.apiKey')`), "the key is in sessionStorage")
	require.Empty(t, b.eval(`document.cookie`), "and in no cookie")
	require.NotContains(t, b.eval(`location.href`), "key")

	// A dead-letter queue, then a queue that dead-letters to it, from the form.
	b.open("#/new-queue")
	b.until("the new queue form", `!!document.querySelector('#new-queue-form')`)
	b.do(chromedp.SendKeys(chromedp.CSS("#f-name"), "orders-dlq"), chromedp.Click(chromedp.CSS("#f-dead_letter_queue")),
		submit("#new-queue-form"))
	b.until("the DLQ's page", `location.hash === '#/queue/orders-dlq' && !!document.querySelector('#tag-table')`)
	b.open("#/new-queue")
	b.until("the new queue form", `!!document.querySelector('#new-queue-form') && document.querySelector('#f-name').value === ''`)
	b.shot("02-new-queue")
	b.axe("the new queue form")
	b.do(chromedp.SendKeys(chromedp.CSS("#f-name"), "orders"), chromedp.SendKeys(chromedp.CSS("#f-rp-dlq"), "orders-dlq"),
		chromedp.SendKeys(chromedp.CSS("#f-rp-max"), "3"), submit("#new-queue-form"))
	b.until("the queue's page", `location.hash === '#/queue/orders' && !!document.querySelector('#tag-table [data-tag="default"]')`)
	q := admin.call("GET", "/v1/queues/orders", nil)["queue"].(map[string]any)
	require.Equal(t, map[string]any{"dead_letter_queue": "orders-dlq", "max_receive_count": float64(3)}, q["redrive_policy"])

	// Two tags, from the new tag form.
	for _, tag := range []string{"billing", "shipping"} {
		b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#new-tag').open = true`),
			chromedp.SendKeys(chromedp.CSS("#t-name"), tag), submit("#new-tag-form"))
		b.until("tag "+tag, fmt.Sprintf(`!!document.querySelector('#tag-table [data-tag=%q]')`, tag))
	}

	// Edit an attribute: the update names only what changed.
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#edit-queue').open = true`))
	b.until("the edit form", `document.querySelector('#f-visibility_timeout_seconds')?.value === '30'`)
	b.do(setValue("#f-visibility_timeout_seconds", "45"), submit("#f-visibility_timeout_seconds"))
	b.until("the saved attribute", `document.querySelector('#queue-attributes')?.textContent.includes('Visibility timeout seconds45')`)
	q = admin.call("GET", "/v1/queues/orders", nil)["queue"].(map[string]any)
	require.Equal(t, float64(45), q["visibility_timeout_seconds"])
	require.NotNil(t, q["redrive_policy"], "fields not changed stay")

	// Messages sent through the API show on the queues page.
	admin.call("POST", "/v1/queues/orders/messages:batchSend", map[string]any{"entries": []map[string]any{
		{"id": "1", "body": "eyJvcmRlciI6IDEsICJ0b3RhbCI6IDQyfQ=="}, // {"order": 1, "total": 42}
		{"id": "2", "body": "b3JkZXIgMg==", "attributes": map[string]any{"region": map[string]any{"string_value": "eu"}}},
		{"id": "3", "body": "AAECA/8="},
	}})
	b.open("#/queues")
	avail := func(tag string) string {
		return fmt.Sprintf(`document.querySelector('[data-tag=%q] [data-col="available"]')?.textContent`, tag)
	}
	b.until("depths of 3", avail("orders/billing")+` === '3' && `+avail("orders/shipping")+` === '3'`)
	// The queue's row: 3 messages held, 3 available to its tags (not 3 × 3 tags).
	queueCol := func(q, col string) string {
		return b.eval(fmt.Sprintf(`document.querySelector('[data-queue=%q] [data-col=%q]')?.textContent`, q, col))
	}
	require.Equal(t, "3", queueCol("orders", "messages"))
	require.Equal(t, "3", queueCol("orders", "available"), "a queue's Available is its tag's furthest behind, not a sum over tags")
	require.Contains(t, b.eval(seenText("#queue-table caption")), "furthest behind", "the table says what the queue row's numbers are")
	b.shot("03-queues")
	b.axe("the queues page")
	// Keyboard: "/" finds. (A keydown only: the protocol's separate char
	// event would type the "/" too, which a real keypress does not.)
	b.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); document.body.dispatchEvent(new KeyboardEvent('keydown', {key: '/', bubbles: true, cancelable: true}))`))
	b.until("the search field focused", `document.activeElement?.id === 'queue-search'`)

	// Billing dead-letters one message.
	recv := admin.call("POST", "/v1/queues/orders/messages:receive", map[string]any{"tag": "billing", "max_messages": 1})
	msg := recv["messages"].([]any)[0].(map[string]any)
	admin.call("POST", "/v1/queues/orders/messages:dead", map[string]any{"receipt_handle": msg["receipt_handle"],
		"reason": "BAD_ACCOUNT", "description": "no such account"})
	b.until("billing's depth down to 2", avail("orders/billing")+` === '2' && `+avail("orders/shipping")+` === '3'`)
	b.until("the dead letter counted", `document.querySelector('[data-tag="orders/billing"] [data-col="dead"]')?.textContent === '1'`)
	require.Equal(t, "3", queueCol("orders", "available"), "shipping still has 3")

	// The queue and the tag pages.
	b.open("#/queue/orders")
	b.until("the queue page's tags", `document.querySelector('#tag-table [data-tag="billing"] [data-col="dead_total"]')?.textContent === '1'`)
	require.Contains(t, b.eval(text("#queue-attributes")), "orders-dlq")
	b.shot("04-queue")
	b.axe("the queue page")
	// Destructive actions are confirmed; Escape cancels, and nothing is purged.
	b.do(chromedp.Focus(chromedp.CSS("#purge")), chromedp.KeyEvent("\r"))
	b.until("the purge confirmation", `document.querySelector('#confirm').open && document.activeElement?.id === 'confirm-type'`)
	require.Equal(t, "true", b.eval(`String(document.querySelector('#confirm-ok').disabled)`), "purge waits for the queue's name")
	require.True(t, b.shown("#confirm-type"), "the field to type the name in is shown")
	require.Contains(t, b.eval(seenText("#confirm")), "Type orders to confirm")
	b.axe("the purge confirmation")
	b.do(chromedp.KeyEvent("\x1b"))
	b.until("the confirmation closed", `!document.querySelector('#confirm').open`)
	require.Equal(t, "3", fmt.Sprint(admin.call("GET", "/v1/queues/orders", nil)["queue"].(map[string]any)["state"].(map[string]any)["retained_messages"]))
	// A tag with a start time and a filter, from the form.
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#new-tag').open = true`),
		chromedp.SendKeys(chromedp.CSS("#t-name"), "eu-only"), setValue("#t-start", "all"),
		setValue("#t-filter", "region=eu"), submit("#new-tag-form"))
	b.until("tag eu-only with the one eu message", `document.querySelector('#tag-table [data-tag="eu-only"] [data-col="available"]')?.textContent === '1'`)
	tag := admin.call("GET", "/v1/queues/orders/tags/eu-only", nil)["tag"].(map[string]any)
	require.Equal(t, "1970-01-01T00:00:00Z", tag["start_time"])
	require.Equal(t, []any{map[string]any{"name": "region", "string_value": "eu"}}, tag["filter"].(map[string]any)["conditions"])
	b.open("#/queue/orders/tag/eu-only")
	b.until("its settings", `document.querySelector('#tag-info')?.textContent.includes('region = "eu"') && document.querySelector('#tag-info').textContent.includes('every retained message')`)

	b.open("#/queue/orders/tag/billing")
	b.until("the tag's counters", `document.querySelector('[data-counter="dead_total"] .v')?.textContent === '1' && !!document.querySelector('#tag-chart svg.chart')`)
	// Rates need two readings or more: then the chart has its four lines.
	b.until("the tag's rates chart", `document.querySelectorAll('#tag-chart svg.chart polyline').length === 4`)
	b.shot("05-tag")
	b.axe("the tag page")
	b.noConsoleErrors("on the queue and tag pages")

	// A tag that does not exist: its error, once, and nothing to do to it.
	b.open("#/queue/orders/tag/nope")
	b.until("the missing tag's error", visible("main .error"))
	missing := b.eval(seenText("main .error"))
	require.Equal(t, 1, strings.Count(missing, "TAG_NOT_FOUND"), "the reason is shown once: %q", missing)
	require.False(t, b.shown(`main a[href*="/peek"]`), "no Peek for a missing tag")
	require.False(t, b.shown("#delete-tag"), "no Delete for a missing tag")
	require.Len(t, b.takeConsoleErrors(), 1, "the missing tag's 404")

	// Peek at shipping's messages: JSON, text, hex.
	b.open("#/queue/orders/peek?tag=shipping")
	b.until("three peeked messages", `document.querySelectorAll('#peeked .msg').length === 3`)
	require.Contains(t, b.eval(text("#peeked .msg:nth-child(1) pre")), `"total": 42`, "a JSON body is shown as JSON")
	require.Equal(t, "order 2", b.eval(text("#peeked .msg:nth-child(2) pre")))
	require.Contains(t, b.eval(text("#peeked .msg:nth-child(2) .attrs")), "eu")
	require.Contains(t, b.eval(text("#peeked .msg:nth-child(3) pre")), "00 01 02 03 ff", "a binary body is shown in hex")
	b.shot("06-peek")
	b.axe("the peek page")

	// The dead-letter queue's page names its source queues.
	b.open("#/queue/orders-dlq")
	b.until("the DLQ's source queues", `document.querySelector('#queue-attributes')?.textContent.includes('Source queuesorders') && !!document.querySelector('a[href="#/queue/orders-dlq/dead"]')`)
	b.shot("07-dlq")
	b.axe("the dead-letter queue's page")

	// The dead letter, with its origin and reason; filter by source.
	b.open("#/queue/orders-dlq/dead")
	b.until("the dead letter", `document.querySelector('#dead-table [data-col="reason"]')?.textContent === 'BAD_ACCOUNT'`)
	row := b.eval(text("#dead-table tbody tr"))
	require.Contains(t, row, "orders / billing")
	require.Contains(t, row, "no such account")
	b.do(setValue("#dead-source", "orders"), submit("#dead-source"))
	b.until("the filtered list", `document.querySelectorAll('#dead-table tbody tr[data-message]').length === 1`)
	b.shot("08-dead-letters")
	b.axe("the dead letters page")

	// Move it back: the move page, confirmed, runs to completion.
	b.do(chromedp.Click(chromedp.CSS("#move-back")))
	b.until("the moves page", `location.hash.startsWith('#/queue/orders-dlq/moves') && document.querySelector('#m-source')?.value === 'orders'`)
	b.do(chromedp.Click(chromedp.CSS("#start-move-button")))
	b.until("the confirmation", `document.querySelector('#confirm').open`)
	require.False(t, b.shown("#confirm-type-label"), "a confirmation that needs no typing shows no field to type in")
	require.False(t, b.shown("#confirm-type"), "a confirmation that needs no typing shows no field to type in")
	b.shot("09-confirm-move")
	b.do(chromedp.Click(chromedp.CSS("#confirm-ok")))
	b.until("the move done", `document.querySelector('#moves-table .badge')?.textContent === 'completed' && document.querySelector('#moves-table [data-col="moved"]')?.textContent === '1'`)
	b.shot("10-moves")
	b.axe("the moves page")

	// Billing has it again; shipping never lost it.
	b.open("#/queues")
	b.until("billing's depth back to 3", avail("orders/billing")+` === '3' && `+avail("orders/shipping")+` === '3'`)
	b.until("the queue's sparkline", `document.querySelectorAll('[data-queue="orders"] svg.spark polyline').length === 2`)

	// Phone width, dark.
	b.do(chromedp.EmulateViewport(390, 844))
	b.open("#/queue/orders")
	b.until("the queue page", `!!document.querySelector('#tag-table [data-tag="billing"]')`)
	b.do(chromedp.KeyEvent("t"))
	b.until("the dark theme", `document.documentElement.dataset.theme === 'dark'`)
	require.Equal(t, "true", b.eval(`String(document.documentElement.scrollWidth <= 390)`), "no sideways scrolling of the page at phone width")
	b.shot("11-queue-phone-dark")
	b.open("#/queues")
	b.until("the queues page", avail("orders/billing")+` === '3'`)
	require.Equal(t, "true", b.eval(`String(document.documentElement.scrollWidth <= 390)`), "no sideways scrolling of the page at phone width")
	b.shot("11-queues-phone-dark")
	b.do(chromedp.EmulateViewport(1280, 800))
	b.open("#/queues")
	b.until("the queues page", avail("orders/billing")+` === '3'`)
	b.shot("12-queues-dark")

	// A slow move (1 a second) of ten dead letters, cancelled while it runs.
	entries := []map[string]any{}
	for i := range 10 {
		entries = append(entries, map[string]any{"id": fmt.Sprint(i), "body": "c2xvdw=="})
	}
	admin.call("POST", "/v1/queues/orders/messages:batchSend", map[string]any{"entries": entries})
	var dead []map[string]any
	for len(dead) < 10 {
		got := admin.call("POST", "/v1/queues/orders/messages:receive", map[string]any{"tag": "shipping", "max_messages": 10 - len(dead)})
		for _, m := range got["messages"].([]any) {
			dead = append(dead, map[string]any{"id": fmt.Sprint(len(dead)), "receipt_handle": m.(map[string]any)["receipt_handle"], "reason": "SLOW"})
		}
	}
	admin.call("POST", "/v1/queues/orders/messages:batchDead", map[string]any{"entries": dead})
	b.open("#/queue/orders-dlq/moves?source=orders&stag=shipping")
	b.until("the move form", `document.querySelector('#m-tag')?.value === 'shipping'`)
	b.do(setValue("#m-rate", "1"), chromedp.Click(chromedp.CSS("#start-move-button")))
	b.until("the confirmation", `document.querySelector('#confirm').open`)
	b.do(chromedp.Click(chromedp.CSS("#confirm-ok")))
	b.until("the running move", `!!document.querySelector('#moves-table tr[data-task] button')`)
	b.do(clickNow("#moves-table tr[data-task] button"))
	b.until("the confirmation", `document.querySelector('#confirm').open`)
	b.do(chromedp.Click(chromedp.CSS("#confirm-ok")))
	b.until("the move cancelled", `[...document.querySelectorAll('#moves-table .badge')].some(e => e.textContent === 'cancelled')`)
	tasks := admin.call("GET", "/v1/queues/orders-dlq/messageMoves", nil)["tasks"].([]any)
	cancelled := 0
	for _, tk := range tasks {
		if tk := tk.(map[string]any); tk["state"] == "STATE_CANCELLED" {
			cancelled++
			require.Equal(t, "shipping", tk["source_tag"])
			require.Equal(t, float64(1), tk["max_messages_per_second"])
		}
	}
	require.Equal(t, 1, cancelled)
	b.shot("13-move-cancelled")

	// Paging: 60 more queues, 25 a page, forward and back.
	for i := range 60 {
		admin.call("POST", "/v1/queues", map[string]any{"name": fmt.Sprintf("bulk-%03d", i)})
	}
	first := `document.querySelector('#queue-table tbody tr[data-queue]')?.dataset.queue`
	rows := `document.querySelectorAll('#queue-table tbody tr[data-queue]').length`
	b.open("#/queues?prefix=bulk-&size=25")
	b.until("page 1", first+` === 'bulk-000' && `+rows+` === 25`)
	b.do(clickNow("#next-page"))
	b.until("page 2", first+` === 'bulk-025' && `+rows+` === 25`)
	b.do(clickNow("#next-page"))
	b.until("page 3", first+` === 'bulk-050' && `+rows+` === 10 && document.querySelector('#next-page').disabled`)
	b.do(clickNow("#prev-page"))
	b.until("page 2 again", first+` === 'bulk-025'`)
	b.shot("14-queues-paged")
	b.noConsoleErrors("on the admin's pages")

	// A principal that may only look at orders is offered nothing else.
	admin.call("POST", "/v1/principals", map[string]any{"name": "viewer"})
	admin.call("POST", "/v1/permissions", map[string]any{"principal": "viewer", "queue": "orders", "permission": "PERMISSION_GET_QUEUE_INFO"})
	viewerKey := admin.call("POST", "/v1/principals/viewer/keys", map[string]any{})["api_key"].(string)
	v := newTab(t, browser, base, shots)
	v.do(chromedp.Navigate(base + "/ui/"))
	v.until("the sign-in form", `!!document.querySelector('#apikey')`)
	v.do(chromedp.SendKeys(chromedp.CSS("#apikey"), viewerKey), submit("#signin-form"))
	v.until("the viewer's queues", `!!document.querySelector('#queues a[href="#/queue/orders"]')`)
	require.Equal(t, "signed in: viewer", v.eval(text("#who")))
	require.False(t, v.shown(`[data-nav="new-queue"]`), "GET_QUEUE_INFO alone is not offered New queue")
	require.False(t, v.shown(`main a[href="#/new-queue"]`), "GET_QUEUE_INFO alone is not offered New queue")
	require.True(t, v.shown("#signout"))
	v.shot("15-viewer-queues")
	v.axe("the viewer's queues page")
	v.open("#/queue/orders")
	v.until("the queue page", `!!document.querySelector('#tag-table [data-tag="billing"]')`)
	for _, sel := range []string{"#purge", "#delete-queue", "#new-tag", "#edit-queue", "#send", `a[href^="#/queue/orders/peek"]`, "#tag-table button"} {
		require.Equal(t, "false", v.eval(fmt.Sprintf(`String(!!document.querySelector(%q))`, sel)), "a viewer is not offered %s", sel)
	}
	v.shot("16-viewer-queue")
	v.noConsoleErrors("on the viewer's pages")
	v.do(chromedp.Click(chromedp.CSS("#signout")))
	v.until("the sign-in form", `!!document.querySelector('#apikey') && sessionStorage.length === 0`)
	require.False(t, v.shown("#signout"), "signed out: nothing to sign out of")
	v.noConsoleErrors("signing out")
}

// Without --auth there is nothing to sign in with: the console opens on
// the queues and offers everything.
func TestBrowser_AuthOff(t *testing.T) {
	e := start(t)
	b := newTab(t, e.browser, e.base, e.shots)
	b.do(chromedp.Navigate(e.base + "/ui/"))
	b.until("the queues page", `document.querySelector('#queue-table .empty')?.textContent === 'No queues.'`)
	require.Equal(t, "authentication off", b.eval(text("#who")))
	require.False(t, b.shown("#signout"), "no Sign out without authentication")
	require.True(t, b.shown(`[data-nav="new-queue"]`))
	b.noConsoleErrors("loading the console without authentication (no refused probe)")
	b.open("#/new-queue")
	b.until("the new queue form", `!!document.querySelector('#new-queue-form')`)
	b.do(chromedp.SendKeys(chromedp.CSS("#f-name"), "plain"), submit("#new-queue-form"))
	b.until("the queue's page", `location.hash === '#/queue/plain' && !!document.querySelector('#purge') && !!document.querySelector('#new-tag')`)
	// Send a message from the form; peek at it.
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#send').open = true`),
		setValue("#s-body", "héllo"), setValue("#s-attrs", "kind=greeting"), submit("#send-form"))
	b.until("the message counted", `document.querySelector('#tag-table [data-tag="default"] [data-col="available"]')?.textContent === '1'`)
	require.False(t, b.shown("#s-topic"), "no topic on a plain queue")
	// A send refused: the error once, across the whole form, words unbroken.
	b.do(setValue("#s-attrs", "DLQ.sourceQueue=x"), submit("#send-form"))
	b.until("the refusal", visible("#send-form .error"))
	refusal := b.eval(seenText("#send-form .error"))
	require.Equal(t, 1, strings.Count(refusal, "RESERVED_ATTRIBUTE"), "the reason is shown once: %q", refusal)
	require.Equal(t, "true", b.eval(`String(document.querySelector('#send-form .error').getBoundingClientRect().width >= 0.9 * document.querySelector('#send-form').getBoundingClientRect().width)`),
		"the error spans the form, not one grid column")
	require.Equal(t, "true", b.eval(`String((() => { const e = document.querySelector('#send-form .error'); const r = document.createRange(); r.selectNodeContents(e);
		return r.getClientRects().length <= 4; })())`), "the error reads in a line or two, not a word a line")
	b.takeConsoleErrors() // the refused send's 400
	b.shot("auth-off-queue")
	b.axe("a queue's page with the forms open")
	b.open("#/queue/plain/peek")
	b.until("the message", `document.querySelector('#peeked .msg pre')?.textContent === 'héllo' && document.querySelector('#peeked .attrs')?.textContent.includes('greeting')`)

	// A topic queue, from the form: sends need a topic, peek shows it.
	b.open("#/new-queue")
	b.until("the new queue form", `!!document.querySelector('#new-queue-form') && document.querySelector('#f-name').value === ''`)
	require.True(t, b.shown("#f-topic_queue"), "Topic queue is offered")
	b.do(chromedp.SendKeys(chromedp.CSS("#f-name"), "ordered"), chromedp.Click(chromedp.CSS("#f-topic_queue")), submit("#new-queue-form"))
	b.until("the topic queue's page", `location.hash === '#/queue/ordered' && !!document.querySelector('#send-form')`)
	require.Equal(t, true, e.admin.call("GET", "/v1/queues/ordered", nil)["queue"].(map[string]any)["topic_queue"])
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#send').open = true`))
	require.True(t, b.shown("#s-topic"), "a topic queue's send form asks for the topic")
	b.do(setValue("#s-body", "first"), setValue("#s-topic", "customer-7"), submit("#send-form"))
	b.until("the message counted", `document.querySelector('#tag-table [data-tag="default"] [data-col="available"]')?.textContent === '1'`)
	require.Empty(t, b.eval(seenText("#send-form .errors")))
	b.open("#/queue/ordered/peek")
	b.until("the message with its topic", `document.querySelector('#peeked .msg [data-field="topic"]')?.innerText === 'topic customer-7'`)

	// A priority queue: the send form takes a priority, peek shows it.
	b.open("#/new-queue")
	b.until("the new queue form", `!!document.querySelector('#new-queue-form') && document.querySelector('#f-name').value === ''`)
	b.do(chromedp.SendKeys(chromedp.CSS("#f-name"), "urgent"), chromedp.Click(chromedp.CSS("#f-priority_queue")), submit("#new-queue-form"))
	b.until("the priority queue's page", `location.hash === '#/queue/urgent' && !!document.querySelector('#send-form')`)
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#send').open = true`))
	require.True(t, b.shown("#s-priority"))
	b.do(setValue("#s-body", "now"), setValue("#s-priority", "2"), submit("#send-form"))
	b.until("the message counted", `document.querySelector('#tag-table [data-tag="default"] [data-col="available"]')?.textContent === '1'`)
	b.open("#/queue/urgent/peek")
	b.until("the message with its priority", `document.querySelector('#peeked .msg [data-field="priority"]')?.innerText === 'priority 2'`)

	// A partitioned queue: Partitions is 1-64, not offered for a dead-letter
	// or priority queue; the queue page shows the count and sums.
	b.open("#/new-queue")
	b.until("the new queue form", `!!document.querySelector('#new-queue-form') && document.querySelector('#f-name').value === ''`)
	require.True(t, b.shown("#f-partitions"), "Partitions is offered")
	require.Equal(t, "1-64", b.eval(`(e => e.min + '-' + e.max)(document.querySelector('#f-partitions'))`))
	for _, single := range []string{"#f-priority_queue", "#f-dead_letter_queue"} {
		b.do(chromedp.Click(chromedp.CSS(single)))
		require.False(t, b.shown("#f-partitions"), "no partitions with %s", single)
		require.Equal(t, "true", b.eval(`String(document.querySelector('#f-partitions').disabled)`))
		b.do(chromedp.Click(chromedp.CSS(single)))
		require.True(t, b.shown("#f-partitions"), "partitions again without %s", single)
	}
	// Typed, then hidden by the DLQ choice: not sent, the DLQ is made.
	b.do(chromedp.SendKeys(chromedp.CSS("#f-name"), "spread-dlq"), setValue("#f-partitions", "4"),
		chromedp.Click(chromedp.CSS("#f-dead_letter_queue")), submit("#new-queue-form"))
	b.until("the DLQ's page", `location.hash === '#/queue/spread-dlq' && !!document.querySelector('#queue-attributes')`)
	require.Equal(t, float64(1), e.admin.call("GET", "/v1/queues/spread-dlq", nil)["queue"].(map[string]any)["partitions"])
	require.False(t, b.shown("#partitions"), "no partition badge for one")
	b.open("#/new-queue")
	b.until("the new queue form", `!!document.querySelector('#new-queue-form') && document.querySelector('#f-name').value === ''`)
	b.do(chromedp.SendKeys(chromedp.CSS("#f-name"), "spread"), setValue("#f-partitions", "4"), submit("#new-queue-form"))
	b.until("the partitioned queue's page", `location.hash === '#/queue/spread' && !!document.querySelector('#queue-attributes')`)
	require.Equal(t, float64(4), e.admin.call("GET", "/v1/queues/spread", nil)["queue"].(map[string]any)["partitions"])
	require.Equal(t, "4 partitions", b.eval(seenText("#partitions")))
	require.Contains(t, b.eval(seenText("#queue-attributes")), "Partitions\n4")
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#edit-queue').open = true`))
	b.until("the edit form", `!!document.querySelector('#edit-queue #f-visibility_timeout_seconds')`)
	require.Equal(t, "true", b.eval(`String(!document.querySelector('#edit-queue #f-partitions'))`),
		"the edit form does not offer partitions (fixed at creation)")
	for i := range 4 { // four batches: one to each partition
		e.admin.call("POST", "/v1/queues/spread/messages:batchSend", map[string]any{"entries": []map[string]any{
			{"id": "a", "body": "YQ=="}, {"id": "b", "body": "Yg=="}, {"id": fmt.Sprint("c", i), "body": "Yw=="}}})
	}
	b.until("the sums", `document.querySelector('#tag-table [data-tag="default"] [data-col="available"]')?.textContent === '12' &&
		document.querySelector('#queue-state [data-state="retained_messages"] .v')?.textContent === '12'`)
	b.noConsoleErrors("creating a partitioned queue")

	// A queue without a default tag says so.
	b.open("#/new-queue")
	b.until("the new queue form", `!!document.querySelector('#new-queue-form') && document.querySelector('#f-name').value === ''`)
	b.do(chromedp.SendKeys(chromedp.CSS("#f-name"), "untagged"), chromedp.Click(chromedp.CSS("#p-no_default_tag")), submit("#new-queue-form"))
	b.until("its attributes", `location.hash === '#/queue/untagged' && document.querySelector('#queue-attributes')?.innerText.includes('Default tag name')`)
	require.Contains(t, b.eval(seenText("#queue-attributes")), "none (created without a default tag)")
	require.NotContains(t, b.eval(seenText("#queue-attributes")), "Default tag name\ndefault")
	b.noConsoleErrors("creating queues and sending")

	// tagqd stops answering: the page says so and marks what it shows as old.
	b.open("#/queue/plain")
	b.until("the queue page", `document.querySelector('#tag-table [data-tag="default"] [data-col="available"]')?.textContent === '1'`)
	_, err := e.tagqd.Stop()
	require.NoError(t, err)
	b.until("the stale banner", visible("#stale")+` && document.querySelector('#stale').innerText.includes('tagqd is not answering')`)
	banner := b.eval(seenText("#stale"))
	require.Contains(t, banner, "not current", banner)
	require.Equal(t, "true", b.eval(`String(document.querySelector('main').classList.contains('stale') &&
		getComputedStyle(document.querySelector('#tag-table td.num')).textDecorationLine.includes('line-through'))`), "the old numbers are struck through")
	b.shot("auth-off-stale")
	b.takeConsoleErrors() // the failed fetches
}

// What an operator does with many queues and one message at a time: one
// API call a reading lists a page of queues with their tags; search by any
// part of a name, sort by a column, the total and a jump to a page; auto
// refresh set, paused and resumed; peek page after page; receive messages
// and settle each by itself.
func TestBrowser_Operators(t *testing.T) {
	e := start(t)
	admin := e.admin
	send := func(q string, n int) {
		entries := []map[string]any{}
		for i := range n {
			entries = append(entries, map[string]any{"id": fmt.Sprint(i), "body": "bXNn"}) // "msg"
		}
		admin.call("POST", "/v1/queues/"+q+"/messages:batchSend", map[string]any{"entries": entries})
	}
	admin.call("POST", "/v1/queues", map[string]any{"name": "beta-dlq", "dead_letter_queue": true})
	admin.call("POST", "/v1/queues", map[string]any{"name": "beta-orders", "redrive_policy": map[string]any{"dead_letter_queue": "beta-dlq", "max_receive_count": 5}})
	admin.call("POST", "/v1/queues", map[string]any{"name": "alpha-orders"})
	admin.call("POST", "/v1/queues/alpha-orders/tags", map[string]any{"name": "audit", "start_time": "1970-01-01T00:00:00Z"})
	send("beta-orders", 12)
	send("alpha-orders", 5)
	for i := range 27 {
		admin.call("POST", "/v1/queues", map[string]any{"name": fmt.Sprintf("x-%02d", i)})
	}

	b := newTab(t, e.browser, e.base, e.shots)
	b.do(chromedp.Navigate(e.base + "/ui/#/queues?size=25"))
	first := `document.querySelector('#queue-table tbody tr[data-queue]')?.dataset.queue`
	rows := `document.querySelectorAll('#queue-table tbody tr[data-queue]').length`
	b.until("page 1 of 2", rows+` === 25 && document.querySelector('#queue-total')?.textContent === '30 queues' && document.querySelector('#page-count')?.textContent === 'of 2'`)
	b.until("the tags' numbers", `document.querySelector('[data-queue="beta-orders"] [data-col="available"]')?.textContent === '12'`)
	tagCalls := `String(performance.getEntriesByType('resource').filter(e => /\/v1\/queues\/[^?]*\/tags/.test(e.name)).length)`
	require.Equal(t, "0", b.eval(tagCalls), "no call per queue: ListQueues' tags view")

	// Search any part of a name.
	b.do(chromedp.SendKeys(chromedp.CSS("#queue-search"), "orders"))
	b.until("the two orders queues", rows+` === 2 && `+first+` === 'alpha-orders' && document.querySelector('#queue-total')?.textContent === '2 queues'`)
	// Sort by Available: largest first, then smallest first.
	b.do(clickNow(`th button[data-sort="available"]`))
	b.until("sorted by available, descending", first+` === 'beta-orders' && document.querySelector('th[aria-sort="descending"] [data-sort="available"]') !== null`)
	require.Contains(t, b.eval(`location.hash`), "sort=available")
	b.axe("the queues page, searched and sorted")
	b.do(clickNow(`th button[data-sort="available"]`))
	b.until("sorted by available, ascending", first+` === 'alpha-orders' && document.querySelector('th[aria-sort="ascending"] [data-sort="available"]') !== null`)
	// Jump to a page.
	b.open("#/queues?size=25")
	b.until("page 1", rows+` === 25`)
	b.do(setValue("#page-jump", "2"), submit("#page-jump"))
	b.until("page 2", first+` === 'x-22' && `+rows+` === 5 && document.querySelector('#next-page').disabled`)
	b.shot("20-queues-page-2")

	// Auto refresh: every 2 s, then paused (numbers stay), then at once.
	listCalls := `performance.getEntriesByType('resource').filter(e => e.name.includes('/v1/queues?')).length`
	b.open("#/queues?q=beta-orders")
	b.until("beta-orders", `document.querySelector('[data-queue="beta-orders"] [data-col="available"]')?.textContent === '12'`)
	b.do(setValue("#refresh", "2"))
	calls := b.eval(`String(` + listCalls + `)`)
	b.until("a refresh within seconds", listCalls+` > `+calls)
	b.do(setValue("#refresh", "0"))
	require.Equal(t, "paused", b.eval(`document.documentElement.dataset.refresh`))
	calls = b.eval(`String(` + listCalls + `)`)
	send("beta-orders", 1)
	time.Sleep(3 * time.Second) // a 2 s refresh would have read again by now
	require.Equal(t, calls, b.eval(`String(`+listCalls+`)`), "paused: no reading")
	require.Equal(t, "12", b.eval(`document.querySelector('[data-queue="beta-orders"] [data-col="available"]').textContent`))
	b.do(chromedp.Click(chromedp.CSS("#refresh-now")))
	b.until("refreshed now", `document.querySelector('[data-queue="beta-orders"] [data-col="available"]')?.textContent === '13'`)
	b.do(setValue("#refresh", "5"))

	// Peek page after page: 5, 5, 3.
	b.open("#/queue/beta-orders/peek?max=5")
	cards := `document.querySelectorAll('#peeked .msg').length`
	b.until("page 1", cards+` === 5 && document.querySelector('#peek-page')?.textContent === 'page 1'`)
	b.do(chromedp.Click(chromedp.CSS("#peek-next")))
	b.until("page 2", cards+` === 5 && document.querySelector('#peek-page')?.textContent === 'page 2'`)
	b.do(chromedp.Click(chromedp.CSS("#peek-next")))
	b.until("page 3, the last", cards+` === 3 && document.querySelector('#peek-page')?.textContent === 'page 3' && document.querySelector('#peek-next').disabled`)
	b.do(chromedp.Click(chromedp.CSS("#peek-prev")))
	b.until("page 2 again", cards+` === 5 && document.querySelector('#peek-page')?.textContent === 'page 2'`)

	// Receive one at a time and settle each: delete, give back, dead-letter, send elsewhere.
	tagState := func(q string) map[string]any {
		return admin.call("GET", "/v1/queues/"+q+"/tags/default", nil)["tag"].(map[string]any)["state"].(map[string]any)
	}
	settle := func(action, done string, fill ...string) {
		t.Helper()
		b.do(chromedp.Click(chromedp.CSS("#receive-button")))
		b.until("a received message", `document.querySelectorAll('#received .msg').length === 1`)
		if len(fill) == 2 {
			b.do(setValue("#received "+fill[0], fill[1]))
		}
		b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#received [data-action=%q]`, action))))
		b.until(action, fmt.Sprintf(`document.querySelector('#received [data-done]')?.textContent === %q`, done))
		require.NotContains(t, b.eval(seenText("#received .msg")), "null", "nothing unset shows as text")
	}
	settle("delete", "Deleted.")
	require.Equal(t, "1", tagState("beta-orders")["deleted_total"])
	settle("return", "Given back: available to the tag again.")
	require.Equal(t, "0", tagState("beta-orders")["in_flight"])
	require.Equal(t, "12", tagState("beta-orders")["available"])
	b.shot("21-peek-received")
	b.axe("the peek page with a received message")
	settle("dead", "Dead-lettered to beta-dlq.", `input[id^="dead-reason-"]`, "BAD_TOTAL")
	dl := admin.call("POST", "/v1/queues/beta-dlq/messages:peek", map[string]any{"max_messages": 10})["messages"].([]any)
	require.Len(t, dl, 1)
	require.Equal(t, "BAD_TOTAL", dl[0].(map[string]any)["dead_letter"].(map[string]any)["reason"])
	settle("move", "Sent to alpha-orders and deleted here.", `input[id^="move-to-"]`, "alpha-orders")
	require.Equal(t, "2", tagState("beta-orders")["deleted_total"])
	require.Equal(t, "6", tagState("alpha-orders")["available"])
	// A refused copy: the error, once, and the message stays received.
	b.do(chromedp.Click(chromedp.CSS("#receive-button")))
	b.until("a received message", `document.querySelectorAll('#received .msg').length === 1`)
	b.do(setValue(`#received input[id^="move-to-"]`, "no-such-queue"), chromedp.Click(chromedp.CSS(`#received [data-action="move"]`)))
	b.until("the refusal", visible("#received .error"))
	require.Equal(t, 1, strings.Count(b.eval(seenText("#received .error")), "QUEUE_NOT_FOUND"))
	require.Equal(t, "1", tagState("beta-orders")["in_flight"])
	b.takeConsoleErrors() // the refused send's 404
}
