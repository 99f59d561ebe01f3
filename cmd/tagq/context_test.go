package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/tagqdtest"
)

// runBare runs one command line with no --addr of the test's own.
func runBare(stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// withConfig points TAGQ_CONFIG at a fresh file in a new directory.
func withConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tagq", "config.json")
	t.Setenv("TAGQ_CONFIG", path)
	return path
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Mode().Perm()
}

const unreachable = "127.0.0.1:1" // refused at once

// Precedence of the address, end to end: flag > environment > context.
func TestCLI_ContextAddressPrecedence(t *testing.T) {
	path := withConfig(t)
	bare := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		out, errs, code := runBare("", args...)
		require.Equal(t, wantCode, code, "tagq %v: %s %s", args, out, errs)
		return out, errs
	}
	bare(0, "context", "set", "good", "--addr", addr)
	require.Equal(t, os.FileMode(0o600), mode(t, path))
	require.Equal(t, os.FileMode(0o700), mode(t, filepath.Dir(path)))
	bare(0, "context", "set", "bad", "--addr", unreachable)

	bare(0, "context", "use", "good")
	bare(0, "queue", "list") // the address from the current context

	_, errs := bare(1, "--context", "bad", "queue", "list") // --context picks another
	require.Contains(t, errs, "cannot reach tagqd at "+unreachable+" (context bad)")
	t.Setenv("TAGQ_CONTEXT", "bad")
	_, errs = bare(1, "queue", "list")
	require.Contains(t, errs, unreachable+" (context bad)")
	bare(0, "--context", "good", "queue", "list") // the flag beats TAGQ_CONTEXT
	t.Setenv("TAGQ_CONTEXT", "")

	t.Setenv("TAGQ_ADDR", unreachable) // the variable beats the context
	_, errs = bare(1, "queue", "list")
	require.Contains(t, errs, "cannot reach tagqd at "+unreachable+" (context good)")
	bare(0, "--addr", addr, "queue", "list") // the flag beats the variable
	t.Setenv("TAGQ_ADDR", "")

	_, errs = bare(2, "--context", "nope", "queue", "list")
	require.Contains(t, errs, `no context "nope"`)

	// Deleting the current context: back to no context.
	bare(0, "context", "delete", "good")
	out, _ := bare(0, "context", "list")
	require.NotContains(t, out, "good")
	require.NotContains(t, out, "*", "no current context")
}

// Precedence of every setting, one level at a time (no server needed).
func TestCLI_ContextPrecedenceOfEachSetting(t *testing.T) {
	path := withConfig(t)
	cfg := &config{CurrentContext: "ctx", Contexts: map[string]*settings{
		"ctx":   {Addr: "ctx:1", CA: "/ctx/ca", Cert: "/ctx/cert", Key: "/ctx/key", TLS: true, APIKey: "ctx-key"},
		"other": {Addr: "other:1"},
	}}
	require.NoError(t, cfg.save(path))
	resolved := func(args ...string) *cli {
		t.Helper()
		c := newCLI(strings.NewReader(""), io.Discard, io.Discard)
		root := c.commands()
		require.NoError(t, root.ParseFlags(args))
		require.NoError(t, c.resolve(root.Flags()))
		return c
	}
	got := func(c *cli) settings {
		return settings{Addr: c.addr, CA: c.ca, Cert: c.cert, Key: c.key, TLS: c.tls, APIKey: c.apiKey}
	}
	require.Equal(t, *cfg.Contexts["ctx"], got(resolved()), "the current context")
	require.Equal(t, settings{Addr: "other:1"}, got(resolved("--context", "other")), "another context: nothing of the current")

	env := map[string]string{"TAGQ_ADDR": "env:1", "TAGQ_CA": "/env/ca", "TAGQ_CERT": "/env/cert", "TAGQ_KEY": "/env/key",
		"TAGQ_TLS": "false", "TAGQ_API_KEY": "env-key"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	require.Equal(t, settings{Addr: "env:1", CA: "/env/ca", Cert: "/env/cert", Key: "/env/key", TLS: false, APIKey: "env-key"},
		got(resolved()), "environment beats context")
	require.Equal(t, settings{Addr: "flag:1", CA: "/flag/ca", Cert: "/flag/cert", Key: "/flag/key", TLS: true, APIKey: "flag-key"},
		got(resolved("--addr", "flag:1", "--ca", "/flag/ca", "--cert", "/flag/cert", "--key", "/flag/key", "--tls",
			"--api-key", "flag-key")), "flags beat environment")
	for k := range env {
		t.Setenv(k, "")
	}
	require.NoError(t, os.Remove(path))
	require.Equal(t, settings{Addr: defaultAddr}, got(resolved()), "no context: the defaults")
}

// A context carries TLS files and an API key to a tagqd with TLS and --auth.
func TestCLI_ContextWithTLSAndAPIKey(t *testing.T) {
	path := withConfig(t)
	certs, err := tagqdtest.NewCerts(t.TempDir())
	require.NoError(t, err)
	const adminKey = "the CLI context test's admin key, 32+ chars"
	keyFile := filepath.Join(t.TempDir(), "admin.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(adminKey), 0o600))
	d, err := tagqdtest.Start(tagqdtest.Binary, append(certs.TLSArgs(true), "--auth", "--admin-key-file", keyFile)...)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = d.Stop() })

	// Relative paths are saved absolute: the context works from anywhere.
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(filepath.Dir(certs.CA.File)))
	t.Cleanup(func() { _ = os.Chdir(wd) })
	out, errs, code := runBare(adminKey+"\n", "context", "set", "secure", "--addr", d.GRPC, "--ca", filepath.Base(certs.CA.File),
		"--cert", filepath.Base(certs.Client.CertFile), "--key", filepath.Base(certs.Client.KeyFile), "--api-key-stdin")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "saved context secure")
	require.NoError(t, os.Chdir(wd))

	out, errs, code = runBare("", "--context", "secure", "queue", "create", "cli-ctx")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "cli-ctx")

	// The key from the environment beats the context's.
	t.Setenv("TAGQ_API_KEY", "tagq_0000000000000000_not-a-key-at-all-not-a-key-at-all-not-a")
	_, errs, code = runBare("", "--context", "secure", "queue", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "UNAUTHENTICATED")
	t.Setenv("TAGQ_API_KEY", "")

	var saved config
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &saved))
	require.Equal(t, certs.CA.File, saved.Contexts["secure"].CA, "absolute")
	require.Equal(t, adminKey, saved.Contexts["secure"].APIKey)
}

