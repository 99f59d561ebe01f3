package tags

// Key layout. Every key of queue Q is "<prefix>:{Q}:…", so all of a queue's
// keys share one cluster slot (queue names cannot contain braces).
//
//	<prefix>:{Q}:m       hash    queue attributes and the "added" counter
//	<prefix>:{Q}:tags    hash    tag name -> tag config (JSON)
//	<prefix>:{Q}:s       stream  messages; fields b (body), a (attributes JSON), d (due ms, delayed only)
//	group T on :s                tag T's cursor (read with NOACK: no PEL; v holds what T has in flight)
//	<prefix>:{Q}:fa      hash    "f:T" -> filter JSON, "a:T" -> messages admitted by T's filter since creation
//	<prefix>:{Q}:dl      zset    delayed message id -> due ms (pruned once due)
//	<prefix>:{Q}:wk      stream  wake-ups for waiting receives on other processes (capped)
//	<prefix>:{Q}:src     set     names of the queues whose redrive policy names Q (Q is a DLQ)
//	<prefix>:{Q}:t:T:v   zset    "id:first receive offset" -> visible-at ms and receive count, for messages
//	                             T received and has not deleted (encoding: scripts/lib.lua)
//	<prefix>:{Q}:t:T:p   zset    message id -> due ms, for delayed messages T read before they were due
//	<prefix>:{Q}:t:T:n   hash    tag counters and state (see scripts/createtag.lua)
//	<prefix>:{Q}:t:T:x   zset    v member -> visible-at ms, for messages T received max_receive_count times (dead when due)
//	<prefix>:{Q}:dlo     stream  dead-letter outbox: dead letters on their way to the DLQ (relayed, then removed)
//	<prefix>:{Q}:dd      zset    dedupe keys of dead letters added to Q (a DLQ), or moved back to Q -> ms
//	<prefix>:{Q}:mv      hash    move task id -> task JSON (Q is a DLQ; see move.go)
//	<prefix>:queues      zset    every queue name, score 0 (lexicographic index for ListQueues)
//	<prefix>:handlekey   string  the key that signs receipt handles
type queueKeys struct {
	meta, tags, stream, filters, delayed, wake, sources, outbox, dedupe, moves string
	base                                                                       string
}

type tagKeys struct {
	visible, parked, state, last string
}

func (s *Store) qkeys(q string) queueKeys {
	b := s.prefix + ":{" + q + "}:"
	return queueKeys{
		meta:    b + "m",
		tags:    b + "tags",
		stream:  b + "s",
		filters: b + "fa",
		delayed: b + "dl",
		wake:    b + "wk",
		sources: b + "src",
		outbox:  b + "dlo",
		dedupe:  b + "dd",
		moves:   b + "mv",
		base:    b,
	}
}

func (k queueKeys) tag(t string) tagKeys {
	b := k.base + "t:" + t + ":"
	return tagKeys{visible: b + "v", parked: b + "p", state: b + "n", last: b + "x"}
}

func (s *Store) indexKey() string      { return s.prefix + ":queues" }
func (s *Store) handleKeyName() string { return s.prefix + ":handlekey" }
