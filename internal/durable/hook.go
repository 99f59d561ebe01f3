package durable

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// node is one Redis server's client and state: whether it is known to be
// short of replicas (marked writes fail at once) and whether a probe is
// running.
type node struct {
	cl      *redis.Client
	short   atomic.Bool
	probing atomic.Bool
}

func (n *node) addr() string { return n.cl.Options().Addr }

// hook adds the hook to one server's client, once.
func (a *Acks) hook(cl *redis.Client) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.nodes[cl]; !ok {
		a.hookLocked(cl)
	}
}

func (a *Acks) hookLocked(cl *redis.Client) *node {
	n := &node{cl: cl}
	a.nodes[cl] = n
	cl.AddHook(nodeHook{a: a, n: n})
	return n
}

// nodeHook is the hook on one server's client.
type nodeHook struct {
	a *Acks
	n *node
}

func (h nodeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook sends a marked command that writes as a pipeline of one,
// which ProcessPipelineHook extends with the WAIT. (A Conn or Tx carries
// the client's hooks: a single write sent on one under a marked context
// would go out on another connection, so the engine sends pipelines
// there.)
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
// and fails its writes when the replicas fall short. Transactions are left
// alone (a go-redis cluster transaction redirected by ASK starts with
// ASKING, so any MULTI counts): see ExecTx and TxPipelined.
func (h nodeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		want := h.a.Replicas()
		if !Marked(ctx) || want == 0 || !anyWrites(cmds) || hasMulti(cmds) {
			return next(ctx, cmds)
		}
		if err := h.a.refused(h.n, want); err != nil {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		wait := newWait(ctx, want, h.a.cfg.Timeout)
		err := next(ctx, append(cmds[:len(cmds):len(cmds)], wait.cmd))
		werr := h.a.checkWait(wait, want, h.n)
		if werr == nil {
			return err
		}
		failWrites(cmds, werr)
		return werr
	}
}

// failWrites gives werr to the writes Redis answered, and to those whose
// round trip timed out: they are in doubt, and their replies are kept from
// the caller, who must not take them for acknowledged.
func failWrites(cmds []redis.Cmder, werr error) {
	for _, c := range cmds {
		if writes(c) && (c.Err() == nil || timeout(c.Err())) {
			c.SetErr(werr)
		}
	}
}

// timeout says err is a network timeout: the request went out and no
// answer came back in time.
func timeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// wait is a WAIT command that go-redis never retries, and whose presence
// in a pipeline stops go-redis from retrying the pipeline (a retried
// pipeline would run its writes again): a RawWriteToCmd (NoRetry), whose
// reply it parses itself.
type wait struct {
	cmd *redis.RawWriteToCmd
	buf bytes.Buffer
}

func newWait(ctx context.Context, want int, timeout interface{ Milliseconds() int64 }) *wait {
	w := &wait{}
	w.cmd = redis.NewRawWriteToCmd(ctx, &w.buf, "wait", want, timeout.Milliseconds())
	return w
}

// errWaitReply is an error reply to WAIT (a replica answering it, say).
type errWaitReply string

func (e errWaitReply) Error() string { return string(e) }

// result is WAIT's answer: the replicas that acknowledged, or the error.
func (w *wait) result() (int64, error) {
	if err := w.cmd.Err(); err != nil {
		return 0, err
	}
	line := strings.TrimSpace(w.buf.String())
	switch {
	case strings.HasPrefix(line, ":"):
		return strconv.ParseInt(line[1:], 10, 64)
	case strings.HasPrefix(line, "-"):
		return 0, errWaitReply(line[1:])
	}
	return 0, errWaitReply("unexpected WAIT reply " + strconv.Quote(line))
}

// checkWait turns a WAIT's answer into nil or an *Error, and marks the
// node short when the replicas fell short or did not answer in time.
func (a *Acks) checkWait(w *wait, want int, n *node) error {
	got, err := w.result()
	if err == nil && got >= int64(want) {
		return nil
	}
	if err == nil || timeout(err) {
		a.markShort(n)
	}
	return &Error{Acked: int(got), Wanted: want, Sent: true, Addr: n.addr(), Cause: err}
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
	"watch": true, "unwatch": true, "multi": true, "discard": true, // transactions: see ExecTx
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

func hasMulti(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if c.Name() == "multi" {
			return true
		}
	}
	return false
}
