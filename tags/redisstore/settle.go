package redisstore

import (
	"context"
	"strconv"

	"github.com/tagq/tagq/tags"
)

// Settle applies the settlements of many tags in one pipelined round trip:
// one script call per batch (settle.lua: visibility changes, then deads,
// then acks). Dead letters are relayed to the dead-letter queue before it
// returns, unless that fails; then the relay retries in the background.
// The error return is for the whole call (backend unavailable): then some
// batches may have applied and others not, and their Errs are unset.
func (s *Store) Settle(ctx context.Context, batches []*tags.SettleBatch) error {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	batches, back := splitParts(batches)
	defer back()
	calls := make([]scriptCall, 0, len(batches))
	type part struct {
		b     *tags.SettleBatch
		order []int // script position -> op index
	}
	parts := make([]part, 0, len(batches))
	for _, b := range batches {
		b.Errs = make([]error, len(b.Ops))
		var vis, dead, ack []int
		for i, op := range b.Ops {
			if e := tags.CheckSettlement(op); e != nil {
				b.Errs[i] = e
				continue
			}
			switch op.Kind {
			case tags.SettleVisibility:
				vis = append(vis, i)
			case tags.SettleDead:
				dead = append(dead, i)
			case tags.SettleAck:
				ack = append(ack, i)
			}
		}
		// One call per maxSettleOps, in the script's order (visibility
		// changes, deads, acks), so the order holds across calls too.
		order := append(append(vis, dead...), ack...)
		for len(order) > 0 {
			n := min(len(order), maxSettleOps)
			calls = append(calls, s.settleCall(b, order[:n]))
			parts = append(parts, part{b, order[:n]})
			order = order[n:]
		}
	}
	cmds, err := s.evalPipelined(ctx, scriptSettle, calls)
	if err != nil {
		return err
	}
	relay := map[string]bool{}
	type qt struct{ queue, tag string }
	nacked := map[qt]bool{}
	for j, pt := range parts {
		b := pt.b
		res, err := cmds[j].Int64Slice()
		if err == nil && len(res) == 0 {
			err = &tags.Error{Kind: tags.KindInternal, Reason: tags.ReasonInternal, Message: "settle: unexpected reply"}
		}
		if err != nil {
			err = mapErr(err, b.Queue, b.Tag)
			for _, i := range pt.order {
				b.Errs[i] = err
			}
			continue
		}
		// res[0]: the topics made ready (S13); then per op in order, up to
		// the last that was not 0 (an ack's 0 is no error).
		if res[0] > 0 {
			nacked[qt{b.Queue, b.Tag}] = true
		}
		for p, i := range pt.order {
			if p+1 >= len(res) {
				break
			}
			op := b.Ops[i]
			switch r := res[p+1]; {
			case r == -1:
				b.Errs[i] = tags.NotASourceQueue(b.Queue)
			case r == 0 && op.Kind != tags.SettleAck:
				b.Errs[i] = tags.StaleHandle(op.Delivery.ID, b.Tag)
			case r == 1 && op.Kind == tags.SettleDead:
				relay[b.Queue] = true
			case r == 1 && op.Kind == tags.SettleVisibility && (op.VisibilityMs == 0 || op.Retry):
				nacked[qt{b.Queue, b.Tag}] = true
			}
		}
	}
	for _, b := range batches {
		if hasVisibility(b.Ops) {
			s.forgetHint(b.Queue, b.Tag) // something may be due sooner
		}
		if nacked[qt{b.Queue, b.Tag}] {
			s.waiters.WakeOne(b.Queue, b.Tag)
		}
	}
	for q := range relay {
		if _, err := s.RelayOutbox(ctx, q); err != nil {
			s.log.Warn("dead letters staged; relay to the dead-letter queue will retry", "queue", q, "err", err)
		}
	}
	return nil
}

// maxSettleOps bounds the settlements of one settle.lua call (Lua unpacks
// a call's ids onto a stack of at most 8,000 slots): a batch beyond it
// takes more calls, in one round trip.
const maxSettleOps = 1000

// settleCall is settle.lua's call for the ops of b at order (visibility
// changes, then deads, then acks).
func (s *Store) settleCall(b *tags.SettleBatch, order []int) scriptCall {
	nv, nd, na := 0, 0, 0
	for _, i := range order {
		switch b.Ops[i].Kind {
		case tags.SettleVisibility:
			nv++
		case tags.SettleDead:
			nd++
		case tags.SettleAck:
			na++
		}
	}
	// The acks' first receive ms: their least, and all as one string
	// (one argument for the script to take apart only when it needs them).
	var firsts []byte
	least := int64(0)
	for j, i := range order[nv+nd:] {
		f := b.Ops[i].Delivery.FirstMs
		if j > 0 {
			firsts = append(firsts, ',')
		}
		firsts = strconv.AppendInt(firsts, f, 10)
		if j == 0 || f < least {
			least = f
		}
	}
	args := make([]any, 0, 7+4*nv+5*nd+na)
	args = append(args, b.Queue, b.Tag, nv, nd, na, least, string(firsts))
	for _, i := range order {
		op := b.Ops[i]
		d := op.Delivery
		switch op.Kind {
		case tags.SettleVisibility:
			ms := op.VisibilityMs
			if op.Retry {
				ms = -1 // settle.lua: the queue's retry backoff
			} else if op.Extend {
				ms = -2 - ms // settle.lua: ms, then the queue's retry backoff
			}
			args = append(args, d.ID, d.FirstMs, d.Gen, ms)
		case tags.SettleDead:
			reason := op.Reason
			if reason == "" {
				reason = tags.ReasonConsumerDeadLettered
			}
			args = append(args, d.ID, d.FirstMs, d.Gen, reason, op.Description)
		case tags.SettleAck:
			args = append(args, d.ID)
		}
	}
	k := s.qkeys(b.Queue)
	tk := k.tag(b.Tag)
	return scriptCall{keys: []string{k.meta, k.stream, tk.state, tk.visible, tk.last, k.outbox, k.wake, tk.batches}, args: args}
}

func hasVisibility(ops []tags.Settlement) bool {
	for _, op := range ops {
		if op.Kind == tags.SettleVisibility {
			return true
		}
	}
	return false
}
