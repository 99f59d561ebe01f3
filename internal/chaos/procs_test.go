package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/tagqdtest"
)

// The processes the chaos test runs and kills: one redis-server and the
// tagqd replicas, each on fixed loopback ports so that clients reconnect
// to the same address after a restart.

// freePort is a loopback port nobody listens on just now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// redisProc is a redis-server that keeps every write in its AOF, fsynced
// before it answers (appendfsync always), so a SIGKILL loses nothing it
// acknowledged.
type redisProc struct {
	bin, dir string
	port     int
	cmd      *exec.Cmd
	exited   chan error
	client   *redis.Client // for readiness and the test's own looks at the keys
}

func startRedis(t *testing.T) *redisProc {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		// TAGQ_CHAOS asked for the test: not running it is a failure.
		t.Fatal("no redis-server on PATH (apt-get install -y redis-server)")
	}
	r := &redisProc{bin: bin, dir: t.TempDir(), port: freePort(t)}
	r.client = redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() {
		r.kill()
		_ = r.client.Close()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			t.Logf("redis-server log:\n%s", tail(string(log), 4000))
		}
	})
	if err := r.start(); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *redisProc) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

func (r *redisProc) url() string { return "redis://" + r.addr() + "/0" }

// start runs redis-server (loading its AOF, if any) and waits until it
// answers PING, which it does only once the AOF is loaded.
func (r *redisProc) start() error {
	r.cmd = exec.Command(r.bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(r.port), "--dir", r.dir,
		"--logfile", "redis.log", "--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--maxmemory-policy", "noeviction")
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("redis-server: %w", err)
	}
	r.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, exited chan error) { exited <- cmd.Wait() }(r.cmd, r.exited)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := r.client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case err := <-r.exited:
			return fmt.Errorf("redis-server exited at start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server does not answer after 20 s: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // polling for a process to come up
	}
}

// kill ends redis-server with SIGKILL and waits for it to exit.
func (r *redisProc) kill() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.exited
	r.cmd = nil
}

// replica is one tagqd, restarted on the same ports after each kill.
type replica struct {
	name       string
	bin        string
	grpc, http string
	args       []string

	mu     sync.Mutex
	d      *tagqdtest.Daemon
	logs   []string // stderr of the processes killed so far
	starts int
}

func newReplica(t *testing.T, name, bin, redisURL string) *replica {
	t.Helper()
	r := &replica{name: name, bin: bin}
	r.grpc = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	r.http = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	r.args = []string{"--grpc-addr", r.grpc, "--http-addr", r.http, "--redis-url", redisURL,
		"--stalled-read", stalledRead.String(), "--log-level", "warn"}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.d != nil {
			if _, err := r.d.Stop(); err != nil {
				t.Errorf("%s: exited with %v on SIGTERM, want status 0", r.name, err)
			}
			r.logs = append(r.logs, r.d.Stderr())
		}
		if t.Failed() {
			for i, l := range r.logs {
				t.Logf("%s, process %d of %d, stderr:\n%s", r.name, i+1, len(r.logs), tail(l, 3000))
			}
		}
	})
	return r
}

// start runs tagqd and waits for its TAGQ_READY line. A port just freed
// by a killed process can take a moment to bind again: a few tries.
func (r *replica) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	for range 5 {
		var d *tagqdtest.Daemon
		if d, err = tagqdtest.Start(r.bin, r.args...); err == nil {
			if d.GRPC != r.grpc {
				return fmt.Errorf("%s: listens on %s, want %s", r.name, d.GRPC, r.grpc)
			}
			r.d = d
			r.starts++
			return nil
		}
	}
	return fmt.Errorf("%s: %w", r.name, err)
}

// kill ends tagqd with SIGKILL: no graceful anything.
func (r *replica) kill() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.d == nil {
		return fmt.Errorf("%s is not running", r.name)
	}
	err := r.d.Kill()
	r.logs = append(r.logs, r.d.Stderr())
	r.d = nil
	return err
}

// stderr is everything the replica's processes logged.
func (r *replica) stderr() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := append([]string{}, r.logs...)
	if r.d != nil {
		all = append(all, r.d.Stderr())
	}
	return all
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
