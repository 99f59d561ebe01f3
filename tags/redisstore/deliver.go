package redisstore

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/tags/wake"
)

// Send and deliver. A receive that waits for messages (a Consume stream's
// Reader, a long poll) offers itself; a fast-path send to its queue claims
// one waiting receive per tag and runs that tag's receive script in the
// send's own MULTI, after the XADDs and sendpost.lua, then hands the
// waiting receive what it received. At low rates that saves the waiting
// receive's wake-up and its round trip: a message's way from Publish to
// Consume is one Redis round trip instead of two.
//
// Only the plain case is delivered this way: a plain queue (topic and
// priority queues send through send.lua), a tag with no read quota and no
// redelivery that may be due (the receive's own read hands those out
// first). A claimed receive always gets an answer: what the send's receive
// found (perhaps nothing), or "look yourself" (ok false) when it did not
// run or failed, which it takes as a wake-up. It waits for that answer
// even when it is woken, its context ends or the store closes meanwhile,
// and hands out what the answer holds: the receive ran and counted them,
// like a receive script a cancelled call waits for. (A Consume stream
// gives them back; a long poll whose client left leaves them in flight
// until their visibility timeout, as it would a receive already running.)

// delivery is what a send's receive found for a claimed receive.
type delivery struct {
	ok   bool // false: no receive ran for it; it reads itself
	res  receiveResult
	seen wake.Counts // the watch's counts the receive covers (see Reader)
}

// offer is a waiting receive as sends see it: up to n messages of tag,
// with the visibility (-1: the tag's) and the expected default tag ("":
// none) its own receive would use; a send that claims it answers on
// delivery.
type offer struct {
	queue, tag, expect string
	visMs              int64
	n                  int
	delivery           chan delivery
}

func newOffer(queue, tag, expect string, visMs int64) *offer {
	return &offer{queue: queue, tag: tag, expect: expect, visMs: visMs, delivery: make(chan delivery, 1)}
}

// offerBook is the receives waiting for messages, by queue and tag.
type offerBook struct {
	mu      sync.Mutex
	byQueue map[string]map[string][]*offer
}

// offer puts r, waiting for up to n messages, in the book.
func (s *Store) offer(r *offer, n int) {
	b := &s.offers
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byQueue == nil {
		b.byQueue = map[string]map[string][]*offer{}
	}
	byTag := b.byQueue[r.queue]
	if byTag == nil {
		byTag = map[string][]*offer{}
		b.byQueue[r.queue] = byTag
	}
	r.n = n
	byTag[r.tag] = append(byTag[r.tag], r)
}

// withdraw takes r out of the book; false when a send claimed it first
// (its delivery is on the way).
func (s *Store) withdraw(r *offer) bool {
	b := &s.offers
	b.mu.Lock()
	defer b.mu.Unlock()
	byTag := b.byQueue[r.queue]
	list := byTag[r.tag]
	for i, x := range list {
		if x == r {
			if len(list) == 1 {
				delete(byTag, r.tag)
				if len(byTag) == 0 {
					delete(b.byQueue, r.queue)
				}
			} else {
				byTag[r.tag] = append(list[:i:i], list[i+1:]...)
			}
			return true
		}
	}
	return false
}

// deliverBytes bounds the bodies one delivery's receive reads in its
// script (as a topic or priority queue's in-script read is bounded).
const deliverBytes = 4 << 20

// deliverClaim is a waiting receive claimed by a send, and its receive
// in the send's MULTI, of up to n messages (the offer's count, or fewer
// where the queue's messages may be large).
type deliverClaim struct {
	off   *offer
	n     int
	cmd   *redis.Cmd
	asked hintAsk
}

