package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/tagqdtest"
)

// The CLI against a tagqd with --auth: --api-key / TAGQ_API_KEY on every
// command, and `tagq access` to manage principals, keys and permissions.
func TestCLI_Access(t *testing.T) {
	const adminKey = "the CLI test's bootstrap admin key, 32+ chars"
	keyFile := filepath.Join(t.TempDir(), "admin.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(adminKey), 0o600))
	d, err := tagqdtest.Start(tagqdtest.Binary, "--auth", "--admin-key-file", keyFile)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = d.Stop() })
	okAt := func(args ...string) string {
		t.Helper()
		out, errs, code := runAt(d.GRPC, args...)
		require.Equal(t, 0, code, "tagq %v: %s", args, errs)
		return out
	}

	_, errs, code := runAt(d.GRPC, "queue", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "UNAUTHENTICATED")
	require.Contains(t, errs, "--api-key")

	okAt("--api-key", adminKey, "queue", "create", "cli-auth")
	okAt("--api-key", adminKey, "access", "principals", "create", "cli-app", "--max-queues", "2")
	require.Regexp(t, `cli-app\s+user\s+2\s+0`, okAt("--api-key", adminKey, "access", "principals", "list"))
	key := strings.TrimSpace(okAt("--api-key", adminKey, "access", "keys", "issue", "cli-app"))
	require.Regexp(t, `^tagq_[0-9a-f]{16}_\S{43}$`, key)
	okAt("--api-key", adminKey, "access", "permissions", "set", "cli-app", "cli-*", "send-handle", "--tag", "default")
	require.Regexp(t, `cli-app\s+cli-\*\s+SEND_HANDLE\s+default`, okAt("--api-key", adminKey, "access", "permissions", "list"))

	// The key from the environment.
	t.Setenv("TAGQ_API_KEY", key)
	okAt("send", "cli-auth", "hello")
	out := okAt("access", "permissions", "get", "cli-auth")
	require.Regexp(t, `permission\s+SEND_HANDLE`, out)
	require.Regexp(t, `from\s+cli-\*`, out)
	_, errs, code = runAt(d.GRPC, "queue", "get", "cli-auth")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "GET_QUEUE_INFO")
	require.Contains(t, errs, "tagq access permissions get")
	_, errs, code = runAt(d.GRPC, "access", "permissions", "set", "cli-app", "cli-auth", "WRITE")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "FULL_CONTROL", "the levels are listed")

	// Rotation: a new key, then the old one revoked.
	fresh := strings.TrimSpace(okAt("access", "keys", "issue", "cli-app"))
	id := regexp.MustCompile(`^tagq_([0-9a-f]{16})_`).FindStringSubmatch(key)[1]
	require.Contains(t, okAt("access", "keys", "list", "cli-app"), id)
	okAt("--api-key", fresh, "access", "keys", "revoke", "cli-app", id)
	_, errs, code = runAt(d.GRPC, "send", "cli-auth", "again")
	require.Equal(t, 1, code, "the revoked key from TAGQ_API_KEY")
	require.Contains(t, errs, "UNAUTHENTICATED")
	okAt("--api-key", fresh, "send", "cli-auth", "again")

	okAt("--api-key", adminKey, "access", "principals", "delete", "cli-app")
	_, _, code = runAt(d.GRPC, "--api-key", fresh, "send", "cli-auth", "gone")
	require.Equal(t, 1, code)
}
