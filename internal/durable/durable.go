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
// client, present and future). Under a context marked with Mark, every
// pipeline or command that writes gets a WAIT pipelined right after it, on
// the same connection and the same node (so on a cluster the WAIT goes to
// the master that ran the write), in the same round trip: the cost is
// latency, not Redis work. The writes of a pipeline whose WAIT reports
// fewer replicas than wanted fail with an *Error saying they may have been
// stored. A master known to be short of replicas fails marked writes at
// once, before sending them (nothing stored), until a probe sees its
// replicas back. Commands under an unmarked context, and commands that only
// read, pass through untouched.
//
// MULTI/EXEC transactions cannot carry their WAIT in the same pipeline (a
// WAIT inside MULTI returns at once, and go-redis reads a transaction's
// replies by position): run them on a connection of their own (Conn) and
// call Wait on it after EXEC.
package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
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
	// Default 2s. It must be well under the client's ReadTimeout, which
	// bounds the round trip that carries the WAIT.
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
	done     sync.WaitGroup
}

// node is one Redis server's state: whether it is known to be short of
// replicas (marked writes fail at once) and whether a probe is running.
type node struct {
	cl      *redis.Client
	short   atomic.Bool
	probing atomic.Bool
}

// Install adds the hook to c and returns it, or nil (and no hook) when
// cfg.Replicas is 0. With Auto it reads INFO replication from every
// master first; a master that does not answer it (the embedded store has
// no replication) counts as one without replicas.
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
		a.done.Add(1)
		go a.autoLoop()
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
func (a *Acks) Timeout() time.Duration { return a.cfg.Timeout }

// Close stops the background checks. The hook stays on the client (it is
// closed with it); marked writes keep waiting. Safe to call twice.
func (a *Acks) Close() {
	if a == nil {
		return
	}
	a.stopOnce.Do(func() { close(a.stop) })
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

// Conn is a connection of its own to the master that holds key, for a
// transaction that Wait then covers. The caller closes it. (A Conn carries
// the client's hooks: a single write command sent on it under a marked
// context would go out on another connection. Send pipelines on it.)
func (a *Acks) Conn(ctx context.Context, key string) (*redis.Conn, error) {
	n, err := a.nodeFor(ctx, key)
	if err != nil {
		return nil, err
	}
	return n.cl.Conn(), nil
}

// Processor is what Wait sends its WAIT on: a *redis.Conn or a *redis.Tx.
type Processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// Wait waits on conn, a connection of its own to the master of key (Conn,
// or a redis.Tx), until the replicas have every write conn made: for a
// transaction, whose EXEC cannot carry the WAIT. It returns an *Error when
// they fell short, nil at once when no replica is wanted.
func (a *Acks) Wait(ctx context.Context, conn Processor, key string) error {
	want := a.Replicas()
	if want == 0 {
		return nil
	}
	n, err := a.nodeFor(ctx, key)
	if err != nil {
		return &Error{Wanted: want, Sent: true, Cause: err}
	}
	cmd := a.waitCmd(ctx, want)
	_ = conn.Process(ctx, cmd)
	return a.checkWait(cmd, want, n)
}

// Refuse is the *Error for a transaction on key that must not be sent: its
// master is known to be short of replicas (the hook does this for
// everything else). Nil when the transaction may go.
func (a *Acks) Refuse(ctx context.Context, key string) error {
	want := a.Replicas()
	if want == 0 {
		return nil
	}
	n, err := a.nodeFor(ctx, key)
	if err != nil || !n.short.Load() {
		return nil
	}
	return &Error{Wanted: want, Addr: n.cl.Options().Addr}
}

// nodeFor is the hooked client of the master that holds key.
func (a *Acks) nodeFor(ctx context.Context, key string) (*node, error) {
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
		n = &node{cl: cl}
		a.nodes[cl] = n
		cl.AddHook(nodeHook{a: a, n: n})
	}
	return n, nil
}

func (a *Acks) waitCmd(ctx context.Context, want int) *redis.IntCmd {
	return redis.NewIntCmd(ctx, "wait", want, a.cfg.Timeout.Milliseconds())
}

