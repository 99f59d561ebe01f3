package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/tagqdtest"
)

// End-to-end tests: a real tagqd binary, talked to over gRPC and REST.

var tagqdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tagqd-e2e")
	if err != nil {
		panic(err)
	}
	if tagqdBin, err = tagqdtest.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// daemon is a running tagqd with clients to it.
type daemon struct {
	t    *testing.T
	proc *tagqdtest.Daemon
	grpc string
	http string
	conn *grpc.ClientConn
	q    tagqv1.QueueServiceClient
	m    tagqv1.MessageServiceClient
	r    tagqv1.RedriveServiceClient
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
			fn(t, prefixed(t, be))
		})
	}
}

// prefixed is be with a key prefix of the test's own on a shared Redis
// (removed when the test ends); the embedded store as it is.
func prefixed(t *testing.T, be backend) backend {
	if be.name != "embedded" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		be.prefix = "tagqe2e-" + hex.EncodeToString(b[:])
		be.args = append(append([]string{}, be.args...), "--key-prefix", be.prefix)
		t.Cleanup(func() { dropPrefix(t, be) })
	}
	return be
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
	proc, err := tagqdtest.Start(tagqdBin, append(append([]string{}, be.args...), extra...)...)
	require.NoError(t, err)
	d := &daemon{t: t, proc: proc, grpc: proc.GRPC, http: proc.HTTP}
	d.conn, err = grpc.NewClient(d.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	d.q = tagqv1.NewQueueServiceClient(d.conn)
	d.m = tagqv1.NewMessageServiceClient(d.conn)
	d.r = tagqv1.NewRedriveServiceClient(d.conn)
	t.Cleanup(func() {
		_ = d.conn.Close()
		took, err := d.stop()
		// Every tagqd a test starts must stop cleanly and promptly on SIGTERM.
		if err != nil {
			t.Errorf("tagqd exited with %v on SIGTERM, want status 0", err)
		}
		if took > maxShutdown {
			t.Errorf("tagqd took %v to stop on SIGTERM, want under %v", took, maxShutdown)
		}
		if t.Failed() {
			t.Logf("tagqd stderr:\n%s", proc.Stderr())
		}
	})
	return d
}

// maxShutdown is how long a tagqd may take to stop on SIGTERM: its long
// polls end at once, so this only allows for a loaded machine.
const maxShutdown = 10 * time.Second

// stop sends SIGTERM (the first time) and returns how long tagqd took to
// exit and its exit error; later calls return the same.
func (d *daemon) stop() (time.Duration, error) { return d.proc.Stop() }

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

// runTagqd runs tagqd to completion (for flags it refuses) and returns its
// combined output.
func runTagqd(args ...string) (string, error) {
	cmd := exec.Command(tagqdBin, args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// exitCode is the exit status in err from os/exec, or -1.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
