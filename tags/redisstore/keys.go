package redisstore

// Key layout. Every key of queue Q is "<prefix>:{Q}:…", so all of a queue's
// keys share one cluster slot (queue names cannot contain braces).
//
//	<prefix>:{Q}:m       hash    queue attributes, the "added", "dropped" and "ddn" (sends deduplicated) counters,
//	                             "rb" (bytes retained), "wqs"/"wqn" (the second and count of the write quota,
//	                             quota.go),
//	                             pep (PEL epoch): bumped whenever what a
//	                             receive read may leave a tag's PEL before its script records it (stalled-read
//	                             recovery, expiry, moves, purge, tag deletion), so the script knows when to check,
//	                             and the leases on Q's background work, "owner expiry-ms": lj (janitor), lw (sweeper)
//	<prefix>:{Q}:tags    hash    tag name -> tag config (JSON)
//	<prefix>:{Q}:s       stream  messages; fields b (body), a (attributes JSON), d (due ms, delayed only),
//	                             tp (topic, topic queues only: S13), pr (priority, priority queues only, absent
//	                             when 8, the default; kept by dead letters and moves back)
//	group T on :s                tag T's cursor, and in its PEL (consumer "c") the stream deliveries T
//	                             has in flight with receive count 1 (see t:T:b), plus, for moments, what
//	                             a receive read and its script has not yet placed (a stalled read when
//	                             its tagqd died in between: the janitor recovers it)
//	group :get on :s             the embedded store only (Config.Embedded): never read; scripts find an entry by id
//	                             by claiming it in it and acking it at once (scripts/lib.lua entry)
//	<prefix>:{Q}:fa      hash    "f:T" -> filter JSON, "a:T" -> messages admitted by T's filter since creation
//	<prefix>:{Q}:dl      zset    delayed message id -> due ms (pruned once due)
//	<prefix>:{Q}:wk      stream  wake-ups for waiting receives on other processes (capped)
//	<prefix>:{Q}:src     set     names of the queues whose redrive policy names Q (Q is a DLQ)
//	<prefix>:{Q}:t:T:b   zset    "first-id last-id first-receive-ms" -> visibility deadline ms: one member per
//	                             receive whose deliveries stay in T's PEL (ids first..last, those still
//	                             pending); once due, what is left moves to v (encoding: scripts/lib.lua)
//	<prefix>:{Q}:t:T:v   zset    "id:first receive offset" -> visible-at ms and receive count, for the other
//	                             messages T received and has not deleted: nacked, extended, redelivered, or
//	                             received with the in-flight zset mode (Config.InFlightZset)
//	<prefix>:{Q}:t:T:p   zset    message id -> due ms, for delayed messages T read before they were due
//	<prefix>:{Q}:t:T:n   hash    tag counters and state (see scripts/createtag.lua; pc counts T's PEL deliveries;
//	                             rq/rqs/rqn its read quota override, second and count; jpc the janitor's place in
//	                             T's PEL, past entries a batch covers, when it stopped at a bound: janitor.lua;
//	                             xm the max receive count x was built for, xmc/xmo how far a rebuild got: sweep.lua;
//	                             sk the ms of T's last seek and sp the PEL epoch it set: seek.lua)
//	<prefix>:{Q}:t:T:x   zset    v member -> visible-at ms, for messages T received max_receive_count times (dead when due)
//	<prefix>:{Q}:t:T:tb  hash    topic queues (S13; scripts/lib.lua): "t:<topic>" -> the id in v blocking the topic
//	                             for T, or "-" (unblocked, messages held: in tr); "i:<id>" -> topic of a blocker
//	<prefix>:{Q}:t:T:tr  list    topic queues: T's ready topics (unblocked, with held messages), FIFO
//	<prefix>:{Q}:t:T:th:<topic>  list  topic queues: ids held for T behind a blocked topic, in send order
//	                             (counted in n's w:<s>, so kept by the janitor; named inside scripts from n)
//	                             A topic queue's tags always run in zset mode (v, no b) and read new
//	                             entries inside the receive script, so topics are placed in stream order.
//	<prefix>:{Q}:t:T:pl:<p>  list  priority queues (meta prq; scripts/lib.lua): ids T read and holds with
//	                             priority p (1-16), in the order read (a delayed one joins when due); counted
//	                             in n's pq:<p> (absent when 0) and w:<s> (kept by the janitor), not in con;
//	                             n's pk counts what T handed out from them (every 10th: the oldest held).
//	                             Named inside scripts from n; T runs in zset mode and reads in the script.
//	<prefix>:{Q}:dlo     stream  dead-letter outbox: dead letters on their way to the DLQ (relayed, then removed)
//	<prefix>:{Q}:dd      zset    dedupe keys of dead letters added to Q (a DLQ), or moved back to Q -> ms
//	<prefix>:{Q}:mv      hash    move task id -> task JSON (Q is a DLQ; see move.go)
//	<prefix>:{Q}:z       list    size of each entry of s, in stream order (sum: "rb"; see scripts/lib.lua)
//	<prefix>:{Q}:zh      zset    "id:size" of entries of s deleted out of order, still in z -> id ms
//	<prefix>:{Q}:sd      hash    send deduplication id -> id of the message first stored under it (see scripts/send.lua)
//	<prefix>:{Q}:sdx     zset    send deduplication id -> ms its window ends (first store + DeduplicationWindow); the
//	                             ids of sd, pruned once past (send.lua, janitor.lua); purge keeps both, as SQS does
//	<prefix>:{Q}:r       list    rates over time (rates.go, scripts/rates.lua): one sample per tick in which Q's
//	                             counters moved, newest first, at most an hour's: "tick-ms span-ms added;T admitted
//	                             received deleted dead;…" (differences; tags that did not move left out); expires
//	                             an hour after its last push
//	<prefix>:{Q}:rs      hash    the counters of Q's last rates sample: t (tick ms), s ("added;T ct admitted
//	                             received deleted dead;…")
//	<prefix>:queues      zset    every queue name, score 0 (lexicographic index for ListQueues)
//	<prefix>:handlekey   string  the key that signs receipt handles, without a key file (see handlekeys.go)
//	<prefix>:workers     zset    live background workers: owner -> expiry ms (workers.go)
//	<prefix>:work        string  the work epoch: bumped when a queue gets a redrive policy or a move (workers.go)
//	<prefix>:stats       string  the per-queue figures last read for metrics, shared by replicas (statsshare.go)
//	<prefix>:stats:lease string  the process reading them now (statsshare.go)
//	<prefix>:rates       hash    the rates sampler: o the lease holder, x its expiry ms, t the last tick sampled
//	                             in full (rates.go)
type queueKeys struct {
	meta, tags, stream, filters, delayed, wake, sources, outbox, dedupe, moves string
	sizes, holes, sendDedup, sendDedupExp, rates, ratesLast                    string
	base                                                                       string
}

