// Package durable makes tagq's acknowledged writes wait until Redis
// replicas have them (DESIGN S20: acknowledged means replicated).
//
// Redis acknowledges a write once its master has applied it; the
// replicas get it a moment later. A master that dies in that moment and is
// replaced by its replica takes the write with it, though the client was
// told it was stored. WAIT closes the gap: it blocks the connection that
// made a write until N replicas report having it (or a timeout passes).
//
// Install adds a go-redis hook to a client (to every node of a cluster
// client, present and future; hook.go). Under a context marked with Mark,
// every pipeline or command that writes gets a WAIT pipelined right after
// it, on the same connection and the same node (so on a cluster the WAIT
// goes to the master that ran the write), in the same round trip: the
// cost is latency, not Redis work. The writes of a pipeline whose WAIT
// reports fewer replicas than wanted fail with an *Error saying they may
// have been stored. A master known to be short of replicas fails marked
// writes at once, before sending them (nothing stored), until a probe
// sees a replica that caught up with it (probe.go). Commands under an
// unmarked context, and commands that only read, pass through untouched.
//
// MULTI/EXEC transactions cannot carry their WAIT through the hook (a WAIT
// inside MULTI returns at once, and go-redis reads a transaction's replies
// by position): ExecTx runs a transaction's commands and the WAIT in one
// round trip of its own, and TxPipelined runs a go-redis transaction and
// waits after it (tx.go).
//
// The WAIT is never retried, and it makes go-redis retry nothing of its
// pipeline: a retried pipeline would run its writes twice.
package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Auto as Config.Replicas: wait for one replica once any master has been
// seen with one (INFO replication, at Install and every AutoCheck after),
// none while no master has a replica. Once raised it stays raised: a
// replica that drops does not lower the requirement (S20).
const Auto = -1

