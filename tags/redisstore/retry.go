package redisstore

import (
	"strconv"

	"github.com/tagq/tagq/tags"
)

// Retry backoff (tags/retry.go has the rule). A queue's policy is the meta
// fields rbn and rbx (min and max backoff s), -1 when it has none: always
// written, since the receive script reads them on every call and a field
// a small hash lacks costs a scan of all of it. The receive script adds
// the backoff to the deadline of what it hands out (so it is available
// again only once visibility and backoff both passed, and every path that
// makes due messages available — receives, the janitor, hints and wake
// timers, topic blocking — sees one deadline), and hands out in zset mode
// (each message's deadline is its own); settle.lua computes it for a nack
// that asks for it (visibility ms -1). Both: scripts/lib.lua backoffms.

// retryFields gives the meta fields of policy p (nil: none).
func retryFields(p *tags.RetryPolicy) []any {
	if p == nil {
		return []any{"rbn", -1, "rbx", -1}
	}
	return []any{"rbn", p.MinBackoffSeconds, "rbx", p.MaxBackoffSeconds}
}

func decodeRetry(m map[string]string) *tags.RetryPolicy {
	lo, err1 := strconv.ParseInt(m["rbn"], 10, 32)
	hi, err2 := strconv.ParseInt(m["rbx"], 10, 32)
	if err1 != nil || err2 != nil || lo < 0 || hi < 0 {
		return nil
	}
	return &tags.RetryPolicy{MinBackoffSeconds: int32(lo), MaxBackoffSeconds: int32(hi)}
}
