package redisstore

import (
	"fmt"

	"github.com/tagq/tagq/tags"
)

// Retry backoff (tags/policy.go has the rule). A queue's policy is the meta
// field rbo, "<min s> <max s>", absent when it has none: the receive
// script reads it in the HMGET it makes anyway, and a queue without a
// policy keeps the meta hash it had (every field more is scanned past by
// the hot scripts' reads; measured with .ci/redis-instructions). The
// receive script adds the backoff to the deadline of what it hands out
// (so it is available again only once visibility and backoff both
// passed, and every path that makes due messages available — receives,
// the janitor, hints and wake timers, topic blocking — sees one
// deadline), and hands out in zset mode (each message's deadline is its
// own); settle.lua computes it for a nack that asks for it (visibility ms
// -1). Both: scripts/lib.lua backoffms.

// retryField is the meta field of policy p (nil: none, and no field).
func retryField(p *tags.RetryPolicy) []any {
	if p == nil {
		return nil
	}
	return []any{"rbo", fmt.Sprintf("%d %d", p.MinBackoffSeconds, p.MaxBackoffSeconds)}
}

func decodeRetry(m map[string]string) *tags.RetryPolicy {
	var lo, hi int32
	if _, err := fmt.Sscanf(m["rbo"], "%d %d", &lo, &hi); err != nil {
		return nil
	}
	return &tags.RetryPolicy{MinBackoffSeconds: lo, MaxBackoffSeconds: hi}
}
