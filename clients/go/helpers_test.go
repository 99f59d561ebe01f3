package tagq_test

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every wait in these tests is bounded: a regression fails, never hangs.
const wait = 15 * time.Second

// links are the connections open through a proxy or a pipe listener:
// cut closes those open now (a network failure for every stream on them)
// while new ones still get through, so that a client can reconnect;
// after close, new ones are closed at once.
type links struct {
	mu     sync.Mutex
	open   []net.Conn
	closed bool
}

// add keeps conns to cut later, or closes them and reports false once
// the links are closed.
func (l *links) add(conns ...net.Conn) bool {
	l.mu.Lock()
	closed := l.closed
	if !closed {
		l.open = append(l.open, conns...)
	}
	l.mu.Unlock()
	if closed {
		for _, c := range conns {
			_ = c.Close()
		}
	}
	return !closed
}

// cut breaks every connection open now.
func (l *links) cut() {
	l.mu.Lock()
	conns := l.open
	l.open = nil
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

func (l *links) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.cut()
}

// proxy forwards TCP connections to a tagqd; its cut breaks those open
// now.
type proxy struct {
	links
	ln     net.Listener
	mu     sync.Mutex
	target string
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) Addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		out, err := net.Dial("tcp", target)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.add(in, out) {
			return
		}
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			_ = dst.Close()
			_ = src.Close()
		}
		go pipe(in, out)
		go pipe(out, in)
	}
}

// setTarget sends new connections to target.
func (p *proxy) setTarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.links.close()
}

// recv waits for a value on ch, failing the test after wait.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// send sends v on ch, failing the test after wait.
func send[T any](t *testing.T, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(wait):
		t.Fatalf("timed out sending %s", what)
	}
}

// within runs f in a goroutine and fails the test if it does not return in
// time; it returns f's error.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	return recv(t, done, what)
}

var errNotCancelled = errors.New("handler context not cancelled")

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
