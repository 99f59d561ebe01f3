package tags

import (
	"context"
	"regexp"
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

func checkName(field, kind, name string) *Error {
	if !ValidName(name) {
		e := invalid(ReasonInvalidName, field, "%s name %q must be 1-80 characters of A-Z a-z 0-9 _ -", kind, echo(name))
		return e
	}
	return nil
}

func checkRange(field string, v *int32, lo, hi int32) *Error {
	if v != nil && (*v < lo || *v > hi) {
		e := invalid(ReasonInvalidArgumentRange, field, "%s must be between %d and %d, got %d", field, lo, hi, *v)
		return e
	}
	return nil
}

func checkUserAttributes(field string, m map[string]string) *Error {
	if len(m) > MaxUserAttributes {
		return invalid(ReasonInvalidAttribute, field, "at most %d user attributes, got %d", MaxUserAttributes, len(m))
	}
	for k, v := range m {
		if k == "" || len(k) > 256 || !utf8.ValidString(k) {
			return invalid(ReasonInvalidAttribute, field, "user attribute names must be 1-256 bytes of UTF-8, got %q", echo(k))
		}
		if len(v) > 1024 {
			return invalid(ReasonInvalidAttribute, field+"["+k+"]", "user attribute values are at most 1024 bytes")
		}
	}
	return nil
}

// MissingValue is the Attribute of a message attribute sent with no value
// (the API's MessageAttribute with neither string_value nor binary_value):
// binary with nil Bytes. Send refuses it (INVALID_ATTRIBUTE); an empty
// binary value has empty, non-nil Bytes.
var MissingValue = Attribute{Binary: true}

// checkMessageAttributes validates a message's attributes (of a send with
// ctx: see SQSAttributePrefix) and returns their size (names plus values)
// counted against max_message_bytes.
func checkMessageAttributes(ctx context.Context, attrs map[string]Attribute) (int, *Error) {
	if len(attrs) > MaxAttributes {
		return 0, invalid(ReasonInvalidAttribute, "attributes", "at most %d attributes, got %d", MaxAttributes, len(attrs))
	}
	size := 0
	for name, a := range attrs {
		field := "attributes[" + echo(name) + "]"
		if strings.HasPrefix(name, ReservedAttributePrefix) {
			return 0, invalid(ReasonReservedAttribute, field,
				"attribute names starting with %q are reserved for tagq", ReservedAttributePrefix)
		}
		if strings.HasPrefix(name, SQSAttributePrefix) && !sqsAttributesAllowed(ctx) {
			return 0, invalid(ReasonReservedAttribute, field,
				"attribute names starting with %q are reserved for tagq's SQS endpoint (its data types and trace headers)",
				SQSAttributePrefix)
		}
		if !attrNameRE.MatchString(name) {
			return 0, invalid(ReasonInvalidAttribute, field,
				"attribute names must be 1-256 characters of A-Z a-z 0-9 _ . -, got %q", echo(name))
		}
		if a.Binary && a.Bytes == nil {
			return 0, invalid(ReasonInvalidAttribute, field,
				"attribute %q has no value: set string_value or binary_value", echo(name))
		}
		if a.Binary {
			size += len(name) + len(a.Bytes)
		} else {
			if !utf8.ValidString(a.String) {
				return 0, invalid(ReasonInvalidAttribute, field, "string attribute values must be UTF-8")
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
		return invalid(ReasonInvalidFilter, "filter.conditions", "a filter has 1-%d conditions, got %d",
			MaxFilterConditions, len(f.Conditions))
	}
	for _, c := range f.Conditions {
		if !attrNameRE.MatchString(c.Name) {
			return invalid(ReasonInvalidFilter, "filter.conditions.name",
				"condition attribute name must be 1-256 characters of A-Z a-z 0-9 _ . -, got %q", echo(c.Name))
		}
	}
	return nil
}

// checkDeduplicationID validates a send's deduplication id (nil: none).
// checkTopic checks a message's topic against the queue (topicQueue:
// whether it is a topic queue, S13): required there, refused elsewhere.
func checkTopic(topic string, topicQueue bool) *Error {
	if topic == "" {
		if topicQueue {
			return invalid(ReasonInvalidArgumentRange, "topic", "a message sent to a topic queue needs a topic")
		}
		return nil
	}
	if !topicQueue {
		return invalid(ReasonInvalidArgumentRange, "topic", "topic is for topic queues only; this queue is not one")
	}
	ok := len(topic) <= MaxTopicLen
	for i := 0; ok && i < len(topic); i++ {
		c := topic[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-'
	}
	if !ok {
		return invalid(ReasonInvalidArgumentRange, "topic", "topic must be 1-%d characters of [A-Za-z0-9_.:-], got %q",
			MaxTopicLen, echo(topic))
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

// checkPriority checks a message's priority (0: none) against the queue
// (priorityQueue: whether it is a priority queue).
func checkPriority(p int32, priorityQueue bool) *Error {
	if p == 0 {
		return nil
	}
	if !priorityQueue {
		return invalid(ReasonInvalidArgumentRange, "priority",
			"priority is for priority queues only; this queue is not one (send 0 or none)")
	}
	if p < 1 || p > MaxPriority {
		return invalid(ReasonInvalidArgumentRange, "priority", "priority must be 1-%d (1 highest), got %d", MaxPriority, p)
	}
	return nil
}

// MaxTopicLen is the longest topic (S13).
const MaxTopicLen = 128

func checkDeduplicationID(p *string) *Error {
	if p == nil {
		return nil
	}
	id := *p
	ok := id != "" && len(id) <= MaxDeduplicationIDLen
	for i := 0; ok && i < len(id); i++ {
		ok = id[i] >= '!' && id[i] <= '~'
	}
	if !ok {
		return invalid(ReasonInvalidArgumentRange, "deduplication_id",
			"deduplication_id must be 1-%d characters of printable ASCII ('!' to '~'), got %q", MaxDeduplicationIDLen, echo(id))
	}
	return nil
}