// Config configures Install.
type Config struct {
	// Replicas is how many replicas must have a write before it is
	// acknowledged: Auto, 0 (writes do not wait: Install adds no hook), or
	// N > 0.
	Replicas int
	// Timeout is how long a write waits for its replicas (WAIT's timeout).
	// Default 2s. The client's ReadTimeout bounds the round trip that
	// carries the WAIT, so it must exceed Timeout by what the write itself
	// may take (tagqd gives it 3 s more).
	Timeout time.Duration
	// ProbeInterval is how often a master that fell short of replicas is
	// probed (INFO replication) until they are back. Default 500ms.
	ProbeInterval time.Duration
	// AutoCheck is how often Auto looks for replicas while none has been
	// seen. Default 10s.
	AutoCheck time.Duration
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// Acks is the hook Install added: the replicas writes wait for.
type Acks struct {
	cfg    Config
	want   atomic.Int64 // replicas each write needs (0 while Auto saw none)
	client redis.UniversalClient
	log    *slog.Logger

	mu    sync.Mutex
	nodes map[*redis.Client]*node

	stop     chan struct{}
	stopOnce sync.Once
	stopped  bool // under mu: no new probe starts
	done     sync.WaitGroup
}

// Install adds the hook to c and returns it, or nil (and no hook) when
// cfg.Replicas is 0. With Auto it reads INFO replication from every
// master first; a master that does not answer it (the embedded store has
// no replication) counts as one without replicas, and one whose ACL user
// may not run INFO is an error (set Replicas explicitly then).
func Install(ctx context.Context, c redis.UniversalClient, cfg Config) (*Acks, error) {
	if cfg.Replicas == 0 {
		return nil, nil
	}
	if cfg.Replicas < Auto {
		return nil, fmt.Errorf("durable: Replicas %d: want Auto (-1), 0 or more", cfg.Replicas)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = 500 * time.Millisecond
	}
	if cfg.AutoCheck <= 0 {
		cfg.AutoCheck = 10 * time.Second
	}
	a := &Acks{cfg: cfg, client: c, log: cfg.Logger, nodes: map[*redis.Client]*node{}, stop: make(chan struct{})}
	if a.log == nil {
		a.log = slog.Default()
	}
	if cfg.Replicas == Auto {
		n, err := a.mostReplicas(ctx)
		if err != nil {
			return nil, fmt.Errorf("durable: reading INFO replication: %w", err)
		}
		if n > 0 {
			a.want.Store(1)
		}
	} else {
		a.want.Store(int64(cfg.Replicas))
	}
	switch cc := c.(type) {
	case *redis.Client:
		a.hook(cc)
	case *redis.ClusterClient:
		cc.OnNewNode(a.hook)
		if err := cc.ForEachShard(ctx, func(_ context.Context, n *redis.Client) error { a.hook(n); return nil }); err != nil {
			return nil, fmt.Errorf("durable: %w", err)
		}
	default:
		return nil, fmt.Errorf("durable: a %T cannot carry the hook", c)
	}
	if cfg.Replicas == Auto {
		a.done.Add(1)
		go a.autoLoop()
	}
	return a, nil
}

// Replicas is how many replicas each marked write waits for now.
func (a *Acks) Replicas() int {
	if a == nil {
		return 0
	}
	return int(a.want.Load())
}

// Timeout is how long a write waits for its replicas.
func (a *Acks) Timeout() time.Duration {
	if a == nil {
		return 0
	}
	return a.cfg.Timeout
}

// Close stops the background checks. The hook stays on the client (it is
// closed with it); marked writes keep waiting, and a master that falls
// short stays short. Safe to call twice, and on nil.
func (a *Acks) Close() {
	if a == nil {
		return
	}
	a.stopOnce.Do(func() {
		a.mu.Lock()
		a.stopped = true
		a.mu.Unlock()
		close(a.stop)
	})
	a.done.Wait()
}

type markKey struct{}

// Mark returns ctx under which writes wait for their replicas (on a client
// Install hooked).
func Mark(ctx context.Context) context.Context {
	if Marked(ctx) {
		return ctx
	}
	return context.WithValue(ctx, markKey{}, true)
}

// Marked says whether ctx's writes wait for their replicas.
func Marked(ctx context.Context) bool {
	v, _ := ctx.Value(markKey{}).(bool)
	return v
}

// Error is a write that was not acknowledged by enough replicas.
type Error struct {
	// Acked is how many replicas had the write when the wait ended.
	Acked int
	// Wanted is how many it needed.
	Wanted int
	// Sent says the write went to Redis: it may have been stored (and may
	// survive a failover, or not). False: it was refused before it was
	// sent, because the master is short of replicas; nothing was stored.
	Sent bool
	// Addr is the master's address (for logs, never for clients).
	Addr string
	// Cause is the error that ended the wait, if not its timeout.
	Cause error
}

func (e *Error) Error() string {
	what := fmt.Sprintf("%d of %d replicas acknowledged the write in time", e.Acked, e.Wanted)
	if !e.Sent {
		what = fmt.Sprintf("the master has fewer than the %d replicas writes need; the write was not sent", e.Wanted)
	}
	if e.Cause != nil {
		what += ": " + e.Cause.Error()
	}
	return "durable: " + e.Addr + ": " + what
}

func (e *Error) Unwrap() error { return e.Cause }

// AsError returns err as an *Error if it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// master is the hooked client of the master that holds key.
func (a *Acks) master(ctx context.Context, key string) (*node, error) {
	cl, ok := a.client.(*redis.Client)
	if cc, cluster := a.client.(*redis.ClusterClient); cluster {
		m, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return nil, err
		}
		cl, ok = m, true
	}
	if !ok {
		return nil, fmt.Errorf("durable: a %T has no masters", a.client)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.nodes[cl]
	if n == nil { // a node the cluster client made before OnNewNode
		n = a.hookLocked(cl)
	}
	return n, nil
}

// refused is the *Error for a write to n that must not be sent: n is known
// to be short of replicas. Nil when it may go.
func (a *Acks) refused(n *node, want int) error {
	if !n.short.Load() {
		return nil
	}
	return &Error{Wanted: want, Addr: n.addr()}
}
