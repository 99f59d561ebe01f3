package sqs

import (
	"encoding/json"
	"strconv"
	"strings"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// Queue attributes: SQS's names onto tagq's queue fields.
//
//	DelaySeconds                   delay_seconds
//	VisibilityTimeout              visibility_timeout_seconds (a tag's URL: the tag's, else the queue's)
//	ReceiveMessageWaitTimeSeconds  receive_wait_seconds
//	MessageRetentionPeriod         message_retention_seconds
//	MaximumMessageSize             max_message_bytes
//	RedrivePolicy                  redrive_policy (fires per tag)
//	RedriveAllowPolicy             dead_letter_queue: allowAll makes a dead-letter queue, denyAll a queue that is none
//	FifoQueue                      topic_queue (fixed at creation; the name ends in .fifo)
//	ContentBasedDeduplication      content_based_deduplication
//	ApproximateNumberOfMessages…   the tag's state: available, in_flight (NotVisible), delayed (Delayed)
//	CreatedTimestamp, LastModifiedTimestamp, QueueArn
//
// SQS attributes tagq cannot honour are refused when set to anything but
// what tagq does (SqsManagedSseEnabled=false, DeduplicationScope=queue,
// FifoThroughputLimit=perQueue; Policy and KMS not at all).

// queueAttributeNames are the names GetQueueAttributes takes ("All" and
// SQS's queue attribute names).
var queueAttributeNames = map[string]bool{
	"All": true, "Policy": true, "VisibilityTimeout": true, "MaximumMessageSize": true, "MessageRetentionPeriod": true,
	"ApproximateNumberOfMessages": true, "ApproximateNumberOfMessagesNotVisible": true, "CreatedTimestamp": true,
	"LastModifiedTimestamp": true, "QueueArn": true, "ApproximateNumberOfMessagesDelayed": true, "DelaySeconds": true,
	"ReceiveMessageWaitTimeSeconds": true, "RedrivePolicy": true, "FifoQueue": true, "ContentBasedDeduplication": true,
	"KmsMasterKeyId": true, "KmsDataKeyReusePeriodSeconds": true, "DeduplicationScope": true, "FifoThroughputLimit": true,
	"RedriveAllowPolicy": true, "SqsManagedSseEnabled": true,
}

// redrivePolicy is RedrivePolicy's JSON. maxReceiveCount comes as a
// string or a number.
type redrivePolicy struct {
	DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
	MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
}

// redriveAllowPolicy is RedriveAllowPolicy's JSON.
type redriveAllowPolicy struct {
	RedrivePermission string   `json:"redrivePermission"`
	SourceQueueArns   []string `json:"sourceQueueArns,omitempty"`
}

// queueSettings is what a request's Attributes set on a queue: the
// fields and their update_mask paths.
type queueSettings struct {
	q     tagqv1.Queue
	paths []string
	fifo  *bool // FifoQueue, when given
}

// parseQueueAttributes reads CreateQueue's or SetQueueAttributes' Attributes
// (creating: whether it is CreateQueue; SetQueueAttributes may remove
// the redrive policy with an empty RedrivePolicy).
func (h *Handler) parseQueueAttributes(attrs map[string]string, creating bool) (*queueSettings, error) {
	s := &queueSettings{}
	for _, name := range sortedKeys(attrs) {
		v := attrs[name]
		bad := func(why string) error {
			return errInvalidAttrValue("Invalid value for the parameter %s: %s", name, why)
		}
		intIn := func(lo, hi int32, path string, field **int32) error {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < int64(lo) || n > int64(hi) {
				return bad("an integer from " + strconv.Itoa(int(lo)) + " to " + strconv.Itoa(int(hi)))
			}
			i := int32(n)
			*field = &i
			s.paths = append(s.paths, path)
			return nil
		}
		boolOf := func() (bool, error) {
			switch v {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
			return false, bad("true or false")
		}
		var err error
		switch name {
		case "DelaySeconds":
			err = intIn(0, tags.MaxDelaySeconds, "delay_seconds", &s.q.DelaySeconds)
		case "VisibilityTimeout":
			err = intIn(0, tags.MaxVisibilitySeconds, "visibility_timeout_seconds", &s.q.VisibilityTimeoutSeconds)
		case "ReceiveMessageWaitTimeSeconds":
			err = intIn(0, tags.MaxWaitSeconds, "receive_wait_seconds", &s.q.ReceiveWaitSeconds)
		case "MessageRetentionPeriod":
			err = intIn(tags.MinRetentionSeconds, tags.MaxRetentionSeconds, "message_retention_seconds", &s.q.MessageRetentionSeconds)
		case "MaximumMessageSize":
			err = intIn(tags.MinMaxMessageBytes, tags.MaxMaxMessageBytes, "max_message_bytes", &s.q.MaxMessageBytes)
		case "RedrivePolicy":
			s.paths = append(s.paths, "redrive_policy")
			if v == "" && !creating {
				continue // removes the policy
			}
			s.q.RedrivePolicy, err = h.parseRedrivePolicy(v)
		case "RedriveAllowPolicy":
			var p redriveAllowPolicy
			if json.Unmarshal([]byte(v), &p) != nil {
				err = bad(`a JSON object such as {"redrivePermission":"allowAll"}`)
				break
			}
			switch p.RedrivePermission {
			case "allowAll":
				s.q.DeadLetterQueue = true
			case "denyAll":
			case "byQueue":
				err = bad("byQueue is not supported: a tagq dead-letter queue takes any source queue (allowAll), or none (denyAll)")
			default:
				err = bad("redrivePermission is allowAll or denyAll")
			}
			s.paths = append(s.paths, "dead_letter_queue")
		case "FifoQueue":
			var b bool
			b, err = boolOf()
			s.fifo = &b
		case "ContentBasedDeduplication":
			s.q.ContentBasedDeduplication, err = boolOf()
			s.paths = append(s.paths, "content_based_deduplication")
		case "DeduplicationScope":
			if v != "queue" {
				err = bad("tagq deduplicates per queue (queue); messageGroup is not supported")
			}
		case "FifoThroughputLimit":
			if v != "perQueue" {
				err = bad("perQueue is the only value tagq supports")
			}
		case "SqsManagedSseEnabled":
			if v != "false" {
				err = bad("tagq does not encrypt messages at rest (use Redis's own means); only false is taken")
			}
		case "Policy", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds":
			if v != "" {
				err = bad("not supported: tagq's own permissions (tagq access) replace SQS policies, and it has no KMS")
			}
		default:
			if queueAttributeNames[name] {
				err = errInvalidAttributeName("Attribute %s is read-only.", name)
			} else {
				err = errInvalidAttributeName("Unknown Attribute %s.", clip(name))
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parseRedrivePolicy reads RedrivePolicy's JSON.
func (h *Handler) parseRedrivePolicy(v string) (*tagqv1.RedrivePolicy, error) {
	bad := func(why string) error {
		return errInvalidAttrValue("Invalid value for the parameter RedrivePolicy. Reason: %s", why)
	}
	var p redrivePolicy
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return nil, bad(`a JSON object {"deadLetterTargetArn":"arn:aws:sqs:<region>:<account>:<queue>","maxReceiveCount":"5"}`)
	}
	if p.DeadLetterTargetArn == "" || len(p.MaxReceiveCount) == 0 {
		return nil, bad("Redrive policy requires both deadLetterTargetArn and maxReceiveCount")
	}
	t, err := h.parseARN("RedrivePolicy.deadLetterTargetArn", p.DeadLetterTargetArn)
	if err != nil {
		return nil, err
	}
	if t.tag != "" {
		return nil, bad("the dead-letter queue is a queue, not one of its tags")
	}
	raw := strings.Trim(string(p.MaxReceiveCount), `"`)
	n, perr := strconv.ParseInt(raw, 10, 32)
	if perr != nil || n < 1 || n > tags.MaxMaxReceiveCount {
		return nil, bad("maxReceiveCount is an integer from 1 to 1000")
	}
	return &tagqv1.RedrivePolicy{DeadLetterQueue: t.queue, MaxReceiveCount: int32(n)}, nil
}

// queueAttributes are a queue's attributes (or, with tag set, a tag's) as
// SQS names them; t is the name they were asked by.
func (h *Handler) queueAttributes(c *call, t target, q *tagqv1.Queue, tag *tagqv1.Tag) attrMap {
	secs := func(v int32) string { return strconv.Itoa(int(v)) }
	out := attrMap{
		"DelaySeconds":                  secs(q.GetDelaySeconds()),
		"MaximumMessageSize":            secs(q.GetMaxMessageBytes()),
		"MessageRetentionPeriod":        secs(q.GetMessageRetentionSeconds()),
		"ReceiveMessageWaitTimeSeconds": secs(q.GetReceiveWaitSeconds()),
		"VisibilityTimeout":             secs(q.GetVisibilityTimeoutSeconds()),
		"QueueArn":                      h.arn(c.region, t),
		"CreatedTimestamp":              strconv.FormatInt(q.GetCreateTime().GetSeconds(), 10),
		"LastModifiedTimestamp":         strconv.FormatInt(q.GetUpdateTime().GetSeconds(), 10),
		"SqsManagedSseEnabled":          "false",
	}
	state := q.GetState().GetDefaultTag()
	if tag != nil {
		state = tag.GetState()
		if tag.VisibilityTimeoutSeconds != nil {
			out["VisibilityTimeout"] = secs(tag.GetVisibilityTimeoutSeconds())
		}
		if ct := tag.GetCreateTime().GetSeconds(); ct > q.GetCreateTime().GetSeconds() {
			out["CreatedTimestamp"] = strconv.FormatInt(ct, 10)
		}
	}
	if state != nil {
		out["ApproximateNumberOfMessages"] = strconv.FormatInt(state.GetAvailable(), 10)
		out["ApproximateNumberOfMessagesNotVisible"] = strconv.FormatInt(state.GetInFlight(), 10)
		out["ApproximateNumberOfMessagesDelayed"] = strconv.FormatInt(state.GetDelayed(), 10)
	} else { // a queue without a default tag: what it retains
		out["ApproximateNumberOfMessages"] = strconv.FormatInt(q.GetState().GetRetainedMessages(), 10)
		out["ApproximateNumberOfMessagesNotVisible"] = "0"
		out["ApproximateNumberOfMessagesDelayed"] = "0"
	}
	if p := q.GetRedrivePolicy(); p != nil {
		b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": h.arn(c.region, target{queue: p.GetDeadLetterQueue(), fifo: q.GetTopicQueue()}),
			"maxReceiveCount": p.GetMaxReceiveCount()})
		out["RedrivePolicy"] = string(b)
	}
	perm := "denyAll"
	if q.GetDeadLetterQueue() {
		perm = "allowAll"
	}
	b, _ := json.Marshal(redriveAllowPolicy{RedrivePermission: perm})
	out["RedriveAllowPolicy"] = string(b)
	if q.GetTopicQueue() {
		out["FifoQueue"] = "true"
		out["DeduplicationScope"] = "queue"
		out["FifoThroughputLimit"] = "perQueue"
	}
	if q.GetTopicQueue() || q.GetContentBasedDeduplication() {
		out["ContentBasedDeduplication"] = strconv.FormatBool(q.GetContentBasedDeduplication())
	}
	return out
}

// selectQueueAttributes keeps the names asked for (none when none are).
func selectQueueAttributes(all attrMap, names []string) (attrMap, error) {
	out := attrMap{}
	for _, n := range names {
		if !queueAttributeNames[n] {
			return nil, errInvalidAttributeName("Unknown Attribute %s.", clip(n))
		}
		if n == "All" {
			return all, nil
		}
		if v, ok := all[n]; ok {
			out[n] = v
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