// checkWait turns a WAIT's answer into nil or an *Error, and marks the
// node short when the replicas fell short.
func (a *Acks) checkWait(cmd *redis.IntCmd, want int, n *node) error {
	got, err := cmd.Result()
	if err == nil && got >= int64(want) {
		return nil
	}
	if err == nil {
		a.markShort(n)
	}
	return &Error{Acked: int(got), Wanted: want, Sent: true, Addr: n.cl.Options().Addr, Cause: err}
}

// hook adds the hook to one server's client, once.
func (a *Acks) hook(cl *redis.Client) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.nodes[cl]; ok {
		return
	}
	n := &node{cl: cl}
	a.nodes[cl] = n
	cl.AddHook(nodeHook{a: a, n: n})
}

// nodeHook is the hook on one server's client.
type nodeHook struct {
	a *Acks
	n *node
}

func (h nodeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook sends a marked command that writes as a pipeline of one,
// which ProcessPipelineHook extends with the WAIT.
func (h nodeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !Marked(ctx) || h.a.Replicas() == 0 || !writes(cmd) {
			return next(ctx, cmd)
		}
		pipe := h.n.cl.Pipeline()
		_ = pipe.Process(ctx, cmd)
		_, _ = pipe.Exec(ctx)
		return cmd.Err()
	}
}

// ProcessPipelineHook pipelines a WAIT after a marked pipeline that writes,
// and fails its writes when the replicas fall short.
func (h nodeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		want := h.a.Replicas()
		if !Marked(ctx) || want == 0 || len(cmds) == 0 || cmds[0].Name() == "multi" || !anyWrites(cmds) {
			return next(ctx, cmds)
		}
		addr := h.n.cl.Options().Addr
		if h.n.short.Load() {
			err := &Error{Wanted: want, Addr: addr}
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		wait := h.a.waitCmd(ctx, want)
		err := next(ctx, append(cmds[:len(cmds):len(cmds)], wait))
		werr := h.a.checkWait(wait, want, h.n)
		if werr == nil {
			return err
		}
		// Writes Redis answered are in doubt; their replies are kept from
		// the caller, who must not take them for acknowledged.
		for _, c := range cmds {
			if c.Err() == nil && writes(c) {
				c.SetErr(werr)
			}
		}
		return werr
	}
}

// markShort marks n short and starts its probe, unless one runs.
func (a *Acks) markShort(n *node) {
	if n.short.Swap(true) {
		return
	}
	a.log.Warn("Redis master is short of replicas: writes fail until they are back",
		"addr", n.cl.Options().Addr, "replicas_wanted", a.Replicas())
	if n.probing.Swap(true) {
		return
	}
	a.done.Add(1)
	go a.probe(n)
}

// probe reads n's INFO replication until enough replicas have caught up
// with what the master had when the probe began (so with the write whose
// wait failed): a replica that is connected but frozen does not count,
// one that recovered or a new one in sync does.
func (a *Acks) probe(n *node) {
	defer a.done.Done()
	defer n.probing.Store(false)
	need := int64(-1) // the master's offset when the probe began
	t := time.NewTicker(a.cfg.ProbeInterval)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), a.cfg.ProbeInterval+time.Second)
		info, err := n.cl.Info(ctx, "replication").Result()
		cancel()
		if err == nil {
			r := parseReplication(info)
			if need < 0 {
				need = r.offset
			} else if got := r.caughtUp(need); r.master && got >= a.Replicas() {
				n.short.Store(false)
				a.log.Info("Redis master has its replicas again: writes go on", "addr", n.cl.Options().Addr, "replicas", got)
				return
			}
		}
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
	}
}

// autoLoop raises Auto's requirement to one replica once a master has one.
func (a *Acks) autoLoop() {
	defer a.done.Done()
	if a.want.Load() > 0 {
		a.log.Info("acknowledged writes wait for 1 replica (--ack-replicas auto: a master has one)")
		return
	}
	a.log.Info("acknowledged writes wait for no replica (--ack-replicas auto: no master has one yet)")
	t := time.NewTicker(a.cfg.AutoCheck)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		n, err := a.mostReplicas(ctx)
		cancel()
		if err == nil && n > 0 {
			a.want.Store(1)
			a.log.Info("a Redis master has a replica now: acknowledged writes wait for 1 replica (--ack-replicas auto)")
			return
		}
	}
}

