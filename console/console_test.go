package console

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

func get(t *testing.T, h http.Handler, target string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	return string(b)
}

func TestHandler_ServesAssetsWithCSP(t *testing.T) {
	t.Parallel()
	h := Handler(Options{})
	for _, tc := range []struct{ path, ctype, contains string }{
		{"/ui/", "text/html; charset=utf-8", `<script type="module" src="app.js"></script>`},
		{"/ui/index.html", "text/html; charset=utf-8", `<main id="main"`},
		{"/ui/app.js", "text/javascript; charset=utf-8", "import "},
		{"/ui/style.css", "text/css; charset=utf-8", `:root[data-theme="dark"]`},
		{"/ui/icon.svg", "image/svg+xml", "<svg"},
		{"/ui/levels.json", "application/json", "PERMISSION_FULL_CONTROL"},
	} {
		r := get(t, h, tc.path)
		require.Equal(t, http.StatusOK, r.StatusCode, tc.path)
		require.Equal(t, tc.ctype, r.Header.Get("Content-Type"), tc.path)
		require.Contains(t, body(t, r), tc.contains, tc.path)
		require.Equal(t, CSP, r.Header.Get("Content-Security-Policy"), tc.path)
		require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"), tc.path)
		require.Equal(t, "no-referrer", r.Header.Get("Referrer-Policy"), tc.path)
		require.Equal(t, "DENY", r.Header.Get("X-Frame-Options"), tc.path)
		require.Equal(t, "no-cache", r.Header.Get("Cache-Control"), tc.path)
	}
	// The policy itself: no inline or evaluated script, nothing from elsewhere.
	require.Contains(t, CSP, "script-src 'self';")
	require.Contains(t, CSP, "default-src 'none'")
	require.Contains(t, CSP, "frame-ancestors 'none'")
	require.NotContains(t, CSP, "unsafe")
}

func TestHandler_NotFoundAndNoListing(t *testing.T) {
	t.Parallel()
	h := Handler(Options{})
	for _, p := range []string{"/ui/nope.js", "/ui/assets/", "/ui/assets/app.js", "/ui/../go.mod", "/ui/%2e%2e/console.go", "/ui/console.go"} {
		r := get(t, h, p)
		require.Contains(t, []int{http.StatusNotFound, http.StatusMovedPermanently}, r.StatusCode, p)
		require.NotContains(t, body(t, r), "package console", p)
		require.Equal(t, CSP, r.Header.Get("Content-Security-Policy"), p)
	}
}

func TestHandler_Revalidates(t *testing.T) {
	t.Parallel()
	h := Handler(Options{})
	r := get(t, h, "/ui/app.js")
	lm := r.Header.Get("Last-Modified")
	require.NotEmpty(t, lm)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/ui/app.js", nil)
	req.Header.Set("If-Modified-Since", lm)
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNotModified, rec.Code)
}

// session.json says whether to ask for a key, so the console needs no
// probe that fails.
func TestSession(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		var got map[string]bool
		require.NoError(t, json.Unmarshal([]byte(body(t, get(t, Handler(Options{Authentication: on}), "/ui/session.json"))), &got))
		require.Equal(t, map[string]bool{"authentication": on, "client_certificate": false}, got)
	}
}

// levels.json says what each level allows, as README's permission table does.
func TestLevels(t *testing.T) {
	t.Parallel()
	var levels map[string][]string
	require.NoError(t, json.Unmarshal([]byte(body(t, get(t, Handler(Options{}), "/ui/levels.json"))), &levels))
	require.Len(t, levels, 12)
	for level, want := range map[string][]string{
		"PERMISSION_NONE":           {},
		"PERMISSION_SEND":           {"send"},
		"PERMISSION_RECEIVE":        {"receive"},
		"PERMISSION_HANDLE":         {"handle", "receive"},
		"PERMISSION_GET_QUEUE_INFO": {"info"},
		"PERMISSION_USE_QUEUE":      {"handle", "info", "receive", "send"},
		"PERMISSION_ADMIN_QUEUE":    {"admin", "handle", "info", "peek", "receive", "send"},
		"PERMISSION_PEEK":           {"peek"},
		"PERMISSION_FULL_CONTROL":   {"admin", "grant", "handle", "info", "peek", "receive", "send"},
	} {
		require.Equal(t, want, levels[level], level)
	}
}

// The assets keep to what the CSP allows, and build the page without
// HTML from strings: no inline script, handler attribute, style element or
// attribute; no innerHTML, document.write or eval in the modules; every
// module a module imports is embedded.
func TestAssets_KeepToTheCSP(t *testing.T) {
	t.Parallel()
	sub, err := fs.Sub(assets, "assets")
	require.NoError(t, err)
	var htmls, modules int
	importRe := regexp.MustCompile(`(?m)^import [^;]*? from '([^']+)';|import\('([^']+)'\)`)
	require.NoError(t, fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		switch path.Ext(p) {
		case ".html":
			htmls++
			checkHTML(t, p, string(b))
		case ".js":
			modules++
			src := string(b)
			for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout('", "setInterval('"} {
				require.NotContains(t, src, bad, p)
			}
			for _, m := range importRe.FindAllStringSubmatch(src, -1) {
				target := m[1] + m[2]
				require.True(t, strings.HasPrefix(target, "./"), "%s imports %s: only the console's own modules", p, target)
				_, err := fs.Stat(sub, path.Join(path.Dir(p), target))
				require.NoError(t, err, "%s imports %s", p, target)
			}
		}
		return nil
	}))
	require.Equal(t, 1, htmls)
	require.GreaterOrEqual(t, modules, 5)
}

func checkHTML(t *testing.T, name, src string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(src))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			require.ErrorIs(t, z.Err(), io.EOF, name)
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		require.NotEqual(t, "style", tok.Data, "%s: a <style> element (CSP style-src 'self')", name)
		hasSrc := false
		for _, a := range tok.Attr {
			require.False(t, strings.HasPrefix(a.Key, "on"), "%s: <%s %s> (inline handler)", name, tok.Data, a.Key)
			require.NotEqual(t, "style", a.Key, "%s: <%s style> (inline style)", name, tok.Data)
			if (a.Key == "src" || a.Key == "href") && (strings.Contains(a.Val, "//") || strings.HasPrefix(a.Val, "javascript:")) {
				t.Fatalf("%s: <%s %s=%q>: only the console's own files", name, tok.Data, a.Key, a.Val)
			}
			hasSrc = hasSrc || a.Key == "src"
		}
		if tok.Data == "script" {
			require.True(t, hasSrc, "%s: an inline <script>", name)
		}
	}
}