func TestCLI_ContextListMasksKeysAndTheFileStaysPrivate(t *testing.T) {
	path := withConfig(t)
	const key = "tagq_0123456789abcdef_THE-SECRET-PART-OF-THE-KEY-0123456789abcd"
	_, errs, code := runBare("", "context", "set", "prod", "--addr", "prod:9090", "--api-key", key, "--tls")
	require.Equal(t, 0, code, errs)
	_, errs, code = runBare("", "context", "set", "dev", "--addr", "dev:9090", "--api-key", "an-opaque-key")
	require.Equal(t, 0, code, errs)
	_, errs, code = runBare("", "context", "use", "prod")
	require.Equal(t, 0, code, errs)

	out, errs, code := runBare("", "context", "list")
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `\*\s+prod\s+prod:9090\s+system CAs\s+tagq_0123456789abcdef_\*\*\*\*\n`, out)
	require.Regexp(t, `\n\s+dev\s+dev:9090\s+-\s+\*\*\*\*\n`, out)
	out, errs, code = runBare("", "context", "list", "-o", "json")
	require.Equal(t, 0, code, errs)
	for _, secret := range []string{"THE-SECRET", "opaque"} {
		require.NotContains(t, out, secret)
	}
	require.Len(t, jsonLines(t, out), 2)

	// Changing one setting keeps the others.
	_, errs, code = runBare("", "context", "set", "prod", "--addr", "prod2:9090")
	require.Equal(t, 0, code, errs)
	out, _, _ = runBare("", "context", "list")
	require.Regexp(t, `prod\s+prod2:9090\s+system CAs\s+tagq_0123456789abcdef_\*\*\*\*`, out)

	// A file others may read gets a warning, and the next write makes it 0600 again.
	require.NoError(t, os.Chmod(path, 0o644))
	_, errs, code = runBare("", "context", "use", "dev")
	require.Equal(t, 0, code)
	require.Contains(t, errs, "others may read it")
	require.Equal(t, os.FileMode(0o600), mode(t, path))

	// --cert without --key is refused before anything is written.
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	_, _, code = runBare("", "context", "set", "dev", "--cert", "/x.pem")
	require.Equal(t, 2, code)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

// The config file's place: TAGQ_CONFIG, else XDG_CONFIG_HOME, else HOME.
func TestCLI_ConfigPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("TAGQ_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	_, errs, code := runBare("", "context", "set", "h", "--addr", "h:1")
	require.Equal(t, 0, code, errs)
	require.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(home, ".config", "tagq", "config.json")))

	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	_, errs, code = runBare("", "context", "set", "x", "--addr", "x:1")
	require.Equal(t, 0, code, errs)
	require.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(xdg, "tagq", "config.json")))
	out, _, _ := runBare("", "context", "list")
	require.Contains(t, out, "x:1")
	require.NotContains(t, out, "h:1", "XDG_CONFIG_HOME's file, not HOME's")
}
