// Package console is tagqd's web console: hand-written HTML, CSS and ES
// modules embedded in the binary (no build step, no CDN), served at /ui/.
//
// The console holds no authority of its own: its pages call the same REST
// API as any client, with the API key the user signs in with (kept in the
// browser's sessionStorage and sent as Authorization: Bearer), through the
// same interceptors, authentication and permissions. The assets themselves
// are public: they contain no data.
//
// Every response carries a strict Content-Security-Policy (scripts and
// styles from the console's own origin only, no inline script or style
// element, no framing, fetches to the same origin only).
package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/tagq/tagq/access"
)

//go:embed assets
var assets embed.FS

// Prefix is where the console is mounted.
const Prefix = "/ui/"

// CSP is the Content-Security-Policy of every console response: scripts,
// styles, images and fetches from tagqd only; no inline script or style
// (the modules build the DOM, style.css styles it); no plugins, framing,
// <base> or form submissions (forms are handled by script).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Options tell the console about the tagqd serving it.
type Options struct {
	// Authentication is on (tagqd --auth): every API call needs
	// credentials. Default false: the console asks for no key.
	Authentication bool
}

// Handler serves the console under Prefix: the embedded assets,
// levels.json (what each permission level allows, from package access, so
// the browser offers only the actions a principal's level allows) and
// session.json (whether authentication is on, and whether this request
// came with a verified client certificate), so the console knows whether
// to ask for a key without a probe that fails (a 400 or 401 the browser
// logs as an error on every page load).
func Handler(opts Options) http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	levels := levelsJSON()
	// Assets change only with the binary: their modification time (for
	// If-Modified-Since) is when it started; embed.FS keeps none.
	started := time.Now()
	return http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		// Revalidate every time: a new tagqd may bring new assets.
		h.Set("Cache-Control", "no-cache")
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		var b []byte
		switch {
		case name == "levels.json":
			b = levels
		case name == "session.json":
			b = sessionJSON(opts, r)
		case name == "" || name == "index.html":
			name = "index.html"
			b, _ = fs.ReadFile(sub, name)
		case strings.HasSuffix(r.URL.Path, "/") || !fs.ValidPath(name):
			// No directory listings.
		default:
			if st, err := fs.Stat(sub, name); err == nil && !st.IsDir() {
				b, _ = fs.ReadFile(sub, name)
			}
		}
		if b == nil {
			http.NotFound(w, r)
			return
		}
		// The type from the name's extension (.js: text/javascript).
		http.ServeContent(w, r, name, started, bytes.NewReader(b))
	}))
}

// sessionJSON: {"authentication": bool, "client_certificate": bool}. A
// client certificate may map to a principal, so the console then asks
// who it is instead of asking for a key.
func sessionJSON(opts Options, r *http.Request) []byte {
	cert := r.TLS != nil && len(r.TLS.VerifiedChains) > 0
	b, err := json.Marshal(map[string]bool{"authentication": opts.Authentication, "client_certificate": cert})
	if err != nil {
		panic(err)
	}
	return b
}

// levelsJSON maps every permission level (as the REST API names it,
// PERMISSION_…) to the actions it allows.
func levelsJSON() []byte {
	acts := map[string]access.Action{
		"send": access.ActSend, "receive": access.ActReceive, "handle": access.ActHandle, "info": access.ActInfo,
		"peek": access.ActPeek, "admin": access.ActAdmin, "grant": access.ActGrant,
	}
	out := map[string][]string{}
	for _, l := range access.Levels {
		allowed := []string{}
		for name, act := range acts {
			if l.Allows(act) {
				allowed = append(allowed, name)
			}
		}
		sort.Strings(allowed)
		out["PERMISSION_"+string(l)] = allowed
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	return b
}
