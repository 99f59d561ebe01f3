package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/console"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestConsole_Routes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		base func(t *testing.T) string
	}{
		{"auth off", func(t *testing.T) string { return setup(t).rest.URL }},
		{"auth on", func(t *testing.T) string { return setupAuth(t).rest.URL }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := tc.base(t)
			// / and /ui go to the console.
			for path, code := range map[string]int{"/": http.StatusFound, "/ui": http.StatusMovedPermanently} {
				resp, err := noRedirect.Get(base + path)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, code, resp.StatusCode, path)
				require.Equal(t, "/ui/", resp.Header.Get("Location"), path)
			}
			// The assets are public (they hold no data), with the console's CSP.
			for _, path := range []string{"/ui/", "/ui/app.js", "/ui/levels.json"} {
				resp, err := http.Get(base + path)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode, path)
				require.Equal(t, console.CSP, resp.Header.Get("Content-Security-Policy"), path)
			}
			// Other methods, and paths that are not the console's, are still the API's.
			resp, err := http.Post(base+"/ui/", "application/json", strings.NewReader("{}"))
			require.NoError(t, err)
			resp.Body.Close()
			require.NotEqual(t, http.StatusOK, resp.StatusCode)
			resp, err = http.Get(base + "/uix")
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusNotFound, resp.StatusCode)
		})
	}
}

// The console changes nothing about the API: its calls still need
// credentials, and a page cannot post a form to it (CSRF).
func TestConsole_APIStaysGuarded(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	code, body := b.doWith(t, "GET", "/v1/queues", "", nil)
	require.Equal(t, http.StatusUnauthorized, code, body)
	require.Contains(t, body, ReasonUnauthenticated)
	code, body = b.doWith(t, "POST", "/v1/queues", "text/plain", strings.NewReader(`{"name": "q"}`))
	require.Equal(t, http.StatusUnsupportedMediaType, code, body)
	code, body = b.doWith(t, "POST", "/v1/queues", "application/x-www-form-urlencoded", strings.NewReader(`name=q`))
	require.Equal(t, http.StatusUnsupportedMediaType, code, body)
	// The API's answers do not carry the console's CSP (it is the console's).
	resp, err := http.Get(b.rest.URL + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, resp.Header.Get("Content-Security-Policy"))
}
