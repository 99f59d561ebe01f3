package durable

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tx collects the commands of a transaction for ExecTx: it takes
// Process and the script calls (redis.Scripter), so a redis.Script can be
// queued on it as on a pipeline.
type Tx struct {
	cmds []redis.Cmder
}

var _ redis.Scripter = (*Tx)(nil)

// Cmds is what was queued, in order.
func (t *Tx) Cmds() []redis.Cmder { return t.cmds }

// Process queues cmd.
func (t *Tx) Process(_ context.Context, cmd redis.Cmder) error {
	t.cmds = append(t.cmds, cmd)
	return nil
}

func (t *Tx) script(ctx context.Context, name, src string, keys []string, args []any) *redis.Cmd {
	all := make([]any, 0, 3+len(keys)+len(args))
	all = append(all, name, src, len(keys))
	for _, k := range keys {
		all = append(all, k)
	}
	cmd := redis.NewCmd(ctx, append(all, args...)...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	t.cmds = append(t.cmds, cmd)
	return cmd
}

// Eval queues EVAL.
func (t *Tx) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return t.script(ctx, "eval", script, keys, args)
}

// EvalSha queues EVALSHA.
func (t *Tx) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return t.script(ctx, "evalsha", sha1, keys, args)
}

// EvalRO queues EVAL_RO.
func (t *Tx) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return t.script(ctx, "eval_ro", script, keys, args)
}

// EvalShaRO queues EVALSHA_RO.
func (t *Tx) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return t.script(ctx, "evalsha_ro", sha1, keys, args)
}

// ScriptExists cannot run inside a transaction.
func (t *Tx) ScriptExists(ctx context.Context, _ ...string) *redis.BoolSliceCmd {
	cmd := redis.NewBoolSliceCmd(ctx, "script", "exists")
	cmd.SetErr(errNotInTx)
	return cmd
}

// ScriptLoad cannot run inside a transaction.
func (t *Tx) ScriptLoad(ctx context.Context, _ string) *redis.StringCmd {
	cmd := redis.NewStringCmd(ctx, "script", "load")
	cmd.SetErr(errNotInTx)
	return cmd
}

var errNotInTx = fmt.Errorf("durable: not in a transaction")

// ExecTx runs cmds as one MULTI/EXEC transaction on the master that holds
// key (all cmds must be in key's slot), followed in the same round trip,
// on the same connection, by a WAIT for the replicas; each cmd gets its
// own reply or error, as from a go-redis TxPipeline. A transaction that
// Redis refused whole with MOVED (the slot's master changed: nothing ran)
// runs once more on the master MOVED names. The writes of a transaction
// whose WAIT fell short get an *Error (Sent); on a master known short,
// every cmd gets one (not sent). The cmds are typed as a TxPipeline's
// would be; one of a type ExecTx cannot fill gets an error saying so.
func (a *Acks) ExecTx(ctx context.Context, key string, cmds []redis.Cmder) error {
	answered := false // the cmds have their replies (or errors)
	err := a.onMaster(ctx, key, func(n *node, want int) (string, error) {
		conn := n.cl.Conn()
		defer conn.Close()
		moved, err := a.execOn(ctx, conn, n, want, cmds)
		answered = moved == ""
		return moved, err
	})
	if err != nil && !answered {
		setAll(cmds, err) // refused before it was sent, or MOVED nowhere known
	}
	return err
}

// onMaster runs run on the master of key, unless it is known short of
// replicas, and once more on the master a MOVED reply named (run's
// moved): the transaction did not run, the slot moved.
func (a *Acks) onMaster(ctx context.Context, key string, run func(n *node, want int) (moved string, err error)) error {
	want := a.Replicas()
	n, err := a.master(ctx, key)
	for attempt := 0; ; attempt++ {
		if err == nil {
			err = a.refused(n, want)
		}
		if err != nil {
			return err
		}
		var moved string
		if moved, err = run(n, want); moved == "" || attempt > 0 {
			return err
		}
		n, err = a.movedTo(ctx, key, moved)
	}
}

// movedTo is the hooked client of addr, the master of key that a MOVED
// reply named: the cluster client's map is reloaded (in the background,
// as go-redis does, at most every 200 ms) until it agrees, for up to
// movedWait.
func (a *Acks) movedTo(ctx context.Context, key, addr string) (*node, error) {
	cc, ok := a.client.(*redis.ClusterClient)
	if !ok {
		return nil, fmt.Errorf("durable: MOVED to %s from a server that is no cluster", addr)
	}
	deadline := time.Now().Add(movedWait)
	for {
		// Again each time: the node a reload asks may not have heard of
		// the new master yet.
		cc.ReloadState(ctx)
		n, err := a.master(ctx, key)
		if err == nil && n.addr() == addr {
			return n, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("durable: MOVED to %s; the cluster map still names another master after %s", addr, movedWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond): // the map's reload, in go-redis's goroutine
		}
	}
}

// movedWait bounds how long a transaction MOVED elsewhere waits for the
// cluster map to name its new master.
const movedWait = 5 * time.Second

