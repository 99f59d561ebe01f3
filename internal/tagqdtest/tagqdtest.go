// Package tagqdtest builds and starts real tagqd processes for tests of
// the clients and the CLI.
package tagqdtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build compiles tagqd into dir and returns the binary's path. It builds
// in the root module of the checkout this package's source lies in
// (tagqdtest is a module of its own, so that the Go client's tests use it
// without depending on the server's module).
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "tagqd")
	_, src, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("building tagqd: no source path for tagqdtest")
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/tagqd")
	cmd.Dir = filepath.Join(filepath.Dir(src), "..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building tagqd: %v\n%s", err, out)
	}
	return bin, nil
}

// Daemon is a running tagqd on loopback ports.
type Daemon struct {
	GRPC, HTTP string // host:port
	SQS        string // host:port of the SQS endpoint ("" when args turned it off)
	cmd        *exec.Cmd
	stderr     *syncBuffer
	exited     chan error

	stopOnce sync.Once
	stopTook time.Duration
	stopErr  error
}

// syncBuffer is tagqd's stderr: os/exec writes it while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Stderr is what tagqd has logged so far.
func (d *Daemon) Stderr() string { return d.stderr.String() }

// Start runs bin on 127.0.0.1 ports chosen by the system (embedded store
// unless args say otherwise) and waits until it serves.
func Start(bin string, args ...string) (*Daemon, error) {
	return StartExactly(bin, append([]string{"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--sqs-addr", "127.0.0.1:0",
		"--log-level", "warn"}, args...)...)
}

// StartExactly is Start with args alone: no addresses or log level of
// Start's own (for a test of tagqd's defaults).
func StartExactly(bin string, args ...string) (*Daemon, error) {
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d := &Daemon{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
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
				d.GRPC = v
			case "http":
				d.HTTP = v
			case "sqs":
				d.SQS = v
			}
		}
		return d, nil
	case err := <-d.exited:
		return nil, fmt.Errorf("tagqd exited before it was ready: %v\n%s", err, d.stderr)
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("tagqd not ready in 30 s\n%s", d.stderr)
	}
}

// Stop sends SIGTERM (the first time) and returns how long tagqd took to
// exit and its exit error (nil for status 0); later calls return the same.
// A tagqd still running after 30 s is killed.
func (d *Daemon) Stop() (time.Duration, error) {
	d.stopOnce.Do(func() {
		start := time.Now()
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			d.stopErr = err
			return
		}
		select {
		case d.stopErr = <-d.exited:
			d.stopTook = time.Since(start)
		case <-time.After(30 * time.Second):
			_ = d.cmd.Process.Kill()
			d.stopErr = fmt.Errorf("tagqd did not stop in 30 s: killed")
			d.stopTook = 30 * time.Second
		}
	})
	return d.stopTook, d.stopErr
}

// Kill ends tagqd with SIGKILL, as a crash would (no shutdown work at
// all), and waits until it has exited. Stop afterwards returns the same.
func (d *Daemon) Kill() error {
	d.stopOnce.Do(func() {
		if err := d.cmd.Process.Kill(); err != nil {
			d.stopErr = err
			return
		}
		<-d.exited
		d.stopErr = errKilled
	})
	if d.stopErr == errKilled {
		return nil
	}
	return d.stopErr
}

// errKilled is Stop's answer for a tagqd that Kill ended.
var errKilled = errors.New("tagqd was killed (SIGKILL)")

// Binary is the tagqd that Main built, for tests that start more of them
// (with Start) while Main runs.
var Binary string

// Main builds and starts one tagqd for a package's tests, runs them, and
// stops it: use it from TestMain. It sets *addr to the gRPC address and
// *httpAddr (if not nil) to the HTTP one.
func Main(run func() int, addr, httpAddr *string) int {
	dir, err := os.MkdirTemp("", "tagqdtest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin, err := Build(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	Binary = bin
	d, err := Start(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*addr = d.GRPC
	if httpAddr != nil {
		*httpAddr = d.HTTP
	}
	code := run()
	if _, err := d.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "tagqd:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// PID is the tagqd process id (for CPU accounting).
func (d *Daemon) PID() int { return d.cmd.Process.Pid }
