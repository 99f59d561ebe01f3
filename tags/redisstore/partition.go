package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags"
)

// Partitioned queues (issue 25; DESIGN §8). A queue of P partitions is P
// queues that share its name and its tags: partition 0 is the queue itself
// (keys {Q}), and partition k ≥ 1 the partition queue "Q#k" (keys {Q#k}:
// a cluster hash slot of its own; a queue name cannot hold '#'). Each is a
// whole queue to the scripts — its own stream, tag cursors, in-flight
// sets, counters, outbox and deduplication ids — so every per-tag rule
// holds in each, and this file only routes between them:
//
//   - a send goes to one partition per batch (rotating; a batch sent
//     while another is in flight joins its partition, up to sendJoin, so
//     they coalesce), or to the partition its topic (S13) or
//     deduplication id (S19) hashes to;
//   - a receive or a Consume stream gathers from every partition, starting
//     at a rotating one (partread.go);
//   - a message id of partition k ≥ 1 is its stream id with "@k" (ids of
//     different partitions' streams can be equal), and a receipt handle
//     names the partition queue, so an ack, nack or dead letter goes to
//     the partition that holds the message;
//   - counters are sums over the partitions, the oldest available age
//     their maximum;
//   - caps and quotas are split: each partition takes its share
//     (ceil(value / P); a byte cap's share at least max_message_bytes), and
//     partition 0 keeps the queue's own values (fields "u.<name>") to
//     report them;
//   - background work (janitor, sweeps, relays) visits every partition:
//     the partition queues are listed in the index <prefix>:parts.
//
// A queue of one partition keeps today's layout and cost exactly: no field
// "np" in its meta, no routing beyond one cached look-up.

// partSep joins a queue's name and a partition number in a partition
// queue's name; idPartSep a stream id and the partition in a message id.
const (
	partSep   = "#"
	idPartSep = "@"
)

// partName is the name of queue q's partition k (q itself for 0).
func partName(q string, k int) string {
	if k == 0 {
		return q
	}
	return q + partSep + strconv.Itoa(k)
}

// queueOf is the queue a partition queue (or a queue) belongs to.
func queueOf(name string) string {
	if i := strings.Index(name, partSep); i >= 0 {
		return name[:i]
	}
	return name
}

// partIndex is a partition queue's number (0 for a queue).
func partIndex(name string) int {
	if i := strings.Index(name, partSep); i >= 0 {
		k, _ := strconv.Atoi(name[i+1:])
		return k
	}
	return 0
}

// partNames are the partition queues of a queue of n partitions, 0 first.
func partNames(q string, n int) []string {
	out := make([]string, n)
	for k := range out {
		out[k] = partName(q, k)
	}
	return out
}

// userID is the message id the API shows for stream id id of partition
// queue sub.
func userID(sub, id string) string {
	if k := partIndex(sub); k > 0 {
		return id + idPartSep + strconv.Itoa(k)
	}
	return id
}

// locate is the partition queue of queue that message id names, and its
// stream id; ok false for an id whose partition part is malformed.
func locate(queue, id string) (sub, streamID string, ok bool) {
	i := strings.LastIndex(id, idPartSep)
	if i < 0 {
		return queue, id, true
	}
	k, err := strconv.Atoi(id[i+1:])
	if err != nil || k < 1 || k >= tags.MaxPartitions {
		return "", "", false
	}
	return partName(queueOf(queue), k), id[:i], true
}

// partCount is a queue's partition count as last read.
type partCount struct {
	n  int
	at time.Time
}

// partCountTTL is how long a partition count is trusted: a queue deleted
// and made again with another count is seen within it (and at once by the
// calls that find a partition missing).
const partCountTTL = 5 * time.Second

// partitions is queue q's partition count: 1 for a queue of one
// partition, and for one that does not exist (its calls find that out).
func (s *Store) partitions(ctx context.Context, q string) (int, error) {
	if v, ok := s.partCounts.Load(q); ok {
		if c := v.(partCount); time.Since(c.at) < partCountTTL {
			return c.n, nil
		}
	}
	v, err := s.rdb.HMGet(ctx, s.qkeys(q).meta, "np", "ct").Result()
	if err != nil {
		return 0, mapErr(err, q, "")
	}
	n := 1
	if str, ok := v[0].(string); ok {
		if p, err := strconv.Atoi(str); err == nil && p > 1 {
			n = p
		}
	}
	if v[1] != nil { // the queue exists: trust the count for a while
		s.partCounts.Store(q, partCount{n: n, at: time.Now()})
	}
	return n, nil
}

// forgetPartitions drops q's cached partition count (q was deleted, or a
// partition was found missing).
func (s *Store) forgetPartitions(q string) { s.partCounts.Delete(q) }

