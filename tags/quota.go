package tags

import "strconv"

// Rate quotas, after EMQ's per-queue read and write QPS quotas:
//   - write_quota_per_second: messages stored in the queue per second, by
//     every sender together;
//   - read_quota_per_second: messages handed out per second to each tag
//     (redeliveries count), the queue's value unless the tag has its own.
//
// Seconds are the storage's (Redis's, for the Redis engine), so every
// tagqd replica counts against the same window and a quota holds exactly
// however many replicas serve the queue.
//
// Over a quota: RESOURCE_EXHAUSTED, reason QUOTA_EXCEEDED, with metadata
// quota (the attribute's name), limit, and retry_after_ms (to the next
// second of the storage's clock). A batch send stores the entries that fit,
// in order, and refuses the rest (as the caps do with QUEUE_FULL); a
// receive hands out what the quota leaves, and is refused only when it
// leaves nothing. Consume streams wait for the next second instead (see
// TagReader.Receive). Dead letters arriving in a DLQ and messages moved
// back from one are not sends and are never refused.

// MaxQuotaPerSecond bounds write_quota_per_second and read_quota_per_second.
const MaxQuotaPerSecond = 10_000_000

// Quota attribute names, as errors name them.
const (
	QuotaWrite = "write_quota_per_second"
	QuotaRead  = "read_quota_per_second"
)

func checkQuota(field string, v *int32) *Error {
	if v != nil && (*v < 0 || *v > MaxQuotaPerSecond) {
		return Invalid(ReasonInvalidArgumentRange, field, "%s must be 0 (no quota) or between 1 and %d, got %d",
			field, MaxQuotaPerSecond, *v)
	}
	return nil
}

// QuotaExceeded is the error of a call over quota (QuotaWrite or
// QuotaRead) of limit messages a second, retryMs before the next second;
// tag is "" for a send.
func QuotaExceeded(queue, tag, quota string, limit, retryMs int64) *Error {
	queue = Echo(queue)
	md := map[string]string{"queue": queue, "quota": quota, "limit": strconv.FormatInt(limit, 10),
		"retry_after_ms": strconv.FormatInt(max(retryMs, 1), 10)}
	what := "queue " + strconv.Quote(queue) + " takes at most " + strconv.FormatInt(limit, 10) + " messages a second"
	if tag != "" {
		md["tag"] = Echo(tag)
		what = "tag " + strconv.Quote(md["tag"]) + " of queue " + strconv.Quote(queue) + " receives at most " +
			strconv.FormatInt(limit, 10) + " messages a second"
	}
	return &Error{Kind: KindResourceExhausted, Reason: ReasonQuotaExceeded, Metadata: md,
		Message: what + " (" + quota + "); retry in " + md["retry_after_ms"] + " ms"}
}
