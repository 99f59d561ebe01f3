package chaos

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/tagqdtest"
)

const (
	queue       = "chaos"
	dlq         = "chaos-dlq"
	maxReceives = 3 // the queue's redrive policy
	visibility  = 2 // seconds: redeliveries come back within the bound
	batch       = 10
	maxSeq      = 40000 // bounds the producers whatever the machine's speed
	callTimeout = 5 * time.Second
	// stalledRead is tagqd's --stalled-read: a receive cut short by a
	// crash between its two steps is visible again this long after.
	stalledRead = 3 * time.Second

	loadFor      = 40 * time.Second // producers and faults
	faultEvery   = 2500 * time.Millisecond
	redisFault   = 9                     // the 10th fault kills Redis; the others a replica, in turn
	redisDown    = time.Second           // how long Redis stays down
	produceEvery = 50 * time.Millisecond // per producer, a batch of 10
	drainFor     = 45 * time.Second
	// stallBound is S21's: once the faults stop, a message available to a
	// tag reaches one of its waiting consumers (Consume streams and long
	// polls) within the stalled read and 2 s. The drain fails when a tag
	// shows messages available and none of its consumers got a delivery
	// for longer (plus the drain's polling period: it sees a tag's counters
	// every 200 ms, through either replica).
	stallBound = stalledRead + 2*time.Second + 500*time.Millisecond
)

// tagNames are the queue's tags; "a" is its default tag.
var tagNames = []string{"a", "b", "c"}

// TestChaos: see the package documentation.
func TestChaos(t *testing.T) {
	if os.Getenv("TAGQ_CHAOS") == "" {
		t.Skip("the chaos test takes about a minute: run it with TAGQ_CHAOS=1")
	}
	began := time.Now()
	rds := startRedis(t)
	bin, err := tagqdtest.Build(t.TempDir())
	require.NoError(t, err)
	reps := [2]*replica{newReplica(t, "replica-0", bin, rds.url()), newReplica(t, "replica-1", bin, rds.url())}
	for _, r := range reps {
		require.NoError(t, r.start())
	}
	c, err := dialReplicas([2]string{reps[0].grpc, reps[1].grpc})
	require.NoError(t, err)
	defer c.close()
	var gocs [2]*tagq.Client
	for i, r := range reps {
		gocs[i], err = dialGo(r.grpc)
		require.NoError(t, err)
		defer gocs[i].Close()
	}
	createQueues(t, c)
	t.Logf("set up in %v (redis-server on %s, tagqd on %s and %s)", time.Since(began).Round(time.Millisecond),
		rds.addr(), reps[0].grpc, reps[1].grpc)

	led := newLedger(tagNames)
	l := &load{c: c, led: led}
	consumeCtx, stopConsumers := context.WithCancel(context.Background())
	defer stopConsumers()
	var consumers sync.WaitGroup
	for i, tag := range tagNames {
		consumers.Add(2)
		go func() { defer consumers.Done(); l.unaryConsumer(consumeCtx, tag, i%2) }()
		go func() { defer consumers.Done(); l.streamConsumer(consumeCtx, tag, (i+1)%2) }()
	}
	consumers.Add(1) // tag c, the one with poison, through the Go client too
	go func() { defer consumers.Done(); l.goConsumer(consumeCtx, gocs[0], "c") }()

	stop, endLoad := context.WithTimeout(context.Background(), loadFor)
	defer endLoad()
	// A batch being sent when the load stops is sent until acknowledged,
	// for at most this much longer.
	hard, endHard := context.WithTimeout(context.Background(), loadFor+20*time.Second)
	defer endHard()
	var producers sync.WaitGroup
	producers.Add(4)
	go func() { defer producers.Done(); l.unaryProducer(stop, hard, 0, produceEvery) }()
	go func() { defer producers.Done(); l.unaryProducer(stop, hard, 1, produceEvery) }()
	go func() { defer producers.Done(); l.publishProducer(stop, hard, 0, produceEvery) }()
	go func() { defer producers.Done(); l.goPublisher(stop, hard, gocs[1], produceEvery) }()

	events := runFaults(stop, t, rds, reps)
	producers.Wait()
	t.Logf("faults: %s", strings.Join(events, "; "))
	led.mu.Lock()
	t.Logf("load: %d messages sent in %v, %d acknowledged", len(led.sent), time.Since(began).Round(time.Millisecond), len(led.acked))
	led.mu.Unlock()

	// Quiesce: the consumers drain every tag, and the dead letters reach
	// the DLQ.
	drainStart := time.Now()
	states, drained := drain(t, c, led)
	stopConsumers() // they have nothing left to do: see drain
	consumers.Wait()
	t.Logf("drained in %v: %v", time.Since(drainStart).Round(time.Millisecond), drained)
	t.Logf("failures the clients retried through:\n%s", led.errorSummary())

	// The counters once more, with nothing running.
	led.mu.Lock()
	for _, s := range led.strange {
		t.Errorf("%s", s)
	}
	led.mu.Unlock()
	final, err := tagStates(context.Background(), c, queue, tagNames)
	if err != nil {
		t.Errorf("reading the counters: %v", err)
		final = states
	}
	require.Equal(t, fmtStates(states), fmtStates(final), "counters changed after the drain")
	dead := readDLQ(t, c)
	check(t, led, final, dead)
	for _, r := range reps {
		for _, log := range r.stderr() {
			if strings.Contains(log, "panic") {
				t.Errorf("%s logged a panic:\n%s", r.name, tail(log, 3000))
			}
		}
	}
	n, err := rds.client.XLen(context.Background(), "tagq:{"+queue+"}:s").Result()
	t.Logf("the queue's stream holds %d entries at the end (%v); whole test %v", n, err, time.Since(began).Round(time.Millisecond))
}

