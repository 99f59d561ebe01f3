package tags

import "unicode/utf8"

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
	var first int64
	if !m.FirstReceiveTime.IsZero() {
		first = m.FirstReceiveTime.UnixMilli()
	}
	return Delivery{Queue: queue, Tag: m.Tag, ID: m.ID, Gen: m.ReceiveCount, FirstMs: first}
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
	// Retry: a SettleVisibility that takes the queue's retry backoff
	// instead of VisibilityMs (a nack without a delay of its own: visible
	// at once on a queue without a retry policy, or for a message at its
	// redrive policy's max receive count).
	Retry bool
	// Extend: a SettleVisibility that renews a held message's visibility
	// (a Consume stream's extend, the Go Consumer's renewals) by
	// VisibilityMs: when that visibility runs out, the queue's retry
	// backoff follows, as after a receive (a consumer that renewed and
	// then died gets the backoff too). Not with Retry.
	Extend bool
	// Reason (default CONSUMER_DEAD_LETTERED) and Description, for SettleDead.
	Reason, Description string
}

// CheckSettlement checks a settlement's own fields (not whether it
// applies).
func CheckSettlement(st Settlement) *Error {
	switch st.Kind {
	case SettleVisibility:
		if st.VisibilityMs < 0 || st.VisibilityMs > MaxVisibilitySeconds*1000 {
			return Invalid(ReasonInvalidArgumentRange, "visibility", "visibility must be between 0 and %d ms, got %d",
				MaxVisibilitySeconds*1000, st.VisibilityMs)
		}
	case SettleDead:
		return CheckDeadReason(st.Reason, st.Description)
	}
	return nil
}

// Bounds of a dead-lettering's reason and description.
const (
	maxReasonLen      = 256
	maxDescriptionLen = 4096
)

// CheckDeadReason checks a dead-lettering's reason and description.
func CheckDeadReason(reason, description string) *Error {
	if len(reason) > maxReasonLen || !utf8.ValidString(reason) {
		return Invalid(ReasonInvalidArgumentRange, "reason", "reason is at most %d bytes of UTF-8", maxReasonLen)
	}
	if len(description) > maxDescriptionLen || !utf8.ValidString(description) {
		return Invalid(ReasonInvalidArgumentRange, "description", "description is at most %d bytes of UTF-8", maxDescriptionLen)
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