// nextPart is the partition a batch without topic or deduplication id goes
// to: each in turn, per process.
func (s *Store) nextPart(q string, n int) int {
	v, _ := s.partNext.LoadOrStore(q, new(atomic.Uint32))
	return int(v.(*atomic.Uint32).Add(1) % uint32(n))
}

// sendJoin is how many sends of this process may join the partition a
// send of theirs is being stored in before the next send moves on.
const sendJoin = 8

// sendRound is the partition this process's sends of a queue go to while
// sends to it are in flight (partSend).
type sendRound struct {
	mu       sync.Mutex
	k        int // the partition
	inFlight int // sends to it not yet answered
	joined   int // sends that went to it since it was chosen
}

// partSend picks the partition for a batch of queue (n partitions) that
// no topic or deduplication id routes: the partition a send in flight
// here goes to, so that concurrent sends are stored together (send.go
// coalesces them into one round trip, and receives then find more at
// once), for up to sendJoin sends; otherwise the next in turn. Sends one
// after the other rotate as before. done must be called when the send
// is answered.
func (s *Store) partSend(queue string, n int) (k int, done func()) {
	v, _ := s.partRound.LoadOrStore(queue, &sendRound{k: -1})
	r := v.(*sendRound)
	r.mu.Lock()
	if r.inFlight == 0 || r.joined >= sendJoin || r.k < 0 || r.k >= n {
		r.k, r.joined = s.nextPart(queue, n), 0
	}
	r.inFlight++
	r.joined++
	k = r.k
	r.mu.Unlock()
	return k, func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}
}

// hashPart is the partition a topic or deduplication id hashes to (FNV-1a:
// the same in every process).
func hashPart(key string, n int) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}

// partsKey is the index of partition queues (for the background work).
func (s *Store) partsKey() string { return s.prefix + ":parts" }