func createQueues(t *testing.T, c *clients) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.qs[0].CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: dlq, DeadLetterQueue: true}})
	require.NoError(t, err)
	_, err = c.qs[1].CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: queue, DefaultTagName: tagNames[0],
		VisibilityTimeoutSeconds: ptr[int32](visibility),
		RedrivePolicy:            &tagqv1.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: maxReceives}}})
	require.NoError(t, err)
	for _, tag := range tagNames[1:] {
		_, err = c.qs[0].CreateTag(ctx, &tagqv1.CreateTagRequest{Queue: queue, Tag: &tagqv1.Tag{Name: tag}})
		require.NoError(t, err)
	}
}

// runFaults kills a replica every faultEvery, in turn, and restarts it;
// the redisFault-th time it kills Redis instead and restarts it on its AOF.
// It returns what it did, when ctx ends.
func runFaults(ctx context.Context, t *testing.T, rds *redisProc, reps [2]*replica) []string {
	var events []string
	tick := time.NewTicker(faultEvery)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return events
		case <-tick.C:
		}
		began := time.Now()
		if i == redisFault {
			rds.kill()
			select { // an outage clients notice, not a blip
			case <-ctx.Done():
			case <-time.After(redisDown):
			}
			if err := rds.start(); err != nil {
				t.Errorf("restarting Redis: %v", err)
				return events
			}
			events = append(events, fmt.Sprintf("redis down %v", time.Since(began).Round(time.Millisecond)))
			continue
		}
		r := reps[i%2]
		if err := r.kill(); err != nil {
			t.Errorf("killing %s: %v", r.name, err)
		}
		if err := r.start(); err != nil {
			t.Errorf("restarting %s: %v", r.name, err)
			return events
		}
		events = append(events, fmt.Sprintf("%s down %v", r.name, time.Since(began).Round(time.Millisecond)))
	}
}

// tagStates reads the tags' counters through either replica.
func tagStates(ctx context.Context, c *clients, q string, tags []string) (map[string]*tagqv1.TagState, error) {
	out := map[string]*tagqv1.TagState{}
	for _, tag := range tags {
		var err error
		for i := range 2 {
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			var r *tagqv1.GetTagResponse
			r, err = c.qs[i].GetTag(cctx, &tagqv1.GetTagRequest{Queue: q, Name: tag})
			cancel()
			if err == nil {
				out[tag] = r.GetTag().GetState()
				break
			}
		}
		if err != nil {
			return nil, fmt.Errorf("GetTag %s/%s: %w", q, tag, err)
		}
	}
	return out, nil
}

func fmtStates(s map[string]*tagqv1.TagState) string {
	var b strings.Builder
	for _, tag := range sortedKeys(s) {
		st := s[tag]
		fmt.Fprintf(&b, "%s{available %d in_flight %d delayed %d received %d deleted %d dead %d expired %d} ", tag,
			st.GetAvailable(), st.GetInFlight(), st.GetDelayed(), st.GetReceivedTotal(), st.GetDeletedTotal(),
			st.GetDeadTotal(), st.GetExpiredTotal())
	}
	return b.String()
}