// execOn runs the transaction and its WAIT on conn; moved is the address
// of the master Redis named when it refused the whole transaction because
// key's slot is there now ("": it did not).
func (a *Acks) execOn(ctx context.Context, conn *redis.Conn, n *node, want int, cmds []redis.Cmder) (moved string, err error) {
	queued := make([]*redis.Cmd, len(cmds))
	var w *wait
	exec := redis.NewSliceCmd(ctx, "exec")
	_, _ = conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		_ = p.Process(ctx, redis.NewStatusCmd(ctx, "multi"))
		for i, c := range cmds {
			queued[i] = redis.NewCmd(ctx, c.Args()...)
			_ = p.Process(ctx, queued[i])
		}
		_ = p.Process(ctx, exec)
		if want > 0 {
			w = newWait(ctx, want, a.cfg.Timeout)
			_ = p.Process(ctx, w.cmd)
		}
		return nil
	})
	if err := exec.Err(); err != nil {
		// Nothing ran: each cmd gets its own refusal when it has one.
		for i, c := range cmds {
			qerr := queued[i].Err()
			if qerr == nil {
				qerr = err
			}
			c.SetErr(qerr)
			if to := movedAddr(qerr); to != "" {
				moved = to
			}
		}
		return moved, err
	}
	replies := exec.Val()
	if len(replies) != len(cmds) {
		err := fmt.Errorf("durable: EXEC answered %d replies for %d commands", len(replies), len(cmds))
		setAll(cmds, err)
		return "", err
	}
	for i, c := range cmds {
		fill(c, replies[i])
	}
	if w == nil {
		return "", nil
	}
	if werr := a.checkWait(w, want, n); werr != nil {
		failWrites(cmds, werr)
		return "", werr
	}
	return "", nil
}

// fill sets c's reply to v, one of EXEC's replies, as go-redis would have
// read it into c.
func fill(c redis.Cmder, v any) {
	if err, ok := v.(error); ok {
		c.SetErr(err)
		return
	}
	c.SetErr(nil)
	switch c := c.(type) {
	case *redis.Cmd:
		c.SetVal(v)
	case *redis.StringCmd:
		s, ok := v.(string)
		if !ok {
			c.SetErr(fmt.Errorf("durable: %s: reply %T, want a string", c.Name(), v))
		}
		c.SetVal(s)
	case *redis.IntCmd:
		i, ok := v.(int64)
		if !ok {
			c.SetErr(fmt.Errorf("durable: %s: reply %T, want an integer", c.Name(), v))
		}
		c.SetVal(i)
	case *redis.StatusCmd:
		s, _ := v.(string)
		c.SetVal(s)
	default:
		c.SetErr(fmt.Errorf("durable: ExecTx cannot fill a %T (%s)", c, c.Name()))
	}
}

func setAll(cmds []redis.Cmder, err error) {
	for _, c := range cmds {
		c.SetErr(err)
	}
}

// movedAddr is the address of a MOVED error reply ("MOVED 3999
// 127.0.0.1:6381"), or "".
func movedAddr(err error) string {
	if err == nil {
		return ""
	}
	f := strings.Fields(err.Error())
	if len(f) == 3 && f[0] == "MOVED" {
		return f[2]
	}
	return ""
}

// TxPipelined runs fn's commands as a go-redis transaction on a
// connection of its own to the master that holds key (all its keys must
// be in key's slot), then waits on that connection for the replicas: two
// round trips, for transactions built with go-redis's typed commands
// (ExecTx takes one). A transaction refused whole with MOVED runs once
// more on the master MOVED names.
func (a *Acks) TxPipelined(ctx context.Context, key string, fn func(redis.Pipeliner) error) ([]redis.Cmder, error) {
	var cmds []redis.Cmder
	err := a.onMaster(ctx, key, func(n *node, want int) (moved string, err error) {
		cmds, moved, err = a.txOn(ctx, n, want, fn)
		return moved, err
	})
	return cmds, err
}

func (a *Acks) txOn(ctx context.Context, n *node, want int, fn func(redis.Pipeliner) error) ([]redis.Cmder, string, error) {
	conn := n.cl.Conn()
	defer conn.Close()
	cmds, err := conn.TxPipelined(ctx, fn)
	if err != nil {
		for _, c := range cmds {
			if to := movedAddr(c.Err()); to != "" {
				return cmds, to, err
			}
		}
		return cmds, "", err
	}
	if want > 0 {
		w := newWait(ctx, want, a.cfg.Timeout)
		_ = conn.Process(ctx, w.cmd)
		if werr := a.checkWait(w, want, n); werr != nil {
			failWrites(cmds, werr)
			return cmds, "", werr
		}
	}
	return cmds, "", nil
}

// Processor is what Wait sends its WAIT on: a *redis.Conn or a *redis.Tx.
type Processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// Wait waits on conn, a connection of its own to the master that holds
// key (a redis.Tx of a WATCH, say), until the replicas have every write
// conn made: for a transaction neither ExecTx nor TxPipelined can run. It
// returns an *Error when they fell short, nil at once when no replica is
// wanted (a nil Acks wants none).
func (a *Acks) Wait(ctx context.Context, conn Processor, key string) error {
	want := a.Replicas()
	if want == 0 {
		return nil
	}
	n, err := a.master(ctx, key)
	if err != nil {
		return err
	}
	w := newWait(ctx, want, a.cfg.Timeout)
	_ = conn.Process(ctx, w.cmd)
	return a.checkWait(w, want, n)
}
