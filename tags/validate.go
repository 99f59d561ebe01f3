package tags

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

var attrNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,256}$`)

// ValidName says whether s is a valid queue, tag or batch entry name: 1-80
// characters of A-Z a-z 0-9 _ - (checked on every call, so by hand rather
// than with a regular expression).
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 80 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ReservedAttributePrefix starts attribute names only tagq may set (e.g.
// DLQ.sourceQueue on dead letters).
const ReservedAttributePrefix = "DLQ."

// SQSAttributePrefix starts attribute names only tagq's SQS endpoint may
// set: it keeps there what SQS carries besides a message's attributes
// (their data types, the AWSTraceHeader system attribute) and reads them
// back as such, so a sender of tagq's own APIs may not forge them. A send
// may carry them only with a context from WithSQSAttributes.
const SQSAttributePrefix = "AWS.SQS."

type sqsAttributesKey struct{}

// WithSQSAttributes is ctx for a send of the SQS endpoint's, which may
// carry attributes named with SQSAttributePrefix.
func WithSQSAttributes(ctx context.Context) context.Context {
	return context.WithValue(ctx, sqsAttributesKey{}, true)
}

// sqsAttributesAllowed reports whether ctx is WithSQSAttributes'.
func sqsAttributesAllowed(ctx context.Context) bool {
	ok, _ := ctx.Value(sqsAttributesKey{}).(bool)
	return ok
}

// CheckName checks name, a queue's or tag's (kind) given as field.
func CheckName(field, kind, name string) *Error {
	if !ValidName(name) {
		e := Invalid(ReasonInvalidName, field, "%s name %q must be 1-80 characters of A-Z a-z 0-9 _ -", kind, Echo(name))
		return e
	}
	return nil
}

// CheckRange checks that v, given as field, is between lo and hi (nil:
// not given, fine).
func CheckRange(field string, v *int32, lo, hi int32) *Error {
	if v != nil && (*v < lo || *v > hi) {
		e := Invalid(ReasonInvalidArgumentRange, field, "%s must be between %d and %d, got %d", field, lo, hi, *v)
		return e
	}
	return nil
}

func checkUserAttributes(field string, m map[string]string) *Error {
	if len(m) > MaxUserAttributes {
		return Invalid(ReasonInvalidAttribute, field, "at most %d user attributes, got %d", MaxUserAttributes, len(m))
	}
	for k, v := range m {
		if k == "" || len(k) > 256 || !utf8.ValidString(k) {
			return Invalid(ReasonInvalidAttribute, field, "user attribute names must be 1-256 bytes of UTF-8, got %q", Echo(k))
		}
		if len(v) > 1024 {
			return Invalid(ReasonInvalidAttribute, field+"["+k+"]", "user attribute values are at most 1024 bytes")
		}
	}
	return nil
}

// MissingValue is the Attribute of a message attribute sent with no value
// (the API's MessageAttribute with neither string_value nor binary_value):
// binary with nil Bytes. Send refuses it (INVALID_ATTRIBUTE); an empty
// binary value has empty, non-nil Bytes.
var MissingValue = Attribute{Binary: true}

// CheckMessageAttributes validates a message's attributes (of a send with
// ctx: see SQSAttributePrefix) and returns their size (names plus values:
// AttributesSize) counted against max_message_bytes.
func CheckMessageAttributes(ctx context.Context, attrs map[string]Attribute) (int, *Error) {
	if len(attrs) > MaxAttributes {
		return 0, Invalid(ReasonInvalidAttribute, "attributes", "at most %d attributes, got %d", MaxAttributes, len(attrs))
	}
	size := 0
	for name, a := range attrs {
		field := "attributes[" + Echo(name) + "]"
		if strings.HasPrefix(name, ReservedAttributePrefix) {
			return 0, Invalid(ReasonReservedAttribute, field,
				"attribute names starting with %q are reserved for tagq", ReservedAttributePrefix)
		}
		if strings.HasPrefix(name, SQSAttributePrefix) && !sqsAttributesAllowed(ctx) {
			return 0, Invalid(ReasonReservedAttribute, field,
				"attribute names starting with %q are reserved for tagq's SQS endpoint (its data types and trace headers)",
				SQSAttributePrefix)
		}
		if !attrNameRE.MatchString(name) {
			return 0, Invalid(ReasonInvalidAttribute, field,
				"attribute names must be 1-256 characters of A-Z a-z 0-9 _ . -, got %q", Echo(name))
		}
		if a.Binary && a.Bytes == nil {
			return 0, Invalid(ReasonInvalidAttribute, field,
				"attribute %q has no value: set string_value or binary_value", Echo(name))
		}
		if a.Binary {
			size += len(name) + len(a.Bytes)
		} else {
			if !utf8.ValidString(a.String) {
				return 0, Invalid(ReasonInvalidAttribute, field, "string attribute values must be UTF-8")
			}
			size += len(name) + len(a.String)
		}
	}
	return size, nil
}

func checkFilter(f *Filter) *Error {
	if f == nil {
		return nil
	}
	if len(f.Conditions) == 0 || len(f.Conditions) > MaxFilterConditions {
		return Invalid(ReasonInvalidFilter, "filter.conditions", "a filter has 1-%d conditions, got %d",
			MaxFilterConditions, len(f.Conditions))
	}
	for _, c := range f.Conditions {
		if !attrNameRE.MatchString(c.Name) {
			return Invalid(ReasonInvalidFilter, "filter.conditions.name",
				"condition attribute name must be 1-256 characters of A-Z a-z 0-9 _ . -, got %q", Echo(c.Name))
		}
	}
	return nil
}

// CheckTopic checks a message's topic against the queue (topicQueue:
// whether it is a topic queue, S13): required there, refused elsewhere.
func CheckTopic(topic string, topicQueue bool) *Error {
	if topic == "" {
		if topicQueue {
			return Invalid(ReasonInvalidArgumentRange, "topic", "a message sent to a topic queue needs a topic")
		}
		return nil
	}
	if !topicQueue {
		return Invalid(ReasonInvalidArgumentRange, "topic", "topic is for topic queues only; this queue is not one")
	}
	ok := len(topic) <= MaxTopicLen
	for i := 0; ok && i < len(topic); i++ {
		c := topic[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-'
	}
	if !ok {
		return Invalid(ReasonInvalidArgumentRange, "topic", "topic must be 1-%d characters of [A-Za-z0-9_.:-], got %q",
			MaxTopicLen, Echo(topic))
	}
	return nil
}

// Priorities of a priority queue's messages: 1 (highest) to MaxPriority;
// a message sent without one (0) has DefaultPriority. A tag hands out
// every PriorityOldestEvery-th message from what it holds by age instead
// of priority (lib.lua's PRIOOLD), so no priority starves.
const (
	MaxPriority         = 16
	DefaultPriority     = 8
	PriorityOldestEvery = 10
)

// CheckPriority checks a message's priority (0: none) against the queue
// (priorityQueue: whether it is a priority queue).
func CheckPriority(p int32, priorityQueue bool) *Error {
	if p == 0 {
		return nil
	}
	if !priorityQueue {
		return Invalid(ReasonInvalidArgumentRange, "priority",
			"priority is for priority queues only; this queue is not one (send 0 or none)")
	}
	if p < 1 || p > MaxPriority {
		return Invalid(ReasonInvalidArgumentRange, "priority", "priority must be 1-%d (1 highest), got %d", MaxPriority, p)
	}
	return nil
}

// MaxTopicLen is the longest topic (S13).
const MaxTopicLen = 128

// CheckDeduplicationID validates a send's deduplication id (nil: none).
func CheckDeduplicationID(p *string) *Error {
	if p == nil {
		return nil
	}
	id := *p
	ok := id != "" && len(id) <= MaxDeduplicationIDLen
	for i := 0; ok && i < len(id); i++ {
		ok = id[i] >= '!' && id[i] <= '~'
	}
	if !ok {
		return Invalid(ReasonInvalidArgumentRange, "deduplication_id",
			"deduplication_id must be 1-%d characters of printable ASCII ('!' to '~'), got %q", MaxDeduplicationIDLen, Echo(id))
	}
	return nil
}

// AttributesSize is what attributes add to a message's size: names and
// values, as max_message_bytes counts them (see CheckMessageAttributes).
func AttributesSize(attrs map[string]Attribute) int {
	n := 0
	for name, a := range attrs {
		n += len(name) + len(a.String) + len(a.Bytes)
	}
	return n
}

// MessageTooLarge refuses a message of size bytes (body plus attribute
// names and values) on a queue that allows limit.
func MessageTooLarge(size, limit int) *Error {
	e := Invalid(ReasonMessageTooLarge, "body", "message is %d bytes (body plus attribute names and values); the queue allows %d",
		size, limit)
	e.Metadata = map[string]string{"size": strconv.Itoa(size), "limit": strconv.Itoa(limit)}
	return e
}

// PageSize is the page size a list call asked for (0: DefaultPageSize).
func PageSize(n int) (int, *Error) {
	if n < 0 || n > MaxPageSize {
		return 0, Invalid(ReasonInvalidArgumentRange, "page_size", "page_size must be between 0 and %d, got %d", MaxPageSize, n)
	}
	if n == 0 {
		return DefaultPageSize, nil
	}
	return n, nil
}

func orDefault(v *int32, d int32) int32 {
	if v != nil {
		return *v
	}
	return d
}

// checkQueueAttrs checks the ranges of a queue's attributes (nil: not
// given).
func checkQueueAttrs(delay, vis, wait, ret, mmb *int32) *Error {
	if e := CheckRange("delay_seconds", delay, 0, MaxDelaySeconds); e != nil {
		return e
	}
	if e := CheckRange("visibility_timeout_seconds", vis, 0, MaxVisibilitySeconds); e != nil {
		return e
	}
	if e := CheckRange("receive_wait_seconds", wait, 0, MaxWaitSeconds); e != nil {
		return e
	}
	if e := CheckRange("message_retention_seconds", ret, MinRetentionSeconds, MaxRetentionSeconds); e != nil {
		return e
	}
	return CheckRange("max_message_bytes", mmb, MinMaxMessageBytes, MaxMaxMessageBytes)
}

// CheckQueueConfig checks a queue to create and returns it with its
// defaults resolved (no times, no state). What it cannot check alone (the
// redrive policy's dead-letter queue: RedrivePolicy's rules) is the
// storage's to check.
func CheckQueueConfig(cfg QueueConfig) (*Queue, *Error) {
	if e := CheckName("name", "queue", cfg.Name); e != nil {
		return nil, e
	}
	if e := checkQueueAttrs(cfg.DelaySeconds, cfg.VisibilityTimeoutSeconds, cfg.ReceiveWaitSeconds,
		cfg.MessageRetentionSeconds, cfg.MaxMessageBytes); e != nil {
		return nil, e
	}
	if e := checkUserAttributes("user_attributes", cfg.UserAttributes); e != nil {
		return nil, e
	}
	if cfg.TopicQueue && cfg.PriorityQueue {
		return nil, Invalid(ReasonInvalidArgumentRange, "priority_queue",
			"a queue cannot be both a topic queue and a priority queue")
	}
	if e := CheckRange("partitions", cfg.Partitions, 1, MaxPartitions); e != nil {
		return nil, e
	}
	parts := orDefault(cfg.Partitions, 1)
	switch {
	case parts > 1 && cfg.DeadLetterQueue:
		// A move task walks the dead-letter queue's one stream.
		return nil, Invalid(ReasonInvalidArgumentRange, "partitions", "a dead-letter queue has one partition")
	case parts > 1 && cfg.PriorityQueue:
		// Priority is kept within a stream: a tag reading several could
		// not hand out the highest priority first.
		return nil, Invalid(ReasonInvalidArgumentRange, "partitions", "a priority queue has one partition")
	}
	if e := checkPolicyShape("redrive_policy", cfg.RedrivePolicy); e != nil {
		return nil, e
	}
	if e := CheckRetryPolicy("retry_policy", cfg.RetryPolicy); e != nil {
		return nil, e
	}
	if e := checkQuota("write_quota_per_second", cfg.WriteQuotaPerSecond); e != nil {
		return nil, e
	}
	if e := checkQuota("read_quota_per_second", cfg.ReadQuotaPerSecond); e != nil {
		return nil, e
	}
	mmb := orDefault(cfg.MaxMessageBytes, DefaultMaxMessageBytes)
	if e := checkCaps(cfg.MaxRetainedMessages, cfg.MaxRetainedBytes, &cfg.Overflow, mmb); e != nil {
		return nil, e
	}
	dtag := cfg.DefaultTagName
	switch {
	case cfg.NoDefaultTag && dtag != "":
		return nil, Invalid(ReasonInvalidArgumentRange, "default_tag_name", "a queue with no default tag takes no default_tag_name")
	case cfg.NoDefaultTag:
	case dtag == "":
		dtag = DefaultTagName
	}
	if !cfg.NoDefaultTag {
		if e := CheckName("default_tag_name", "tag", dtag); e != nil {
			return nil, e
		}
	}
	q := &Queue{
		Name:                     cfg.Name,
		DelaySeconds:             orDefault(cfg.DelaySeconds, 0),
		VisibilityTimeoutSeconds: orDefault(cfg.VisibilityTimeoutSeconds, DefaultVisibilityTimeout),
		ReceiveWaitSeconds:       orDefault(cfg.ReceiveWaitSeconds, 0),
		MessageRetentionSeconds:  orDefault(cfg.MessageRetentionSeconds, DefaultRetention),
		MaxMessageBytes:          mmb,
		DeadLetterQueue:          cfg.DeadLetterQueue,
		TopicQueue:               cfg.TopicQueue,
		PriorityQueue:            cfg.PriorityQueue,
		RetainAckedMessages:      cfg.RetainAckedMessages,
		UserAttributes:           cfg.UserAttributes,
		DefaultTagName:           dtag,
		RedrivePolicy:            cfg.RedrivePolicy,
		RetryPolicy:              cfg.RetryPolicy,
		Overflow:                 cfg.Overflow,

		ContentBasedDeduplication: cfg.ContentBasedDeduplication,
		WriteQuotaPerSecond:       orDefault(cfg.WriteQuotaPerSecond, 0),
		ReadQuotaPerSecond:        orDefault(cfg.ReadQuotaPerSecond, 0),
		Partitions:                parts,
	}
	if q.Overflow == OverflowUnspecified {
		q.Overflow = OverflowRejectNew
	}
	if v := cfg.MaxRetainedMessages; v != nil {
		q.MaxRetainedMessages = *v
	}
	if v := cfg.MaxRetainedBytes; v != nil {
		q.MaxRetainedBytes = *v
	}
	return q, nil
}

// CheckQueueUpdate checks an update of queue name on its own; what it
// leaves depends on the queue as it is (CheckUpdatedCaps, RedrivePolicy's
// rules), which is the storage's to check.
func CheckQueueUpdate(name string, u QueueUpdate) *Error {
	if e := CheckName("name", "queue", name); e != nil {
		return e
	}
	if e := checkQueueAttrs(u.DelaySeconds, u.VisibilityTimeoutSeconds, u.ReceiveWaitSeconds,
		u.MessageRetentionSeconds, u.MaxMessageBytes); e != nil {
		return e
	}
	if e := checkCaps(u.MaxRetainedMessages, u.MaxRetainedBytes, u.Overflow, 0); e != nil {
		return e
	}
	if e := checkQuota("write_quota_per_second", u.WriteQuotaPerSecond); e != nil {
		return e
	}
	if e := checkQuota("read_quota_per_second", u.ReadQuotaPerSecond); e != nil {
		return e
	}
	if u.SetUserAttributes {
		if e := checkUserAttributes("user_attributes", u.UserAttributes); e != nil {
			return e
		}
	}
	if u.SetRedrivePolicy {
		if e := checkPolicyShape("redrive_policy", u.RedrivePolicy); e != nil {
			return e
		}
	}
	if u.SetRetryPolicy {
		if e := CheckRetryPolicy("retry_policy", u.RetryPolicy); e != nil {
			return e
		}
	}
	return nil
}

// CheckTagConfig checks a tag to create on queue.
func CheckTagConfig(queue string, cfg TagConfig) *Error {
	if e := CheckName("queue", "queue", queue); e != nil {
		return e
	}
	if e := CheckName("name", "tag", cfg.Name); e != nil {
		return e
	}
	if e := checkFilter(cfg.Filter); e != nil {
		return e
	}
	if e := CheckRange("visibility_timeout_seconds", cfg.VisibilityTimeoutSeconds, 0, MaxVisibilitySeconds); e != nil {
		return e
	}
	if e := checkUserAttributes("user_attributes", cfg.UserAttributes); e != nil {
		return e
	}
	return checkQuota("read_quota_per_second", cfg.ReadQuotaPerSecond)
}
