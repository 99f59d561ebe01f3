package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// End-to-end tests: a real tagqd binary, talked to over gRPC and REST.

var tagqdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tagqd-e2e")
	if err != nil {
		panic(err)
	}
	tagqdBin = filepath.Join(dir, "tagqd")
	if out, err := exec.Command("go", "build", "-o", tagqdBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building tagqd: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// daemon is a running tagqd.
type daemon struct {
	t      *testing.T
	cmd    *exec.Cmd
	grpc   string
	http   string
	conn   *grpc.ClientConn
	q      tagqv1.QueueServiceClient
	m      tagqv1.MessageServiceClient
	r      tagqv1.RedriveServiceClient
	stderr *bytes.Buffer
	exited chan error
}

// backend is where a test's tagqd keeps its data.
type backend struct {
	name   string
	args   []string // extra tagqd flags
	prefix string   // key prefix (shared Redis only)
}

// eachBackend runs fn on the embedded store; with TAGQ_TEST_REDIS_URL on
// that Redis, and with TAGQ_TEST_REDIS_CLUSTER on that Redis Cluster, each
// under a key prefix of the test's own (removed afterwards).
func eachBackend(t *testing.T, fn func(t *testing.T, be backend)) {
	t.Helper()
	bes := []backend{{name: "embedded"}}
	if url := os.Getenv("TAGQ_TEST_REDIS_URL"); url != "" {
		bes = append(bes, backend{name: "redis", args: []string{"--redis-url", url}})
	}
	if seeds := os.Getenv("TAGQ_TEST_REDIS_CLUSTER"); seeds != "" {
		bes = append(bes, backend{name: "cluster", args: []string{"--redis-cluster", seeds}})
	}
	for _, be := range bes {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			if be.name != "embedded" {
				var b [6]byte
				_, _ = rand.Read(b[:])
				be.prefix = "tagqe2e-" + hex.EncodeToString(b[:])
				be.args = append(append([]string{}, be.args...), "--key-prefix", be.prefix)
				t.Cleanup(func() { dropPrefix(t, be) })
			}
			fn(t, be)
		})
	}
}

// redisOf is a client to the Redis (or cluster) a backend's tagqd uses.
func redisOf(t *testing.T, be backend) redis.UniversalClient {
	t.Helper()
	var c redis.UniversalClient
	switch be.name {
	case "redis":
		opt, err := redis.ParseURL(os.Getenv("TAGQ_TEST_REDIS_URL"))
		require.NoError(t, err)
		c = redis.NewClient(opt)
	case "cluster":
		c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(os.Getenv("TAGQ_TEST_REDIS_CLUSTER"), ",")})
	default:
		t.Fatalf("backend %s has no shared Redis", be.name)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func dropPrefix(t *testing.T, be backend) {
	c := redisOf(t, be)
	ctx := context.Background()
	del := func(ctx context.Context, n *redis.Client) error {
		iter := n.Scan(ctx, 0, be.prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		return iter.Err()
	}
	switch cc := c.(type) {
	case *redis.ClusterClient:
		_ = cc.ForEachMaster(ctx, del)
	case *redis.Client:
		_ = del(ctx, cc)
	}
}

func start(t *testing.T, be backend, extra ...string) *daemon {
	t.Helper()
	args := append([]string{"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--log-level", "warn"}, be.args...)
	cmd := exec.Command(tagqdBin, append(args, extra...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	d := &daemon{t: t, cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = d.stderr
	require.NoError(t, cmd.Start())
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "TAGQ_READY ") {
				ready <- sc.Text()
			}
		}
	}()
	go func() { d.exited <- cmd.Wait() }()
	select {
	case line := <-ready:
		for _, f := range strings.Fields(line)[1:] {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "grpc":
				d.grpc = v
			case "http":
				d.http = v
			}
		}
	case err := <-d.exited:
		t.Fatalf("tagqd exited before it was ready: %v\n%s", err, d.stderr)
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("tagqd not ready in 30 s\n%s", d.stderr)
	}
	d.conn, err = grpc.NewClient(d.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	d.q = tagqv1.NewQueueServiceClient(d.conn)
	d.m = tagqv1.NewMessageServiceClient(d.conn)
	d.r = tagqv1.NewRedriveServiceClient(d.conn)
	t.Cleanup(func() {
		_ = d.conn.Close()
		if d.cmd.ProcessState == nil {
			_ = d.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-d.exited:
			case <-time.After(30 * time.Second):
				_ = d.cmd.Process.Kill()
			}
		}
		if t.Failed() {
			t.Logf("tagqd stderr:\n%s", d.stderr)
		}
	})
	return d
}

// stop sends SIGTERM and returns how long tagqd took to exit, and its error.
func (d *daemon) stop() (time.Duration, error) {
	start := time.Now()
	require.NoError(d.t, d.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-d.exited:
		return time.Since(start), err
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		d.t.Fatal("tagqd did not stop in 30 s")
		return 0, nil
	}
}

// rest sends a JSON request as curl would and decodes the JSON answer.
func (d *daemon) rest(method, path, body string) (int, map[string]any) {
	d.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://"+d.http+path, r)
	require.NoError(d.t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(d.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(d.t, err)
	var out map[string]any
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		require.NoError(d.t, json.Unmarshal(raw, &out), "body: %s", raw)
	}
	return resp.StatusCode, out
}

// restOK is rest that requires HTTP 200.
func (d *daemon) restOK(method, path, body string) map[string]any {
	d.t.Helper()
	code, out := d.rest(method, path, body)
	require.Equal(d.t, 200, code, "%s %s: %v", method, path, out)
	return out
}

// jget walks a decoded JSON value: jget(v, "tag", "state", "available").
func jget(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// reason is the ErrorInfo reason of a REST error body.
func reason(body map[string]any) (string, string) {
	details, _ := body["details"].([]any)
	for _, d := range details {
		m, _ := d.(map[string]any)
		if m["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" {
			r, _ := m["reason"].(string)
			f, _ := jget(m, "metadata", "field").(string)
			return r, f
		}
	}
	return "", ""
}