// mostReplicas is the most replicas any master has connected. A server
// that does not answer INFO replication (miniredis) has none.
func (a *Acks) mostReplicas(ctx context.Context) (int, error) {
	most := 0
	read := func(ctx context.Context, cl *redis.Client) error {
		info, err := cl.Info(ctx, "replication").Result()
		if err != nil {
			var rerr redis.Error
			if errors.As(err, &rerr) { // an error reply: no replication here
				return nil
			}
			return err
		}
		if r := parseReplication(info); r.master && r.connected > most {
			most = r.connected
		}
		return nil
	}
	switch c := a.client.(type) {
	case *redis.Client:
		return most, read(ctx, c)
	case *redis.ClusterClient:
		var mu sync.Mutex
		err := c.ForEachMaster(ctx, func(ctx context.Context, cl *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return read(ctx, cl)
		})
		return most, err
	}
	return 0, fmt.Errorf("durable: a %T cannot be read", a.client)
}

// replication is what INFO replication says of a server.
type replication struct {
	master    bool
	connected int     // connected_slaves
	offset    int64   // master_repl_offset
	online    []int64 // the offsets the online replicas acknowledged
}

// caughtUp is how many online replicas acknowledged offset.
func (r replication) caughtUp(offset int64) int {
	n := 0
	for _, o := range r.online {
		if o >= offset {
			n++
		}
	}
	return n
}

// parseReplication reads INFO replication's "role", "connected_slaves",
// "master_repl_offset" and "slaveN:ip=…,port=…,state=online,offset=…,lag=0"
// lines.
func parseReplication(info string) replication {
	var r replication
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case k == "role":
			r.master = v == "master"
		case k == "connected_slaves":
			r.connected, _ = strconv.Atoi(v)
		case k == "master_repl_offset":
			r.offset, _ = strconv.ParseInt(v, 10, 64)
		case strings.HasPrefix(k, "slave") && strings.Contains(v, "state=online"):
			for _, f := range strings.Split(v, ",") {
				if fk, fv, _ := strings.Cut(f, "="); fk == "offset" {
					o, _ := strconv.ParseInt(fv, 10, 64)
					r.online = append(r.online, o)
				}
			}
		}
	}
	return r
}

// readOnly are the commands that change nothing: a pipeline of only these
// needs no WAIT. Anything else counts as a write (scripts included: a
// script that only reads costs a WAIT that returns at once).
var readOnly = map[string]bool{
	"get": true, "mget": true, "strlen": true, "exists": true, "type": true, "ttl": true, "pttl": true,
	"hget": true, "hmget": true, "hgetall": true, "hkeys": true, "hvals": true, "hlen": true, "hexists": true, "hscan": true,
	"xrange": true, "xrevrange": true, "xlen": true, "xinfo": true, "xpending": true, "xread": true,
	"zrange": true, "zrangebylex": true, "zrangebyscore": true, "zrevrange": true, "zrevrangebyscore": true,
	"zscore": true, "zmscore": true, "zcard": true, "zcount": true, "zrank": true, "zscan": true,
	"smembers": true, "sismember": true, "scard": true, "sscan": true,
	"lrange": true, "llen": true, "lindex": true,
	"scan": true, "info": true, "ping": true, "time": true, "echo": true, "dbsize": true, "memory": true,
	"script": true, "wait": true, "client": true, "cluster": true, "command": true, "asking": true,
	"readonly": true, "hello": true, "auth": true, "select": true,
	"watch": true, "unwatch": true, "multi": true, "discard": true, // transactions: see Conn
	"evalsha_ro": true, "eval_ro": true, "fcall_ro": true,
}

func writes(c redis.Cmder) bool { return !readOnly[c.Name()] }

func anyWrites(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if writes(c) {
			return true
		}
	}
	return false
}
