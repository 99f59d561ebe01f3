package chaos

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// The ledger: what the clients were told, from which loss, duplicates and
// the expected counters are computed exactly.

// bodyOf is the body of the message with sequence number seq: every send
// of seq (a retry too) carries the same body, so a delivery names its seq.
func bodyOf(seq int64) []byte {
	return fmt.Appendf(nil, "chaos-%09d-%s", seq, strings.Repeat("x", 48))
}

// seqOf is the sequence number in a body, or -1 if it is not one of ours.
func seqOf(body []byte) int64 {
	s := string(body)
	if !strings.HasPrefix(s, "chaos-") || len(s) < 16 || string(bodyOf(0))[16:] != s[16:] {
		return -1
	}
	n, err := strconv.ParseInt(s[6:15], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// action is what a consumer of a tag does with a delivery.
type action int

func (a action) String() string {
	return [...]string{"delete", "nack", "dead", "forget"}[a]
}

const (
	actDelete action = iota
	actNack          // visible again at once; the sweeper dead-letters it after maxReceives
	actDead          // DeadMessage: to the DLQ at once
	actForget        // neither: visible again when its visibility timeout passes
)

// decide is the consumers' rule: tag c finds every 20th message poison
// (half of them it dead-letters, half it nacks until the redrive policy
// takes them); tag b forgets some messages on their first delivery.
func decide(tag string, seq int64, receiveCount int32) action {
	switch {
	case tag == "c" && seq%40 == 0:
		return actDead
	case tag == "c" && seq%20 == 0:
		return actNack
	case tag == "b" && seq%25 == 3 && receiveCount == 1:
		return actForget
	}
	return actDelete
}

// poison says whether tag never deletes seq: it must end in the DLQ.
func poison(tag string, seq int64) bool { return tag == "c" && seq%20 == 0 }

type ledger struct {
	mu      sync.Mutex
	sent    map[int64]int    // seq -> how many times a producer sent it (calls or frames)
	retries map[int64]bool   // seqs sent through a client that resends on its own
	acked   map[int64]string // seq -> message id, for the sends the server acknowledged
	idSeq   map[string]int64 // message id -> seq, from acknowledgements and deliveries
	tags    map[string]*tagLedger
	errs    map[string]int // "op code reason" -> how often a call or entry failed
	strange []string       // what must not happen (reported as test errors)
}

type tagLedger struct {
	deliveries int
	// seen: message id -> receive_count -> deliveries with that count.
	seen     map[string]map[int32]int
	deleteOK map[string]time.Time // deletes the server acknowledged, and when (first)
	deadOK   map[string]bool      // dead-letterings the server acknowledged
	// trace: message id -> what the consumers saw and did, for reports.
	trace map[string][]string
}

func newLedger(tags []string) *ledger {
	l := &ledger{sent: map[int64]int{}, retries: map[int64]bool{}, acked: map[int64]string{}, idSeq: map[string]int64{},
		tags: map[string]*tagLedger{}, errs: map[string]int{}}
	for _, tag := range tags {
		l.tags[tag] = &tagLedger{seen: map[string]map[int32]int{}, deleteOK: map[string]time.Time{}, deadOK: map[string]bool{},
			trace: map[string][]string{}}
	}
	return l
}

func (l *ledger) attempt(seqs []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range seqs {
		l.sent[s]++
	}
}

// selfRetrying notes seqs sent through a client that resends on its own.
func (l *ledger) selfRetrying(seqs []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range seqs {
		l.retries[s] = true
	}
}

func (l *ledger) ack(seq int64, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, ok := l.acked[seq]; ok {
		l.strangef("seq %d acknowledged twice (%s, %s): the producer sends it until the first acknowledgement", seq, prev, id)
	}
	l.acked[seq] = id
	l.noteID(id, seq)
}

func (l *ledger) noteID(id string, seq int64) {
	if prev, ok := l.idSeq[id]; ok && prev != seq {
		l.strangef("message id %s carries seq %d and seq %d", id, prev, seq)
	}
	l.idSeq[id] = seq
}

// note adds an event to the trace of message id on tag.
func (l *ledger) note(tag, id, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.noteLocked(tag, id, format, args...)
}

func (l *ledger) noteLocked(tag, id, format string, args ...any) {
	tl := l.tags[tag]
	tl.trace[id] = append(tl.trace[id], time.Now().Format("15:04:05.000000 ")+fmt.Sprintf(format, args...))
}

// deliver records a delivery to tag (by the consumer via) and says what
// to do with it.
func (l *ledger) deliver(tag, via string, m *tagqv1.Message) action {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.noteLocked(tag, m.GetMessageId(), "receive_count %d via %s", m.GetReceiveCount(), via)
	seq := seqOf(m.GetBody())
	if seq < 0 {
		l.strangef("tag %s got a body that no producer sent: %q", tag, m.GetBody())
		return actDelete
	}
	if m.GetTag() != tag {
		l.strangef("a receive on tag %s returned a message of tag %q", tag, m.GetTag())
	}
	l.noteID(m.GetMessageId(), seq)
	tl := l.tags[tag]
	tl.deliveries++
	counts := tl.seen[m.GetMessageId()]
	if counts == nil {
		counts = map[int32]int{}
		tl.seen[m.GetMessageId()] = counts
	}
	counts[m.GetReceiveCount()]++
	if counts[m.GetReceiveCount()] == 2 {
		// Each receive is a new generation: two deliveries with the same
		// count mean one receive was handed out twice (S2).
		l.strangef("tag %s: message %s (seq %d) delivered twice with receive_count %d", tag, m.GetMessageId(), seq, m.GetReceiveCount())
	}
	return decide(tag, seq, m.GetReceiveCount())
}

func (l *ledger) settled(tag string, act action, id string) {
	if id == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.noteLocked(tag, id, "%s acknowledged", act)
	switch act {
	case actDelete:
		if _, ok := l.tags[tag].deleteOK[id]; !ok {
			l.tags[tag].deleteOK[id] = time.Now()
		}
	case actDead:
		l.tags[tag].deadOK[id] = true
	}
}

// failed counts a failed call (or batch entry, or stream settlement).
func (l *ledger) failed(op string, err error) {
	l.failedReason(op, status.Code(err), reasonOf(err))
}

// reasonOf is the ErrorInfo reason of a gRPC error, or "".
func reasonOf(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}

func (l *ledger) failedReason(op string, code codes.Code, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs[fmt.Sprintf("%s %s %s", op, code, reason)]++
	if !expectedFailure(op, code, reason) {
		l.strangef("%s failed with %s %s, which no crash explains", op, code, reason)
	}
}

// expectedFailure says whether a failure is what a crash of tagqd or Redis
// explains: the server is gone or cannot reach Redis, a call timed out, or
// (for settlements that need the current receipt handle) the message was
// received again meanwhile, after a visibility timeout that passed while
// a consumer's call was failing.
func expectedFailure(op string, code codes.Code, reason string) bool {
	switch {
	case retriable(code):
		return true
	case code == codes.FailedPrecondition:
		return reason == "RECEIPT_HANDLE_STALE" && (op == "nack" || op == "dead" || op == "stream-nack" || op == "stream-dead")
	case code == codes.InvalidArgument:
		// A stream answers INVALID_RECEIPT_HANDLE for a delivery id no
		// longer outstanding on it: its visibility passed first.
		return reason == "INVALID_RECEIPT_HANDLE" && strings.HasPrefix(op, "stream-")
	}
	return false
}

// strangeNote records something that must not happen.
func (l *ledger) strangeNote(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.strangef(format, args...)
}

// strangef is strangeNote with l.mu held.
func (l *ledger) strangef(format string, args ...any) {
	if len(l.strange) < 50 {
		l.strange = append(l.strange, fmt.Sprintf(format, args...))
	}
}

// errorSummary lists the failures the clients retried through.
func (l *ledger) errorSummary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.errs))
	for k := range l.errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %6d  %s\n", l.errs[k], k)
	}
	return b.String()
}
