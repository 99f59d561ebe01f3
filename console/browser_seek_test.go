package console_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// signIn opens the console in a new tab and signs in with key.
func signIn(t *testing.T, e env, key string) *tab {
	t.Helper()
	b := newTab(t, e.browser, e.base, e.shots)
	b.do(chromedp.Navigate(e.base + "/ui/"))
	b.until("the sign-in form", `!!document.querySelector('#apikey')`)
	b.do(chromedp.SendKeys(chromedp.CSS("#apikey"), key), submit("#signin-form"))
	b.until("signed in", `(document.querySelector('#who')?.textContent ?? '').startsWith('signed in')`)
	return b
}

// The tag page's seek (S22) as a user sees it: the panel, what it says a
// seek does, the confirmation, the counters after; a message id not
// retained shows its reason once; skipping the backlog needs the tag's
// name typed; the panel is offered only to who may seek that tag (HANDLE,
// for that tag where receiving is limited to tags) among those who may
// see the tag's page (GET_QUEUE_INFO).
func TestBrowser_SeekTag(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "admin.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(adminKey+"\n"), 0o600))
	e := start(t, "--auth", "--admin-key-file", keyFile)
	admin := e.admin
	admin.call("POST", "/v1/queues", map[string]any{"name": "ledger", "retain_acked_messages": true})
	admin.call("POST", "/v1/queues/ledger/tags", map[string]any{"name": "audit"})
	sent := admin.call("POST", "/v1/queues/ledger/messages:batchSend", map[string]any{"entries": []map[string]any{
		{"id": "1", "body": "b25l"}, {"id": "2", "body": "dHdv"}, {"id": "3", "body": "dGhyZWU="},
	}})
	var ids []string
	for _, s := range sent["successful"].([]any) {
		ids = append(ids, s.(map[string]any)["message_id"].(string))
	}
	got := admin.call("POST", "/v1/queues/ledger/messages:receive", map[string]any{"max_messages": 3})
	for _, m := range got["messages"].([]any) {
		admin.call("POST", "/v1/messages:delete", map[string]any{"receipt_handle": m.(map[string]any)["receipt_handle"]})
	}

	b := signIn(t, e, adminKey)
	counter := func(k string) string { return seenText(fmt.Sprintf(`[data-counter=%q] .v`, k)) }
	b.open("#/queue/ledger/tag/default")
	b.until("the tag's counters", counter("deleted_total")+` === '3' && `+counter("available")+` === '0'`)
	require.True(t, b.shown("#seek summary"), "the seek panel is offered")
	require.False(t, b.shown("#seek-form"), "closed until opened")
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#seek').open = true`))
	b.until("the seek form", visible("#seek-form")+` && `+visible("#seek-note"))
	note := b.eval(seenText("#seek-note"))
	require.Contains(t, note, "available again to default alone")
	require.Contains(t, note, "in flight is dropped")
	require.Contains(t, note, "Other tags do not move")
	require.Equal(t, "true", b.eval(`String(document.querySelector('#seek-note').getBoundingClientRect().width >= 0.9 * document.querySelector('#seek-form').getBoundingClientRect().width)`),
		"the note spans the form, not one grid column")
	require.Equal(t, "true", b.eval(`String(document.querySelector('#k-at').disabled && document.querySelector('#k-id').disabled)`),
		"time and id wait for their choice")
	b.shot("seek-01-form")
	b.axe("the tag page with the seek form open")

	// Replay everything: confirmed without typing; the counters follow.
	b.do(clickNow("#seek-button"))
	b.until("the confirmation", `document.querySelector('#confirm').open`)
	require.Contains(t, b.eval(seenText("#confirm")), "Seek default to the oldest retained message?")
	require.False(t, b.shown("#confirm-type"), "a replay needs no typing")
	b.do(chromedp.Click(chromedp.CSS("#confirm-ok")))
	b.until("3 available again", counter("available")+` === '3'`)
	require.Equal(t, "3", b.eval(counter("deleted_total")), "totals stay")
	require.Contains(t, b.eval(seenText("#toast")), "default: 3 available after the seek")
	audit := admin.call("GET", "/v1/queues/ledger/tags/audit", nil)["tag"].(map[string]any)["state"].(map[string]any)
	require.Equal(t, "3", audit["available"], "audit never moved")
	require.Equal(t, "0", audit["received_total"])
	b.shot("seek-02-replayed")

	// To a message id: the second and the third.
	b.do(setValue("#k-to", "id"))
	require.Equal(t, "false", b.eval(`String(document.querySelector('#k-id').disabled)`))
	b.do(setValue("#k-id", ids[1]), clickNow("#seek-button"))
	b.until("the confirmation", `document.querySelector('#confirm').open`)
	require.Contains(t, b.eval(seenText("#confirm")), "message "+ids[1])
	b.do(chromedp.Click(chromedp.CSS("#confirm-ok")))
	b.until("2 available", counter("available")+` === '2'`)

	// An id the queue does not hold: its reason, once, in the form.
	b.do(setValue("#k-id", "1-1"), clickNow("#seek-button"))
	b.until("the confirmation", `document.querySelector('#confirm').open`)
	b.do(chromedp.Click(chromedp.CSS("#confirm-ok")))
	b.until("the refusal", visible("#seek-form .error"))
	refusal := b.eval(seenText("#seek-form .error"))
	require.Equal(t, 1, strings.Count(refusal, "MESSAGE_NOT_FOUND"), "the reason once: %q", refusal)
	require.Contains(t, refusal, "seek to a time instead")
	require.Len(t, b.takeConsoleErrors(), 1, "the refused seek's 404")
	b.shot("seek-03-refused")
	b.axe("the tag page with a refused seek")

	// Skipping the backlog drops messages from the tag: type its name.
	b.do(setValue("#k-to", "now"), clickNow("#seek-button"))
	b.until("the confirmation", `document.querySelector('#confirm').open`)
	require.True(t, b.shown("#confirm-type"), "skipping asks for the tag's name")
	require.Contains(t, b.eval(seenText("#confirm")), "Type default to confirm")
	require.Equal(t, "true", b.eval(`String(document.querySelector('#confirm-ok').disabled)`))
	b.do(chromedp.SendKeys(chromedp.CSS("#confirm-type"), "default"), chromedp.Click(chromedp.CSS("#confirm-ok")))
	b.until("nothing available", counter("available")+` === '0' && !document.querySelector('#seek-form .error')`)
	b.noConsoleErrors("seeking")

	// Who may not seek this tag is not offered it.
	admin.call("POST", "/v1/principals", map[string]any{"name": "reader"})
	key := admin.call("POST", "/v1/principals/reader/keys", map[string]any{})["api_key"].(string)
	for _, c := range []struct {
		grant map[string]any
		offer bool
	}{
		{map[string]any{"permission": "PERMISSION_USE_QUEUE"}, true},
		{map[string]any{"permission": "PERMISSION_RECEIVE"}, false},
		{map[string]any{"permission": "PERMISSION_GET_QUEUE_INFO"}, false},
		{map[string]any{"permission": "PERMISSION_USE_QUEUE", "tags": []string{"audit"}}, false},
		{map[string]any{"permission": "PERMISSION_USE_QUEUE", "tags": []string{"default"}}, true},
	} {
		grant := map[string]any{"principal": "reader", "queue": "ledger"}
		for k, v := range c.grant {
			grant[k] = v
		}
		admin.call("POST", "/v1/permissions", grant)
		r := signIn(t, e, key)
		r.open("#/queue/ledger/tag/default")
		r.until("the tag page", `!!document.querySelector('#tag-info') || !!document.querySelector('main .error')`)
		require.Equal(t, c.offer, r.shown("#seek summary"), "%v", c.grant)
		if c.grant["permission"] == "PERMISSION_RECEIVE" {
			require.Len(t, r.takeConsoleErrors(), 1, "RECEIVE alone may not read the tag: the page shows the 403")
		}
		r.noConsoleErrors(fmt.Sprintf("on the tag page with %v", c.grant))
	}
}