// drain waits, up to drainFor, until every tag has nothing available,
// in flight or delayed, and the DLQ holds every dead letter the tags
// counted. Then nothing is left to happen: a read a crash cut short counts
// as available until it is recovered. Meanwhile no tag may show messages
// available while its consumers get nothing for longer than stallBound
// (S21). It returns the tags' last counters and what it saw.
func drain(t *testing.T, c *clients, led *ledger) (map[string]*tagqv1.TagState, string) {
	t.Helper()
	deadline := time.Now().Add(drainFor)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var why string
	// Per tag: the deliveries seen, and since when it has shown messages
	// available with no delivery (zero: it has not).
	seen, waiting := map[string]int{}, map[string]time.Time{}
	var worst time.Duration
	stalled := map[string]bool{}
	defer func() { t.Logf("drain: the longest a tag showed messages available with no delivery: %v", worst) }()
	for {
		states, err := tagStates(context.Background(), c, queue, tagNames)
		if err == nil {
			now := time.Now()
			led.mu.Lock()
			for _, tag := range tagNames {
				n := led.tags[tag].deliveries
				switch {
				case n != seen[tag] || states[tag].GetAvailable() == 0:
					seen[tag], waiting[tag] = n, time.Time{}
				case waiting[tag].IsZero():
					waiting[tag] = now
				default:
					w := now.Sub(waiting[tag])
					worst = max(worst, w)
					if w > stallBound && !stalled[tag] {
						stalled[tag] = true
						t.Errorf("tag %s: %d messages available and no delivery to its waiting consumers for %v (S21: within %v)",
							tag, states[tag].GetAvailable(), w.Round(time.Millisecond), stallBound)
					}
				}
			}
			led.mu.Unlock()
		}
		if err == nil {
			var dlqState map[string]*tagqv1.TagState
			if dlqState, err = tagStates(context.Background(), c, dlq, []string{"default"}); err == nil {
				why = drainedYet(states, dlqState["default"])
				if why == "" {
					return states, fmtStates(states) + "dlq " + fmtStates(dlqState)
				}
			}
		}
		if err != nil {
			why = err.Error()
		}
		if time.Now().After(deadline) {
			// Check what can be checked: it says what went missing.
			t.Errorf("not drained after %v: %s", drainFor, why)
			return states, "not drained"
		}
		<-tick.C
	}
}

// drainedYet says why the drain is not done, or "".
func drainedYet(states map[string]*tagqv1.TagState, dlqState *tagqv1.TagState) string {
	var deadTotal int64
	for _, tag := range tagNames {
		st := states[tag]
		if st.GetAvailable() != 0 || st.GetInFlight() != 0 || st.GetDelayed() != 0 {
			return "tag " + fmtStates(map[string]*tagqv1.TagState{tag: st})
		}
		deadTotal += st.GetDeadTotal()
	}
	if dlqState.GetAvailable() != deadTotal {
		return fmt.Sprintf("the DLQ has %d dead letters, the tags counted %d", dlqState.GetAvailable(), deadTotal)
	}
	return ""
}

// readDLQ receives and deletes every dead letter; it checks the DLQ's
// own counters agree.
func readDLQ(t *testing.T, c *clients) []*tagqv1.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var all []*tagqv1.Message
	for {
		r, err := c.msgs[0].ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: dlq,
			MaxMessages: ptr[int32](100), WaitSeconds: ptr[int32](0), VisibilitySeconds: ptr[int32](600)})
		require.NoError(t, err)
		if len(r.GetMessages()) == 0 {
			break
		}
		all = append(all, r.GetMessages()...)
		req := &tagqv1.DeleteMessageBatchRequest{Queue: dlq}
		for i, m := range r.GetMessages() {
			req.Entries = append(req.Entries, &tagqv1.DeleteMessageBatchEntry{Id: fmt.Sprint(i), ReceiptHandle: m.GetReceiptHandle()})
		}
		d, err := c.msgs[1].DeleteMessageBatch(ctx, req)
		require.NoError(t, err)
		require.Empty(t, d.GetFailed())
	}
	st, err := tagStates(ctx, c, dlq, []string{"default"})
	require.NoError(t, err)
	s := st["default"]
	require.Zero(t, s.GetAvailable()+s.GetInFlight()+s.GetDelayed(), "DLQ %s", fmtStates(st))
	require.EqualValues(t, len(all), s.GetDeletedTotal(), "the DLQ's deleted_total against the dead letters read, DLQ %s", fmtStates(st))
	require.EqualValues(t, len(all), s.GetReceivedTotal(), "each dead letter received once, DLQ %s", fmtStates(st))
	return all
}

