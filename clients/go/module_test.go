package tagq_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// scratchMain is a user's program: it builds against the client alone,
// with the package overview's example (doc.go) as the function overview.
const scratchMain = `package main

import (
	"context"
	"fmt"
	"os"
	"time"

	tagq "github.com/tagq/tagq/clients/go"
)

func overview(ctx context.Context) error {
%s
	return nil
}

func main() {
	c, err := tagq.Dial(os.Args[1])
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_, err = c.GetQueue(context.Background(), "scratch-no-such-queue")
	fmt.Println(tagq.ReasonOf(err))
}
`

// A user's module that imports the client (as a user of a released
// version would, with this checkout's modules standing in for the
// released ones) builds with the client's go line, and its module graph
// holds none of the server's dependencies. The program it builds talks to
// a live tagqd.
func TestModule_UserInheritsOnlyTheClientsDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	here, err := filepath.Abs(".")
	require.NoError(t, err)
	root := filepath.Join(here, "..", "..")
	goLine := func(dir string) string {
		var mod struct{ Go string }
		require.NoError(t, json.Unmarshal(goCmd(t, dir, "mod", "edit", "-json"), &mod))
		return mod.Go
	}
	clientGo := goLine(here)

	dir := t.TempDir()
	main := fmt.Sprintf(scratchMain, overviewExample(t))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644))
	goCmd(t, dir, "mod", "init", "example.com/scratch")
	goCmd(t, dir, "mod", "edit", "-go="+clientGo,
		"-replace=github.com/tagq/tagq/clients/go="+here,
		"-replace=github.com/tagq/tagq/gen/tagq="+filepath.Join(root, "gen", "tagq"),
		"-replace=github.com/tagq/tagq/internal/tagqdtest="+filepath.Join(root, "internal", "tagqdtest"))
	bin := filepath.Join(dir, "scratch")
	goCmd(t, dir, "build", "-o", bin, ".")
	// -mod=mod would have raised the go line if a dependency needed more.
	require.Equal(t, clientGo, goLine(dir), "the user's go line after adding the client")

	mods := strings.Fields(string(goCmd(t, dir, "list", "-m", "-f", "{{.Path}}", "all")))
	require.Contains(t, mods, "github.com/tagq/tagq/clients/go")
	require.Contains(t, mods, "google.golang.org/grpc")
	for _, m := range mods {
		for _, banned := range []string{"github.com/grpc-ecosystem/grpc-gateway", "github.com/redis/go-redis",
			"github.com/alicebob/miniredis", "github.com/prometheus/"} {
			require.False(t, strings.HasPrefix(m, banned), "the user's module graph has %s:\n%s", m, strings.Join(mods, "\n"))
		}
		require.NotEqual(t, "github.com/tagq/tagq", m, "the user's module graph has the server's module")
	}

	out, err := exec.Command(bin, addr).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "QUEUE_NOT_FOUND\n", string(out))
}

// overviewExample is the code block under "# Client" in doc.go.
func overviewExample(t *testing.T) string {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(doc), "// # Client\n")
	require.True(t, ok, "doc.go has a # Client section")
	var code []string
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "//\t") {
			code = append(code, strings.TrimPrefix(line, "//"))
		} else if len(code) > 0 {
			break // the end of the first code block
		}
	}
	require.NotEmpty(t, code, "the # Client section starts with code")
	return strings.Join(code, "\n")
}

// goCmd runs the go command in dir, as -mod=mod (a scratch module's
// requirements are found, not written by hand) and outside any workspace.
func goCmd(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off")
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), stderr)
	return out
}
