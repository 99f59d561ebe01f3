package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	require.Regexp(t, `^tagqd v9\.9\.9 \(revision [^,]+, go[0-9.]+\S*\)\n$`, string(out))

	// "tagqd version" prints the same and starts no server (it would not
	// exit); any other argument is refused, not ignored.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := exec.CommandContext(ctx, bin, "version").CombinedOutput()
	require.NoError(t, err, string(sub))
	require.Equal(t, string(out), string(sub))
	bad := exec.CommandContext(ctx, bin, "serve")
	msg, err := bad.CombinedOutput()
	require.Error(t, err)
	require.Equal(t, 2, bad.ProcessState.ExitCode())
	require.Contains(t, string(msg), `unexpected argument "serve"`)
}

// A source build from a git checkout names its commit, and tagqd and tagq
// print the same line. (A build without VCS information says so:
// internal/version's test.)
func TestVersion_SourceBuildNamesItsRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tagqd and tagq twice")
	}
	if raceEnabled || os.Getenv("TAGQ_TEST_REDIS_URL") != "" {
		// Two builds of a minute or more on 2 cores: once per CI run (the
		// plain go test ./...) is enough; it touches no Redis and no race.
		t.Skip("runs in the plain test pass only (no -race, no TAGQ_TEST_REDIS_URL)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("needs git")
	}
	// A checkout of this source tree as it is (committed or not): a
	// worktree's .git is a file, which Go's VCS stamping does not follow.
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	src := filepath.Join(t.TempDir(), "tagq")
	files, err := exec.Command("git", "-C", root, "ls-files", "-co", "--exclude-standard").Output()
	require.NoError(t, err)
	for _, f := range strings.Split(strings.TrimSpace(string(files)), "\n") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(src, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, f), b, 0o644))
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "source build")
	rev := git("rev-parse", "HEAD")

	bin := t.TempDir()
	build := func(name string) string {
		out := filepath.Join(bin, name)
		cmd := exec.Command("go", "build", "-buildvcs=true", "-o", out, "./cmd/"+name)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOFLAGS=") // CI sets -buildvcs=false there
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
		return out
	}
	version := func(bin string) string {
		out, err := exec.Command(bin, "--version").CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	d, c := version(build("tagqd")), version(build("tagq"))
	require.Regexp(t, `^tagqd \S+ \(revision `+rev+`, go[0-9.]+\S*\)\n$`, d)
	require.Equal(t, strings.TrimPrefix(d, "tagqd"), strings.TrimPrefix(c, "tagq"), "tagqd and tagq print the same")
}
