package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// What a user sees, not what the DOM holds: these helpers ask the browser
// whether an element is rendered (checkVisibility: no display:none on it or
// an ancestor, no visibility:hidden, no opacity 0) and has a box, and run
// axe-core over the page.

// visible is a JavaScript condition: the element a CSS selector finds is
// shown to the user.
func visible(sel string) string {
	return fmt.Sprintf(`(e => !!e && e.checkVisibility({opacityProperty: true, visibilityProperty: true}) &&
		e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().height > 0)(document.querySelector(%q))`, sel)
}

// shown answers whether the element a CSS selector finds is visible.
func (b *tab) shown(sel string) bool {
	b.t.Helper()
	return b.eval(`String(`+visible(sel)+`)`) == "true"
}

// seenText is the text of the element as rendered (innerText: what is
// visible of it, as a user reads it).
func seenText(sel string) string {
	return fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? '').trim()`, sel)
}

// takeConsoleErrors returns the errors the browser's console showed since
// the last call (a refused fetch shows there as "Failed to load resource").
func (b *tab) takeConsoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.errors
	b.errors = nil
	return out
}

// noConsoleErrors: nothing red in the browser's console since the last look.
func (b *tab) noConsoleErrors(when string) {
	b.t.Helper()
	require.Empty(b.t, b.takeConsoleErrors(), "errors in the browser's console %s", when)
}

// axePath is where `npm ci` in testdata/axe puts axe-core: a test
// dependency only, never one of the console's served assets.
const axePath = "testdata/axe/node_modules/axe-core/axe.min.js"

// axe runs axe-core's rules on the page as it is, in the light and the
// dark theme, and requires zero violations.
func (b *tab) axe(what string) {
	b.t.Helper()
	if b.axeSrc == "" {
		src, err := os.ReadFile(axePath)
		if err != nil {
			abs, _ := filepath.Abs(filepath.Dir(filepath.Dir(filepath.Dir(axePath))))
			b.t.Fatalf("axe-core is missing (%v): run (cd %s && npm ci)", err, abs)
		}
		b.axeSrc = string(src)
	}
	if b.eval(`typeof axe`) != "object" {
		b.do(chromedp.Evaluate[chromedp.Void](b.axeSrc))
	}
	theme := b.eval(`document.documentElement.dataset.theme`)
	defer b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.documentElement.dataset.theme = %q`, theme)))
	for _, th := range []string{"light", "dark"} {
		b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.documentElement.dataset.theme = %q`, th)))
		out := b.evalPromise(`new Promise(r => requestAnimationFrame(r)).then(() => axe.run(document, {resultTypes: ['violations']})).then(r =>
			JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
				nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' — ' + (n.failureSummary || '').replace(/\s+/g, ' '))}))))`)
		var violations []struct {
			ID, Impact, Help string
			Nodes            []string
		}
		require.NoError(b.t, json.Unmarshal([]byte(out), &violations))
		if len(violations) > 0 {
			b.shot("axe-" + strings.ReplaceAll(what, " ", "-") + "-" + th)
			var sb strings.Builder
			for _, v := range violations {
				fmt.Fprintf(&sb, "\n%s (%s): %s\n  %s", v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
			}
			b.t.Fatalf("axe-core: %d violations on %s, %s theme:%s", len(violations), what, th, sb.String())
		}
	}
}

// evalPromise evaluates a JavaScript expression whose value is a promise
// of a string.
func (b *tab) evalPromise(expr string) string {
	b.t.Helper()
	ctx, cancel := contextWithWait(b)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	require.NoError(b.t, err, expr)
	return s
}

func contextWithWait(b *tab) (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, waitFor)
}
