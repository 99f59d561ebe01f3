package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// tagqd --version prints one line and exits 0 without starting anything.
func TestVersionFlag(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tagqd")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X github.com/tagq/tagq/internal/version.Version=v9.9.9", ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command(bin, "--version").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Regexp(t, `^tagqd v9\.9\.9 \(revision \S+, go[0-9.]+\S*\)\n$`, string(out))
}