// check compares the ledger, the tags' final counters and the dead
// letters. Under at-least-once with crashes, clients cannot know
// everything: a send whose answer was lost may be stored (once, or twice
// if retried), a delivery whose answer was lost still counts as received,
// and a delete whose answer was lost may have applied. What is exact:
//
//   - Every message stored is finished by every tag, once: deleted, or
//     dead-lettered from that tag (no filters here). Each tag's finished
//     set is what its consumers saw plus its dead letters, and the sets of
//     all tags are the same; every acknowledged send is in each of them.
//   - The DLQ holds each (message, tag) at most once (S9), every poison
//     message of tag c, and every dead-lettering the server acknowledged;
//     no message died after its delete was acknowledged.
//   - Counters: available, in_flight, delayed and expired_total are 0;
//     dead_total is the tag's dead letters in the DLQ; deleted_total the
//     rest of its finished messages. received_total is only bounded below:
//     by the deliveries seen, and by the highest receive counts seen.
//   - No receive was handed out twice (two deliveries of a message with
//     one receive_count), and no message was stored more times than sent.
func check(t *testing.T, led *ledger, states map[string]*tagqv1.TagState, dead []*tagqv1.Message) {
	t.Helper()
	led.mu.Lock()
	defer led.mu.Unlock()

	// The dead letters, by source tag: each (message, tag) at most once.
	dlqBy := map[string]map[string]bool{}
	for _, tag := range tagNames {
		dlqBy[tag] = map[string]bool{}
	}
	for _, m := range dead {
		dl := m.GetDeadLetter()
		tag, id := dl.GetSourceTag(), dl.GetOriginalMessageId()
		if dl.GetSourceQueueName() != queue || dlqBy[tag] == nil {
			t.Errorf("dead letter %s from %s/%s: not from this test's queue and tags", m.GetMessageId(), dl.GetSourceQueueName(), tag)
			continue
		}
		if seq, ok := led.idSeq[id]; ok && seq != seqOf(m.GetBody()) {
			t.Errorf("dead letter of %s: body of seq %d, the message had seq %d", id, seqOf(m.GetBody()), seq)
		}
		if dlqBy[tag][id] {
			t.Errorf("message %s dead-lettered twice from tag %s (S9: exactly once)", id, tag)
		}
		dlqBy[tag][id] = true
		// Redis's clock is this machine's: a delete acknowledged before the
		// message died must have kept it out of the DLQ.
		deadAt := dl.GetDeadTimestamp().AsTime()
		if at, ok := led.tags[tag].deleteOK[id]; ok && at.Before(deadAt) {
			t.Errorf("tag %s: message %s dead-lettered (%s) at %s, after its delete was acknowledged at %s",
				tag, id, dl.GetReason(), deadAt.Format("15:04:05.000000"), at.Format("15:04:05.000000"))
		}
		if seq := seqOf(m.GetBody()); !poison(tag, seq) {
			// At-least-once allows it (crashes ate maxReceives deliveries'
			// settlements or answers); say what the consumers saw of it.
			t.Logf("tag %s dead-lettered seq %d (%s), which it does not find poison: %s after %d receives, at %s; the consumers:\n\t%s",
				tag, seq, id, dl.GetReason(), dl.GetOriginalReceiveCount(), deadAt.Format("15:04:05.000000"),
				strings.Join(led.tags[tag].trace[id], "\n\t"))
		}
	}

	// Every message any tag finished is one that was stored: each tag
	// must have finished the same set (S1).
	stored := map[string]bool{}
	for _, tag := range tagNames {
		for id := range led.tags[tag].seen {
			stored[id] = true
		}
		for id := range dlqBy[tag] {
			stored[id] = true
		}
	}

	var dupStored, unackedStored int
	storedSeqs := map[int64]int{}
	for id := range stored {
		storedSeqs[led.idSeq[id]]++
	}
	for seq, n := range storedSeqs {
		if n > 1 {
			dupStored += n - 1
			if led.sent[seq] < n && !led.retries[seq] {
				// At-least-once covers a retry, not a copy the server made.
				t.Errorf("seq %d stored %d times, sent %d times", seq, n, led.sent[seq])
			}
		}
		if _, ok := led.acked[seq]; !ok {
			unackedStored++
		}
	}
	t.Logf("sends: %d sequence numbers sent, %d acknowledged, %d stored though not acknowledged, %d stored more than once (%d extra copies: a retried send whose answer was lost)",
		len(led.sent), len(led.acked), unackedStored, len(storedSeqs)-countOnes(storedSeqs), dupStored)

	for _, tag := range tagNames {
		tl, st := led.tags[tag], states[tag]
		finished := map[string]bool{}
		for id := range tl.seen {
			finished[id] = true
		}
		for id := range dlqBy[tag] {
			finished[id] = true
		}
		var lost, poisonKept []string
		for seq, id := range led.acked {
			if !finished[id] {
				lost = append(lost, fmt.Sprintf("seq %d (%s)", seq, id))
			} else if poison(tag, seq) && !dlqBy[tag][id] {
				poisonKept = append(poisonKept, fmt.Sprintf("seq %d (%s)", seq, id))
			}
		}
		for id := range stored {
			if !finished[id] {
				lost = append(lost, fmt.Sprintf("stored message %s (seq %d), finished by another tag", id, led.idSeq[id]))
			}
		}
		sort.Strings(lost)
		if len(lost) > 0 {
			t.Errorf("tag %s: %d messages lost: %s", tag, len(lost), strings.Join(first(lost, 20), ", "))
		}
		if len(poisonKept) > 0 {
			t.Errorf("tag %s: %d poison messages not in the DLQ: %s", tag, len(poisonKept), strings.Join(first(poisonKept, 20), ", "))
		}
		var deadNotThere []string
		for id := range tl.deadOK {
			if !dlqBy[tag][id] {
				deadNotThere = append(deadNotThere, id)
			}
		}
		if len(deadNotThere) > 0 {
			t.Errorf("tag %s: %d acknowledged dead-letterings not in the DLQ: %v", tag, len(deadNotThere), first(deadNotThere, 20))
		}

		// Counters: exact where the clients can know them.
		want := fmt.Sprintf("available 0 in_flight 0 delayed 0 expired 0 dead %d deleted %d",
			len(dlqBy[tag]), len(finished)-len(dlqBy[tag]))
		got := fmt.Sprintf("available %d in_flight %d delayed %d expired %d dead %d deleted %d",
			st.GetAvailable(), st.GetInFlight(), st.GetDelayed(), st.GetExpiredTotal(), st.GetDeadTotal(), st.GetDeletedTotal())
		if got != want {
			t.Errorf("tag %s counters: got %s, want %s", tag, got, want)
		}
		// received_total counts deliveries whose answer a crash lost too.
		var maxCounts int64
		for _, counts := range tl.seen {
			var m int32
			for n := range counts {
				m = max(m, n)
			}
			maxCounts += int64(m)
		}
		if st.GetReceivedTotal() < int64(tl.deliveries) || st.GetReceivedTotal() < maxCounts {
			t.Errorf("tag %s: received_total %d, but the consumers saw %d deliveries (receive counts sum to %d)",
				tag, st.GetReceivedTotal(), tl.deliveries, maxCounts)
		}
		t.Logf("tag %s: %d messages finished (%d deleted, %d dead, of them %d poison); %d deliveries seen, %d duplicates (redeliveries); received_total %d (%d deliveries lost in transit); deletes acknowledged %d",
			tag, len(finished), st.GetDeletedTotal(), st.GetDeadTotal(), countPoison(led, tag, dlqBy[tag]), tl.deliveries,
			tl.deliveries-len(tl.seen), st.GetReceivedTotal(), st.GetReceivedTotal()-int64(tl.deliveries), len(tl.deleteOK))
	}
	if len(led.acked) == 0 {
		t.Error("no send was acknowledged: the test tested nothing")
	}
}

func countPoison(led *ledger, tag string, ids map[string]bool) int {
	n := 0
	for id := range ids {
		if poison(tag, led.idSeq[id]) {
			n++
		}
	}
	return n
}

func countOnes(m map[int64]int) int {
	n := 0
	for _, v := range m {
		if v == 1 {
			n++
		}
	}
	return n
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