// shareFields rewrites a partition's caps and quotas (fields cmax, bmax, wq,
// rq of a meta field list) to its share of a queue of n partitions, and
// adds the queue's own values as "u.<field>" for partition 0 to report.
func shareFields(fields []any, n int, mmb int32) []any {
	if n <= 1 {
		return fields
	}
	out := make([]any, 0, len(fields)+8)
	for i := 0; i+1 < len(fields); i += 2 {
		name, _ := fields[i].(string)
		v := fields[i+1]
		switch name {
		case "cmax", "bmax", "wq", "rq":
			total := toInt64(v)
			share := total
			if total > 0 {
				share = (total + int64(n) - 1) / int64(n)
				if name == "bmax" {
					share = max(share, int64(mmb))
				}
			}
			out = append(out, name, share, "u."+name, total)
		default:
			out = append(out, name, v)
		}
	}
	return out
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// unshare puts back the queue's own caps and quotas (u.<field>) in a
// partitioned queue's meta as read.
func unshare(m map[string]string) {
	for _, f := range []string{"cmax", "bmax", "wq", "rq"} {
		if v, ok := m["u."+f]; ok {
			m[f] = v
		}
	}
}

// createPartitions makes partitions 1..P-1 of a queue about to be created
// (partition 0, made last, makes the queue: a crash before it leaves
// partition queues without a queue, which a later create of the name
// replaces and the janitor skips). A partition queue that exists already
// is such a leftover, unless the queue itself exists.
func (s *Store) createPartitions(ctx context.Context, q *tags.Queue, tagCfg []byte) error {
	n := int(q.Partitions)
	if n <= 1 {
		return nil
	}
	// A queue of that name exists (with fewer partitions, or partition 1
	// would be found below): refuse before making partitions it does not have.
	if ok, err := s.rdb.Exists(ctx, s.qkeys(q.Name).meta).Result(); err != nil {
		return rediserr.StorageError(err)
	} else if ok > 0 {
		return errors.New(tags.ReasonQueueAlreadyExists) // mapped by the caller
	}
	args := append([]any{q.DefaultTagName, tagCfg}, encodeMeta(q)...)
	for k := 1; k < n; k++ {
		sub := partName(q.Name, k)
		if err := s.rdb.ZAdd(ctx, s.partsKey(), redis.Z{Member: sub}).Err(); err != nil {
			s.dropPartitions(ctx, q.Name, k)
			return rediserr.StorageError(err)
		}
		err := s.createPartition(ctx, sub, q.DefaultTagName, args)
		if isExists(err) {
			if ok, xerr := s.rdb.Exists(ctx, s.qkeys(q.Name).meta).Result(); xerr == nil && ok == 0 {
				if err = s.removeQueue(ctx, sub); err == nil {
					err = s.createPartition(ctx, sub, q.DefaultTagName, args)
				}
			}
		}
		if err != nil {
			if !isExists(err) {
				s.dropPartitions(ctx, q.Name, k)
			}
			return mapErr(err, q.Name, "")
		}
	}
	return nil
}

func (s *Store) createPartition(ctx context.Context, sub, dtag string, args []any) error {
	k := s.qkeys(sub)
	return scriptCreateQueue.Run(ctx, s.rdb, []string{k.meta, k.tags, k.stream, k.tag(dtag).state, k.sizes, k.holes}, args...).Err()
}

// dropPartitions removes partitions 1..upTo-1 of q (a create that failed, or
// a delete), with their messages.
func (s *Store) dropPartitions(ctx context.Context, q string, upTo int) error {
	var first error
	for k := 1; k < upTo; k++ {
		sub := partName(q, k)
		err := s.removeQueue(ctx, sub)
		if err != nil && tags.ReasonOf(err) != tags.ReasonQueueNotFound {
			if first == nil {
				first = err
			}
			continue
		}
		if err := s.rdb.ZRem(ctx, s.partsKey(), sub).Err(); err != nil && first == nil {
			first = rediserr.StorageError(err)
		}
	}
	return first
}

func isExists(err error) bool {
	return err != nil && strings.Contains(err.Error(), tags.ReasonQueueAlreadyExists)
}

// addState adds a partition's tag state to a tag's: counters add up, the
// oldest available age is the oldest of any partition.
func addState(to *tags.TagState, st tags.TagState) {
	to.Available += st.Available
	to.InFlight += st.InFlight
	to.Delayed += st.Delayed
	to.ReceivedTotal += st.ReceivedTotal
	to.DeletedTotal += st.DeletedTotal
	to.DeadTotal += st.DeadTotal
	to.ExpiredTotal += st.ExpiredTotal
	to.OldestAvailableAge = max(to.OldestAvailableAge, st.OldestAvailableAge)
}

// addPartitionCounts adds the retained messages and bytes, the dropped and
// the deduplicated totals of partitions 1..P-1 to their queues' (qs as
// read from partition 0; nil entries skipped), in one pipelined round
// trip. A queue whose partition is missing (being deleted) becomes nil.
func (s *Store) addPartitionCounts(ctx context.Context, qs []*tags.Queue) error {
	type part struct {
		q     int
		xlen  *redis.IntCmd
		stats *redis.SliceCmd
	}
	var parts []part
	pipe := s.rdb.Pipeline()
	for i, q := range qs {
		if q == nil || q.Partitions <= 1 {
			continue
		}
		for k := 1; k < int(q.Partitions); k++ {
			kk := s.qkeys(partName(q.Name, k))
			parts = append(parts, part{q: i, xlen: pipe.XLen(ctx, kk.stream), stats: pipe.HMGet(ctx, kk.meta, "rb", "dropped", "ddn", "ct")})
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
		return mapErr(err, "", "")
	}
	for _, p := range parts {
		q := qs[p.q]
		if q == nil {
			continue
		}
		v := p.stats.Val()
		if len(v) < 4 || v[3] == nil {
			qs[p.q] = nil // a partition missing: the queue is being deleted
			continue
		}
		q.RetainedMessages += p.xlen.Val()
		q.RetainedBytes += toInt64(v[0])
		q.DroppedTotal += toInt64(v[1])
		q.DeduplicatedTotal += toInt64(v[2])
	}
	return nil
}

// sendParts sends a batch to a queue of n partitions: each entry goes to
// the partition its topic (S13) or deduplication id (S19, the body's hash
// with content-based deduplication) hashes to, the others all to one
// partition (the next in turn). Each partition's share is stored as one
// batch (all in one round trip per partition, concurrently); a batch split
// over partitions is atomic per partition only, and when one partition's
// share fails as a whole its entries get the error (the call's, when
// every share failed).
func (s *Store) sendParts(ctx context.Context, queue string, n int, msgs []tags.OutMessage) ([]tags.SendResult, error) {
	if len(msgs) == 0 || len(msgs) > tags.MaxBatchEntries {
		return nil, tags.Invalid(tags.ReasonBatchTooLarge, "entries", "a batch has 1-%d entries, got %d", tags.MaxBatchEntries, len(msgs))
	}
	lim, _ := s.limitsOf(ctx, queue)
	byPart := map[int][]int{}
	next := -1
	for i, m := range msgs {
		var k int
		switch {
		case m.Topic != "":
			k = hashPart("t:"+m.Topic, n)
		case m.DeduplicationID != nil:
			k = hashPart("d:"+*m.DeduplicationID, n)
		case lim.contentDedup:
			sum := sha256.Sum256(m.Body)
			k = hashPart("d:"+hex.EncodeToString(sum[:]), n)
		default:
			if next < 0 {
				var done func()
				next, done = s.partSend(queue, n)
				defer done()
			}
			k = next
		}
		byPart[k] = append(byPart[k], i)
	}
	results := make([]tags.SendResult, len(msgs))
	type share struct {
		k   int
		idx []int
		res []tags.SendResult
		err error
	}
	shares := make([]*share, 0, len(byPart))
	for k, idx := range byPart {
		shares = append(shares, &share{k: k, idx: idx})
	}
	var wg sync.WaitGroup
	for _, sh := range shares {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := make([]tags.OutMessage, len(sh.idx))
			for j, i := range sh.idx {
				part[j] = msgs[i]
			}
			sh.res, sh.err = s.send(ctx, partName(queue, sh.k), part)
		}()
	}
	wg.Wait()
	failed := 0
	var firstErr error
	for _, sh := range shares {
		sub := partName(queue, sh.k)
		if sh.err != nil {
			if tags.ReasonOf(sh.err) == tags.ReasonQueueNotFound {
				s.forgetPartitions(queue) // made again with other partitions, or being deleted
				sh.err = tags.QueueNotFound(queue)
			}
			failed++
			if firstErr == nil {
				firstErr = sh.err
			}
			for _, i := range sh.idx {
				results[i].Err = sh.err
			}
			continue
		}
		for j, i := range sh.idx {
			r := sh.res[j]
			if r.Err == nil {
				r.ID = userID(sub, r.ID)
			}
			results[i] = r
		}
	}
	if failed == len(shares) {
		return nil, firstErr
	}
	return results, nil
}

// splitParts gives Settle batches of one partition queue each: a batch of
// a partitioned queue's settlements (a Consume stream's, whose deliveries
// carry message ids with their partition) becomes one batch per partition
// with stream ids. back copies the derived batches' errors to the
// caller's. Batches that need no split are kept as they are.
func splitParts(batches []*tags.SettleBatch) (out []*tags.SettleBatch, back func()) {
	split := false
	for _, b := range batches {
		for _, op := range b.Ops {
			if strings.Contains(op.Delivery.ID, idPartSep) {
				split = true
			}
		}
	}
	if !split {
		return batches, func() {}
	}
	type origin struct {
		b *tags.SettleBatch
		i int
	}
	var derived []*tags.SettleBatch
	var from [][]origin
	for _, b := range batches {
		b.Errs = make([]error, len(b.Ops))
		at := map[string]int{} // partition queue -> its derived batch
		for i, op := range b.Ops {
			sub, id, ok := locate(b.Queue, op.Delivery.ID)
			if !ok {
				b.Errs[i] = tags.Invalid(tags.ReasonInvalidReceiptHandle, "receipt_handle", "message id %q names no partition", tags.Echo(op.Delivery.ID))
				continue
			}
			j, seen := at[sub]
			if !seen {
				j = len(derived)
				at[sub] = j
				derived = append(derived, &tags.SettleBatch{Queue: sub, Tag: b.Tag})
				from = append(from, nil)
			}
			op.Delivery.Queue, op.Delivery.ID = sub, id
			derived[j].Ops = append(derived[j].Ops, op)
			from[j] = append(from[j], origin{b, i})
		}
	}
	return derived, func() {
		for j, d := range derived {
			for k, e := range d.Errs {
				o := from[j][k]
				o.b.Errs[o.i] = e
			}
		}
	}
}

// peekParts is PeekPage on a queue of n partitions: partition 0's listing,
// then partition 1's, and so on; a position is "<partition>_<position in
// it>" (a page token holds only name characters).
func (s *Store) peekParts(ctx context.Context, queue, tag string, n, max int, from string) ([]tags.Message, string, error) {
	k, pos := 0, ""
	if from != "" {
		p, rest, ok := strings.Cut(from, "_")
		kk, err := strconv.Atoi(p)
		if !ok || err != nil || kk < 0 || kk >= n || strconv.Itoa(kk) != p {
			return nil, "", tags.Invalid(tags.ReasonInvalidArgumentRange, "page_token", "page_token is not one tagq issued for this listing")
		}
		k, pos = kk, rest
	}
	var out []tags.Message
	for ; k < n; k, pos = k+1, "" {
		sub := partName(queue, k)
		msgs, next, err := s.peekPage(ctx, sub, tag, max-len(out), pos)
		if err != nil {
			return nil, "", err
		}
		out = append(out, withUserIDs(sub, msgs)...)
		if next != "" {
			return out, strconv.Itoa(k) + "_" + next, nil
		}
		if len(out) >= max {
			if k+1 < n {
				return out, strconv.Itoa(k+1) + "_", nil
			}
			return out, "", nil
		}
	}
	return out, "", nil
}