type tagKeys struct {
	visible, parked, state, last, batches string
}

// qkeys is queue q's keys. They are made once per queue and kept (each
// call made 14 strings: 7 % of tagqd's allocations under streaming W1), for
// up to maxCachedQueueKeys queues; names beyond are made per call, so
// names that name no queue cannot grow the cache without bound.
func (s *Store) qkeys(q string) queueKeys {
	if v, ok := s.keyCache.Load(q); ok {
		return *v.(*queueKeys)
	}
	k := s.makeQKeys(q)
	if s.keyCacheN.Load() < maxCachedQueueKeys {
		if _, loaded := s.keyCache.LoadOrStore(q, &k); !loaded {
			s.keyCacheN.Add(1)
		}
	}
	return k
}

const maxCachedQueueKeys = 10000

func (s *Store) makeQKeys(q string) queueKeys {
	b := s.prefix + ":{" + q + "}:"
	return queueKeys{
		meta:      b + "m",
		tags:      b + "tags",
		stream:    b + "s",
		filters:   b + "fa",
		delayed:   b + "dl",
		wake:      b + "wk",
		sources:   b + "src",
		outbox:    b + "dlo",
		dedupe:    b + "dd",
		moves:     b + "mv",
		sizes:     b + "z",
		holes:     b + "zh",
		rates:     b + "r",
		ratesLast: b + "rs",
		base:      b,

		sendDedup:    b + "sd",
		sendDedupExp: b + "sdx",
	}
}

func (k queueKeys) tag(t string) tagKeys {
	b := k.base + "t:" + t + ":"
	return tagKeys{visible: b + "v", parked: b + "p", state: b + "n", last: b + "x", batches: b + "b"}
}

func (s *Store) indexKey() string      { return s.prefix + ":queues" }
func (s *Store) handleKeyName() string { return s.prefix + ":handlekey" }
func (s *Store) workersKey() string    { return s.prefix + ":workers" }
func (s *Store) workKey() string       { return s.prefix + ":work" }
