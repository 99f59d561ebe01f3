package tags

import (
	"context"
	"strconv"
	"unicode/utf8"
)

// Delivery names one receive of a message by a tag: what a receipt handle
// encodes, kept by a consume stream instead of a handle it would have to
// parse and check again on every ack.
type Delivery struct {
	Queue, Tag, ID string
	// Gen is the tag's receive count at this receive.
	Gen int
	// FirstMs is when the tag first received the message (names its
	// in-flight member).
	FirstMs int64
}

// Delivery is the delivery a received message came from.
func (m *Message) Delivery(queue string) Delivery {
	return Delivery{Queue: queue, Tag: m.Tag, ID: m.ID, Gen: m.ReceiveCount, FirstMs: m.firstMs}
}

// SettleKind is what a settlement does.
type SettleKind uint8

const (
	// SettleAck deletes the message for the tag (any generation).
	SettleAck SettleKind = iota + 1
	// SettleVisibility sets the deadline to now + VisibilityMs (0: a nack,
	// visible at once); latest generation only.
	SettleVisibility
	// SettleDead dead-letters the message (S8); latest generation only.
	SettleDead
)

// Settlement is one ack, visibility change or dead-lettering of a delivery.
type Settlement struct {
	Kind         SettleKind
	Delivery     Delivery
	VisibilityMs int64
	// Reason (default CONSUMER_DEAD_LETTERED) and Description, for SettleDead.
	Reason, Description string
}

// CheckSettlement checks a settlement's own fields (not whether it
// applies).
func CheckSettlement(st Settlement) *Error {
	switch st.Kind {
	case SettleVisibility:
		if st.VisibilityMs < 0 || st.VisibilityMs > MaxVisibilitySeconds*1000 {
			return invalid(ReasonInvalidArgumentRange, "visibility", "visibility must be between 0 and %d ms, got %d",
				MaxVisibilitySeconds*1000, st.VisibilityMs)
		}
	case SettleDead:
		return checkDeadReason(st.Reason, st.Description)
	}
	return nil
}

func checkDeadReason(reason, description string) *Error {
	if len(reason) > maxReasonLen || !utf8.ValidString(reason) {
		return invalid(ReasonInvalidArgumentRange, "reason", "reason is at most %d bytes of UTF-8", maxReasonLen)
	}
	if len(description) > maxDescriptionLen || !utf8.ValidString(description) {
		return invalid(ReasonInvalidArgumentRange, "description", "description is at most %d bytes of UTF-8", maxDescriptionLen)
	}
	return nil
}

// SettleBatch is the settlements of one tag of one queue. Settle fills Errs
// (one per settlement: nil when it applied, or when an ack found the
// message already gone).
type SettleBatch struct {
	Queue, Tag string
	Ops        []Settlement
	Errs       []error
}

// Settle applies the settlements of many tags in one pipelined round trip:
// one script call per batch (settle.lua: visibility changes, then deads,
// then acks). Dead letters are relayed to the dead-letter queue before it
// returns, unless that fails; then the relay retries in the background.
// The error return is for the whole call (backend unavailable): then some
// batches may have applied and others not, and their Errs are unset.
func (s *Store) Settle(ctx context.Context, batches []*SettleBatch) error {
	calls := make([]scriptCall, 0, len(batches))
	orders := make([][]int, 0, len(batches)) // per batch: script position -> op index
	for _, b := range batches {
		b.Errs = make([]error, len(b.Ops))
		var vis, dead, ack []int
		for i, op := range b.Ops {
			if e := CheckSettlement(op); e != nil {
				b.Errs[i] = e
				continue
			}
			switch op.Kind {
			case SettleVisibility:
				vis = append(vis, i)
			case SettleDead:
				dead = append(dead, i)
			case SettleAck:
				ack = append(ack, i)
			}
		}
		// The acks' first receive ms: their least, and all as one string
		// (one argument for the script to take apart only when it needs them).
		var firsts []byte
		least := int64(0)
		for j, i := range ack {
			f := b.Ops[i].Delivery.FirstMs
			if j > 0 {
				firsts = append(firsts, ',')
			}
			firsts = strconv.AppendInt(firsts, f, 10)
			if j == 0 || f < least {
				least = f
			}
		}
		args := make([]any, 0, 7+4*len(vis)+5*len(dead)+len(ack))
		args = append(args, b.Queue, b.Tag, len(vis), len(dead), len(ack), least, string(firsts))
		for _, i := range vis {
			d := b.Ops[i].Delivery
			args = append(args, d.ID, d.FirstMs, d.Gen, b.Ops[i].VisibilityMs)
		}
		for _, i := range dead {
			op := b.Ops[i]
			reason := op.Reason
			if reason == "" {
				reason = ReasonConsumerDeadLettered
			}
			args = append(args, op.Delivery.ID, op.Delivery.FirstMs, op.Delivery.Gen, reason, op.Description)
		}
		for _, i := range ack {
			args = append(args, b.Ops[i].Delivery.ID)
		}
		k := s.qkeys(b.Queue)
		tk := k.tag(b.Tag)
		calls = append(calls, scriptCall{
			keys: []string{k.meta, k.stream, tk.state, tk.visible, tk.last, k.outbox, k.wake, tk.batches}, args: args})
		orders = append(orders, append(append(vis, dead...), ack...))
	}
	cmds, err := s.evalPipelined(ctx, scriptSettle, calls)
	if err != nil {
		return err
	}
	relay := map[string]bool{}
	for j, b := range batches {
		res, err := cmds[j].Int64Slice()
		if err != nil {
			err = mapErr(err, b.Queue, b.Tag)
			for _, i := range orders[j] {
				b.Errs[i] = err
			}
			continue
		}
		// After the per-op results: the topics made ready (S13).
		nacked := len(res) > len(orders[j]) && res[len(orders[j])] > 0
		for p, i := range orders[j] {
			if p >= len(res) {
				break
			}
			op := b.Ops[i]
			switch {
			case res[p] == -1:
				b.Errs[i] = notASourceQueue(b.Queue)
			case res[p] == 0 && op.Kind != SettleAck:
				b.Errs[i] = staleHandle(handle{ID: op.Delivery.ID, Tag: b.Tag})
			case res[p] == 1 && op.Kind == SettleDead:
				relay[b.Queue] = true
			case res[p] == 1 && op.Kind == SettleVisibility && op.VisibilityMs == 0:
				nacked = true
			}
		}
		if hasVisibility(b.Ops) {
			s.forgetHint(b.Queue, b.Tag) // something may be due sooner
		}
		if nacked {
			s.waiters.wakeOne(b.Queue, b.Tag)
		}
	}
	for q := range relay {
		if _, err := s.RelayOutbox(ctx, q); err != nil {
			s.log.Warn("dead letters staged; relay to the dead-letter queue will retry", "queue", q, "err", err)
		}
	}
	return nil
}

func hasVisibility(ops []Settlement) bool {
	for _, op := range ops {
		if op.Kind == SettleVisibility {
			return true
		}
	}
	return false
}
