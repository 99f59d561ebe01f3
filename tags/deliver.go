package tags

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/tags/wake"
)

// Send and deliver. A Consume stream's Reader that waits for messages
// offers itself; a fast-path send to its queue claims one waiting reader
// per tag and runs that tag's receive script in the send's own MULTI,
// after the XADDs and sendpost.lua, then hands the reader what it
// received. At low rates that saves the reader's wake-up and its receive
// round trip: a message's way from Publish to Consume is one Redis round
// trip instead of two.
//
// Only the plain case is delivered this way: a plain queue (topic and
// priority queues send through send.lua), a tag with no read quota and no
// redelivery that may be due (the reader's own receive hands those out
// first). A claimed reader always gets an answer: what its receive found
// (perhaps nothing), or "look yourself" (ok false) when the receive did
// not run or failed, which it takes as a wake-up.

// delivery is what a send's receive found for a claimed reader.
type delivery struct {
	ok   bool // false: no receive ran for the reader; it reads itself
	res  receiveResult
	seen wake.Counts // the watch's counts the receive covers (see Reader)
}

// offerBook is the readers waiting for messages, by queue and tag.
type offerBook struct {
	mu      sync.Mutex
	byQueue map[string]map[string][]*Reader
}

// offer puts r, waiting for up to n messages, in the book.
func (s *Store) offer(r *Reader, n int) {
	b := &s.offers
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byQueue == nil {
		b.byQueue = map[string]map[string][]*Reader{}
	}
	tags := b.byQueue[r.queue]
	if tags == nil {
		tags = map[string][]*Reader{}
		b.byQueue[r.queue] = tags
	}
	r.offerN = n
	tags[r.tag] = append(tags[r.tag], r)
}

// withdraw takes r out of the book; false when a send claimed it first
// (its delivery is on the way).
func (s *Store) withdraw(r *Reader) bool {
	b := &s.offers
	b.mu.Lock()
	defer b.mu.Unlock()
	tags := b.byQueue[r.queue]
	list := tags[r.tag]
	for i, x := range list {
		if x == r {
			if len(list) == 1 {
				delete(tags, r.tag)
				if len(tags) == 0 {
					delete(b.byQueue, r.queue)
				}
			} else {
				tags[r.tag] = append(list[:i:i], list[i+1:]...)
			}
			return true
		}
	}
	return false
}

// deliverClaim is a reader claimed by a send, and its receive in the
// send's MULTI.
type deliverClaim struct {
	r     *Reader
	n     int
	cmd   *redis.Cmd
	gen   uint64
	asked time.Time
}

// claimReaders claims one offered reader of each tag of queue that may be
// delivered to (see above), the first to offer; nil when none.
func (s *Store) claimReaders(queue string) []*deliverClaim {
	if v, ok := s.queueKinds.Load(queue); !ok || v.(queueKind) != kindPlain {
		return nil
	}
	b := &s.offers
	b.mu.Lock()
	defer b.mu.Unlock()
	tags := b.byQueue[queue]
	var out []*deliverClaim
	for tag, list := range tags {
		k := tagKey{queue, tag}
		if v, ok := s.readQuotas.Load(k); ok && v.(int64) > 0 {
			continue
		}
		if _, _, spent := s.spentFor(k); spent || s.dueMaybe(queue, tag) {
			continue
		}
		r := list[0]
		if len(list) == 1 {
			delete(tags, tag)
		} else {
			tags[tag] = list[1:]
		}
		out = append(out, &deliverClaim{r: r, n: r.offerN})
	}
	if len(tags) == 0 {
		delete(b.byQueue, queue)
	}
	return out
}

// queueDeliveries adds the claims' receives to pipe, after the group's
// sends.
func (s *Store) queueDeliveries(ctx context.Context, pipe redis.Pipeliner, claims []*deliverClaim) {
	sc := scriptReceive.build(s.rdb.testClock)
	for _, c := range claims {
		keys, args := s.receiveCall(c.r.queue, c.r.tag, "", c.n, c.r.visMs, false, true, nil, "")
		c.gen, c.asked = s.hintGeneration(), time.Now()
		c.cmd = sc.EvalSha(ctx, pipe, keys, args...)
	}
}

// deliver hands each claimed reader what its receive found; seen is the
// watch's counts once the send's entries were counted.
func (s *Store) deliver(claims []*deliverClaim, seen wake.Counts) {
	for _, c := range claims {
		d := delivery{seen: seen}
		if res, err := c.cmd.Slice(); err == nil {
			if r, err := s.receiveReply(c.r.queue, c.r.tag, c.n, res, nil, c.gen, c.asked); err == nil {
				d.ok, d.res = true, r
				s.delivered.Add(1)
			}
		} else if k, ok := kindNews(err); ok {
			s.queueKinds.Store(c.r.queue, k) // the script changed nothing
		}
		c.r.delivery <- d // buffered: one claim, one delivery
	}
}

// claimedTags are the tags of claims, for SendDone to pass over.
func claimedTags(claims []*deliverClaim) map[string]bool {
	if len(claims) == 0 {
		return nil
	}
	m := make(map[string]bool, len(claims))
	for _, c := range claims {
		m[c.r.tag] = true
	}
	return m
}