// claimOffers claims one waiting receive of each tag of queue that may
// be delivered to (see above), the first to offer; nil when none.
func (s *Store) claimOffers(queue string) []*deliverClaim {
	if v, ok := s.queueKinds.Load(queue); !ok || v.(queueKind) != kindPlain {
		return nil
	}
	// The bodies pass through Lua: at most what max_message_bytes keeps
	// within deliverBytes.
	most := 1
	if v, ok := s.limits.Load(queue); ok && v.(sendLimits).maxBytes > 0 {
		most = max(1, deliverBytes/v.(sendLimits).maxBytes)
	}
	b := &s.offers
	b.mu.Lock()
	defer b.mu.Unlock()
	byTag := b.byQueue[queue]
	var out []*deliverClaim
	for tag, list := range byTag {
		k := tagKey{queue, tag}
		if v, ok := s.readQuotas.Load(k); ok && v.(int64) > 0 {
			continue
		}
		if _, _, spent := s.spentFor(k); spent || s.dueMaybe(queue, tag) {
			continue
		}
		r := list[0]
		if len(list) == 1 {
			delete(byTag, tag)
		} else {
			byTag[tag] = list[1:]
		}
		out = append(out, &deliverClaim{off: r, n: min(r.n, most)})
	}
	if len(byTag) == 0 {
		delete(b.byQueue, queue)
	}
	return out
}

// queueDeliveries adds the claims' receives to tx, after the group's
// sends.
func (s *Store) queueDeliveries(ctx context.Context, tx *durable.Tx, claims []*deliverClaim) {
	sc := scriptReceive.build(s.rdb)
	for _, c := range claims {
		keys, args := s.receiveCall(c.off.queue, c.off.tag, c.off.expect, c.n, c.off.visMs, false, true, nil, "")
		c.asked = s.askHint(c.off.queue)
		c.cmd = sc.EvalSha(ctx, tx, keys, args...)
	}
}

// deliver hands each claimed receive what the send's receive found; seen
// is the watch's counts once the send's entries were counted.
func (s *Store) deliver(claims []*deliverClaim, seen wake.Counts) {
	for _, c := range claims {
		d := delivery{seen: seen}
		if res, err := c.cmd.Slice(); err == nil {
			if r, err := s.receiveReply(c.off.queue, c.off.tag, c.n, res, nil, c.asked); err == nil {
				// Asked for fewer than the offer wants and got them all:
				// there may be more (the tag is not drained).
				r.more = r.more || len(r.msgs) == c.n
				d.ok, d.res = true, r
				s.delivered.Add(1)
			}
		} else if k, ok := kindNews(err); ok {
			s.queueKinds.Store(c.off.queue, k) // the script changed nothing
		}
		c.off.delivery <- d // buffered: one claim, one delivery
	}
}

// claimedTags are the tags of claims, for SendDone to pass over.
func claimedTags(claims []*deliverClaim) map[string]bool {
	if len(claims) == 0 {
		return nil
	}
	m := make(map[string]bool, len(claims))
	for _, c := range claims {
		m[c.off.tag] = true
	}
	return m
}

// Why a waiting receive stopped waiting (await).
const (
	awaitWoken = iota
	awaitDelivered
	awaitClosed
	awaitDone // ctx ended
	awaitTimeout
)

// await waits on w for a wake-up or for what a send received for off,
// offered meanwhile to sends of up to n messages, or until the store
// closes, ctx ends or timeout fires (nil: never). A send that claimed off
// is heard out: when its receive found messages they are returned
// (awaitDelivered) whatever else happened meanwhile (the receive counted
// them; the caller hands them out or gives them back); a claim whose
// receive did not run is a wake-up.
func (s *Store) await(ctx context.Context, w *wake.Waiter, off *offer, n int, timeout <-chan time.Time) (*delivery, int) {
	s.offer(off, n)
	why := awaitWoken
	select {
	case <-w.C():
	case d := <-off.delivery:
		if !d.ok {
			return nil, awaitWoken
		}
		return &d, awaitDelivered
	case <-w.Closed():
		why = awaitClosed
	case <-ctx.Done():
		why = awaitDone
	case <-timeout:
		why = awaitTimeout
	}
	if s.withdraw(off) {
		return nil, why
	}
	d := <-off.delivery // claimed: the send's round trip is under way
	switch {
	case d.ok && (why == awaitWoken || len(d.res.msgs) > 0):
		return &d, awaitDelivered
	case !d.ok && why == awaitWoken:
		return nil, awaitWoken
	}
	return nil, why
}

// received is what a claimed receive found, finished as its own receive
// would have been (handles signed, dead letters relayed, the read noted).
func (s *Store) received(ctx context.Context, off *offer, d *delivery) receiveResult {
	r := s.finishReceive(context.WithoutCancel(ctx), off.queue, off.tag, d.res)
	s.noteRead(off.queue, off.tag, len(r.msgs))
	return r
}
