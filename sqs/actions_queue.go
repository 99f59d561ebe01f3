package sqs

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Queue actions: CreateQueue, DeleteQueue, GetQueueUrl, ListQueues,
// GetQueueAttributes, SetQueueAttributes, PurgeQueue, TagQueue,
// UntagQueue, ListQueueTags, ListDeadLetterSourceQueues.

// target reads the request's QueueUrl. A URL whose .fifo suffix says
// otherwise than its queue (remembered: defaultTags) names no queue, to a
// caller with a permission on the queue; to another, the action's own
// call answers (it needs a permission it does not have), so that the
// check tells no stranger a queue exists.
func (h *Handler) target(c *call, r *request) (target, error) {
	if r.QueueURL == "" {
		return target{}, missing("QueueUrl")
	}
	t, err := h.parseURL("QueueUrl", r.QueueURL)
	if err != nil {
		return t, err
	}
	q, err := h.defaults.get(c.ctx, t.queue)
	if err != nil || q.fifo == t.fifo {
		return t, nil // a queue not found is the action's call's to answer
	}
	if known, err := h.mayKnow(c, t); err != nil || known {
		return target{}, queueNotFound(t.sqsName())
	}
	return t, nil
}

// mayKnow reports whether c's principal may learn that t exists and
// whether it is FIFO: any permission but NONE on its queue (when that
// permission names tags, a tag's URL must be one of them). With
// authentication off, anyone may.
func (h *Handler) mayKnow(c *call, t target) (bool, error) {
	if h.acc == nil {
		return true, nil
	}
	snap, err := h.acc.Current(c.ctx)
	if err != nil {
		return false, err
	}
	perm, tagsOnly, _ := snap.Effective(snap.Principal(c.principal), t.queue)
	if perm == access.None {
		return false, nil
	}
	return t.tag == "" || tagsOnly == nil || slices.Contains(tagsOnly, t.tag), nil
}

func (h *Handler) createQueue(c *call, r *request) (any, error) {
	if r.QueueName == "" {
		return nil, missing("QueueName")
	}
	t, err := parseName("QueueName", r.QueueName)
	if err != nil {
		return nil, err
	}
	if t.tag != "" {
		return h.createTag(c, t, r)
	}
	s, err := h.parseQueueAttributes(r.Attributes, true)
	if err != nil {
		return nil, err
	}
	if s.fifo != nil && *s.fifo != t.fifo || s.fifo == nil && t.fifo {
		return nil, invalidValue("QueueName", clip(r.QueueName),
			"a FIFO queue's name ends in .fifo and it is created with the attribute FifoQueue=true; only a FIFO queue's name ends in .fifo")
	}
	s.q.Name, s.q.TopicQueue = t.queue, t.fifo
	s.q.UserAttributes = r.CreateTags
	if _, err := h.q.CreateQueue(c.ctx, &tagqv1.CreateQueueRequest{Queue: &s.q}); err != nil {
		if e := fromStatus(err); e.Type != "QueueNameExists" {
			return nil, err
		}
		// As SQS: an existing queue with the same attributes is the answer.
		got, gerr := h.q.GetQueue(c.ctx, &tagqv1.GetQueueRequest{Name: t.queue})
		if gerr != nil {
			return nil, gerr
		}
		if diff := sameQueue(s, got.GetQueue(), t.fifo); diff != "" {
			return nil, errQueueNameExists("A queue already exists with the same name and a different value for attribute %s", diff)
		}
	}
	return queueURLResult{QueueURL: h.queueURL(c.base, t)}, nil
}

// sameQueue names the first attribute that s sets otherwise than q has
// it ("" when none does).
func sameQueue(s *queueSettings, q *tagqv1.Queue, fifo bool) string {
	if q.GetTopicQueue() != fifo {
		return "FifoQueue"
	}
	for _, p := range s.paths {
		want, have := &s.q, q
		same := true
		switch p {
		case "delay_seconds":
			same = want.GetDelaySeconds() == have.GetDelaySeconds()
		case "visibility_timeout_seconds":
			same = want.GetVisibilityTimeoutSeconds() == have.GetVisibilityTimeoutSeconds()
		case "receive_wait_seconds":
			same = want.GetReceiveWaitSeconds() == have.GetReceiveWaitSeconds()
		case "message_retention_seconds":
			same = want.GetMessageRetentionSeconds() == have.GetMessageRetentionSeconds()
		case "max_message_bytes":
			same = want.GetMaxMessageBytes() == have.GetMaxMessageBytes()
		case "redrive_policy":
			same = want.GetRedrivePolicy().GetDeadLetterQueue() == have.GetRedrivePolicy().GetDeadLetterQueue() &&
				want.GetRedrivePolicy().GetMaxReceiveCount() == have.GetRedrivePolicy().GetMaxReceiveCount()
		case "dead_letter_queue":
			same = want.GetDeadLetterQueue() == have.GetDeadLetterQueue()
		case "content_based_deduplication":
			same = want.GetContentBasedDeduplication() == have.GetContentBasedDeduplication()
		}
		if !same {
			return sqsAttributeOf[p]
		}
	}
	return ""
}

// sqsAttributeOf names the SQS attribute of a tagq queue field.
var sqsAttributeOf = map[string]string{
	"delay_seconds": "DelaySeconds", "visibility_timeout_seconds": "VisibilityTimeout",
	"receive_wait_seconds": "ReceiveMessageWaitTimeSeconds", "message_retention_seconds": "MessageRetentionPeriod",
	"max_message_bytes": "MaximumMessageSize", "redrive_policy": "RedrivePolicy", "dead_letter_queue": "RedriveAllowPolicy",
	"content_based_deduplication": "ContentBasedDeduplication",
}

// createTag is CreateQueue of a tag's name: CreateTag, reading from now
// on, with VisibilityTimeout (the tag's own) as its only attribute and the
// SQS tags as its user attributes. Existing with the same visibility
// timeout, it is the answer.
func (h *Handler) createTag(c *call, t target, r *request) (any, error) {
	tag := &tagqv1.Tag{Name: t.tag, UserAttributes: r.CreateTags}
	for name, v := range r.Attributes {
		switch name {
		case "VisibilityTimeout":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 0 || n > 43200 {
				return nil, errInvalidAttrValue("Invalid value for the parameter VisibilityTimeout: an integer from 0 to 43200")
			}
			vt := int32(n)
			tag.VisibilityTimeoutSeconds = &vt
		case "FifoQueue":
			if v != strconv.FormatBool(t.fifo) {
				return nil, invalidValue("QueueName", clip(r.QueueName), "a tag of a FIFO queue has a name ending in .fifo, FifoQueue=true")
			}
		default:
			return nil, errInvalidAttributeName("Attribute %s belongs to the queue: a tag's URL is created with VisibilityTimeout only.", clip(name))
		}
	}
	if err := h.checkFifo(c, t); err != nil {
		return nil, err
	}
	if _, err := h.q.CreateTag(c.ctx, &tagqv1.CreateTagRequest{Queue: t.queue, Tag: tag}); err != nil {
		if e := fromStatus(err); e.Type != "QueueNameExists" {
			return nil, err
		}
		got, gerr := h.q.GetTag(c.ctx, &tagqv1.GetTagRequest{Queue: t.queue, Name: t.tag})
		if gerr != nil {
			return nil, gerr
		}
		if tag.VisibilityTimeoutSeconds != nil && got.GetTag().VisibilityTimeoutSeconds != nil &&
			got.GetTag().GetVisibilityTimeoutSeconds() != tag.GetVisibilityTimeoutSeconds() ||
			(tag.VisibilityTimeoutSeconds == nil) != (got.GetTag().VisibilityTimeoutSeconds == nil) {
			return nil, errQueueNameExists("A queue already exists with the same name and a different value for attribute VisibilityTimeout")
		}
	}
	return queueURLResult{QueueURL: h.queueURL(c.base, t)}, nil
}

// checkFifo: a name's .fifo suffix says whether its queue is a topic
// queue; a name that says otherwise names no queue.
func (h *Handler) checkFifo(c *call, t target) error {
	q, err := h.q.GetQueue(c.ctx, &tagqv1.GetQueueRequest{Name: t.queue})
	if err != nil {
		return err
	}
	if q.GetQueue().GetTopicQueue() != t.fifo {
		return queueNotFound(t.sqsName())
	}
	return nil
}

func (h *Handler) deleteQueue(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	if t.tag != "" {
		_, err = h.q.DeleteTag(c.ctx, &tagqv1.DeleteTagRequest{Queue: t.queue, Name: t.tag})
		return nil, err
	}
	// As SQS, a dead-letter queue is deleted even while sources name it:
	// their redrive policies go with it.
	_, err = h.q.DeleteQueue(c.ctx, &tagqv1.DeleteQueueRequest{Name: t.queue, Force: true})
	return nil, err
}

func (h *Handler) getQueueURL(c *call, r *request) (any, error) {
	if r.QueueName == "" {
		return nil, missing("QueueName")
	}
	if a := r.QueueOwnerAWSAccountID; a != "" && a != h.account {
		return nil, queueNotFound(r.QueueName)
	}
	t, err := parseName("QueueName", r.QueueName)
	if err != nil {
		return nil, err
	}
	// Any permission on the queue will do (producers call GetQueueUrl
	// first: boto3's get_queue_by_name, Celery, JMS): it tells only that
	// the queue exists and whether it is FIFO, so it reads the engine
	// itself rather than GetQueue, which needs GET_QUEUE_INFO.
	if known, err := h.mayKnow(c, t); err != nil {
		return nil, err
	} else if !known {
		return nil, errAccessDenied("GetQueueUrl of %s needs a permission on queue %s (any but NONE; on a tag's URL, one that may "+
			"name the tag)", t.sqsName(), t.queue)
	}
	q, err := h.engine.GetQueue(c.ctx, t.queue)
	if err != nil {
		return nil, err
	}
	if q.TopicQueue != t.fifo {
		return nil, queueNotFound(t.sqsName())
	}
	if t.tag != "" {
		if _, err := h.engine.GetTag(c.ctx, t.queue, t.tag); err != nil {
			return nil, err
		}
	}
	return queueURLResult{QueueURL: h.queueURL(c.base, t)}, nil
}

// maxListResults is ListQueues' and ListDeadLetterSourceQueues'
// MaxResults limit, and what ListQueues answers without one.
const maxListResults = 1000

// listQueues lists queue URLs by SQS name prefix. A prefix holding the tag
// separator (orders~, orders~bi) lists that queue's tags instead. Without
// MaxResults it answers up to 1,000 and no NextToken, as SQS does.
func (h *Handler) listQueues(c *call, r *request) (any, error) {
	max, paged := int32(maxListResults), r.MaxResults != nil
	if paged {
		if max = *r.MaxResults; max < 1 || max > maxListResults {
			return nil, invalidValue("MaxResults", strconv.Itoa(int(max)), "must be between 1 and 1000")
		}
	}
	if r.NextToken != "" && !paged {
		return nil, invalidValue("NextToken", "", "NextToken is given with MaxResults")
	}
	prefix := r.QueueNamePrefix
	if q, tagPrefix, ok := strings.Cut(prefix, TagSeparator); ok {
		return h.listTagURLs(c, q, tagPrefix, max, r.NextToken)
	}
	// tagq names have no dot: "orders.f" lists "orders" when it is FIFO.
	tagqPrefix, _, _ := strings.Cut(prefix, ".")
	out := listQueuesResult{}
	token := r.NextToken
	for {
		res, err := h.q.ListQueues(c.ctx, &tagqv1.ListQueuesRequest{Prefix: tagqPrefix, PageSize: max - int32(len(out.QueueURLs)), PageToken: token})
		if err != nil {
			return nil, err
		}
		for _, q := range res.GetQueues() {
			t := target{queue: q.GetName(), fifo: q.GetTopicQueue()}
			if strings.HasPrefix(t.sqsName(), prefix) {
				out.QueueURLs = append(out.QueueURLs, h.queueURL(c.base, t))
			}
		}
		token = res.GetNextPageToken()
		if token == "" || int32(len(out.QueueURLs)) >= max {
			break
		}
		if paged { // a short page, and the token to go on from
			break
		}
	}
	if paged {
		out.NextToken = token
	}
	return out, nil
}

// listTagURLs lists the URLs of a queue's tags whose names start with
// tagPrefix.
func (h *Handler) listTagURLs(c *call, queue, tagPrefix string, max int32, token string) (any, error) {
	qt, err := parseName("QueueNamePrefix", queue)
	if err != nil {
		return nil, err
	}
	q, err := h.q.GetQueue(c.ctx, &tagqv1.GetQueueRequest{Name: qt.queue})
	if err != nil {
		return nil, err
	}
	tagPrefix, _ = strings.CutSuffix(tagPrefix, fifoSuffix)
	out := listQueuesResult{}
	res, err := h.q.ListTags(c.ctx, &tagqv1.ListTagsRequest{Queue: qt.queue, PageSize: max, PageToken: token})
	if err != nil {
		return nil, err
	}
	for _, tag := range res.GetTags() {
		if strings.HasPrefix(tag.GetName(), tagPrefix) {
			out.QueueURLs = append(out.QueueURLs, h.queueURL(c.base, target{queue: qt.queue, tag: tag.GetName(), fifo: q.GetQueue().GetTopicQueue()}))
		}
	}
	out.NextToken = res.GetNextPageToken()
	return out, nil
}

func (h *Handler) getQueueAttributes(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	for _, n := range r.AttributeNames { // before any call: an unknown name is the answer
		if !queueAttributeNames[n] {
			return nil, errInvalidAttributeName("Unknown Attribute %s.", clip(n))
		}
	}
	q, err := h.q.GetQueue(c.ctx, &tagqv1.GetQueueRequest{Name: t.queue})
	if err != nil {
		return nil, err
	}
	if q.GetQueue().GetTopicQueue() != t.fifo {
		return nil, queueNotFound(t.sqsName())
	}
	var tag *tagqv1.Tag
	if t.tag != "" {
		tr, err := h.q.GetTag(c.ctx, &tagqv1.GetTagRequest{Queue: t.queue, Name: t.tag})
		if err != nil {
			return nil, err
		}
		tag = tr.GetTag()
	}
	attrs, err := selectQueueAttributes(h.queueAttributes(c, t, q.GetQueue(), tag), r.AttributeNames)
	if err != nil {
		return nil, err
	}
	return attributesResult{Attributes: attrs}, nil
}

func (h *Handler) setQueueAttributes(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	if r.Attributes == nil {
		return nil, missing("Attributes")
	}
	if t.tag != "" {
		return nil, invalidValue("QueueUrl", clip(r.QueueURL),
			"a tag's attributes are fixed when it is created; set the queue's attributes on the queue's URL")
	}
	s, err := h.parseQueueAttributes(r.Attributes, false)
	if err != nil {
		return nil, err
	}
	q, err := h.q.GetQueue(c.ctx, &tagqv1.GetQueueRequest{Name: t.queue})
	if err != nil {
		return nil, err
	}
	if q.GetQueue().GetTopicQueue() != t.fifo {
		return nil, queueNotFound(t.sqsName())
	}
	if s.fifo != nil && *s.fifo != t.fifo {
		return nil, errInvalidAttrValue("Invalid value for the parameter FifoQueue: a queue's type is fixed at creation")
	}
	paths := s.paths[:0:0]
	for _, p := range s.paths {
		if p == "dead_letter_queue" { // fixed at creation in tagq: only its present value is taken
			if s.q.GetDeadLetterQueue() != q.GetQueue().GetDeadLetterQueue() {
				return nil, errInvalidAttrValue("Invalid value for the parameter RedriveAllowPolicy: " +
					"whether a queue is a dead-letter queue is fixed when tagq creates it (CreateQueue with RedriveAllowPolicy allowAll)")
			}
			continue
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return nil, nil
	}
	s.q.Name = t.queue
	_, err = h.q.UpdateQueue(c.ctx, &tagqv1.UpdateQueueRequest{Queue: &s.q, UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}})
	return nil, err
}

func (h *Handler) purgeQueue(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	if t.tag != "" {
		return nil, errUnsupported("purging one tag is not supported: PurgeQueue on the queue's URL empties the queue for every tag")
	}
	_, err = h.q.PurgeQueue(c.ctx, &tagqv1.PurgeQueueRequest{Name: t.queue})
	return nil, err
}

// SQS's queue tags (labels) are tagq's user attributes: the queue's, or
// on a tag's URL the tag's (fixed when the tag is made).

func (h *Handler) listQueueTags(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	if t.tag != "" {
		tr, err := h.q.GetTag(c.ctx, &tagqv1.GetTagRequest{Queue: t.queue, Name: t.tag})
		if err != nil {
			return nil, err
		}
		return tagsResult{Tags: tr.GetTag().GetUserAttributes()}, nil
	}
	q, err := h.q.GetQueue(c.ctx, &tagqv1.GetQueueRequest{Name: t.queue})
	if err != nil {
		return nil, err
	}
	return tagsResult{Tags: q.GetQueue().GetUserAttributes()}, nil
}

func (h *Handler) tagQueue(c *call, r *request) (any, error) {
	if len(r.Tags) == 0 {
		return nil, missing("Tags")
	}
	return nil, h.relabel(c, r, func(m map[string]string) {
		for k, v := range r.Tags {
			m[k] = v
		}
	})
}

func (h *Handler) untagQueue(c *call, r *request) (any, error) {
	if len(r.TagKeys) == 0 {
		return nil, missing("TagKeys")
	}
	return nil, h.relabel(c, r, func(m map[string]string) {
		for _, k := range r.TagKeys {
			delete(m, k)
		}
	})
}

// relabel changes a queue's user attributes (read, change, write back).
func (h *Handler) relabel(c *call, r *request, change func(map[string]string)) error {
	t, err := h.target(c, r)
	if err != nil {
		return err
	}
	if t.tag != "" {
		return errUnsupported("a tag's labels are fixed when it is created (CreateQueue of its name with tags)")
	}
	q, err := h.q.GetQueue(c.ctx, &tagqv1.GetQueueRequest{Name: t.queue})
	if err != nil {
		return err
	}
	m := map[string]string{}
	for k, v := range q.GetQueue().GetUserAttributes() {
		m[k] = v
	}
	change(m)
	_, err = h.q.UpdateQueue(c.ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: t.queue, UserAttributes: m},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"user_attributes"}}})
	return err
}

// listDeadLetterSourceQueues lists the queues whose redrive policy names
// the queue, paged by an offset token.
func (h *Handler) listDeadLetterSourceQueues(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	max := int32(maxListResults)
	if r.MaxResults != nil {
		if max = *r.MaxResults; max < 1 || max > maxListResults {
			return nil, invalidValue("MaxResults", strconv.Itoa(int(max)), "must be between 1 and 1000")
		}
	}
	from := 0
	if r.NextToken != "" {
		raw, derr := base64.RawURLEncoding.DecodeString(r.NextToken)
		n, perr := strconv.Atoi(string(raw))
		if derr != nil || perr != nil || n < 0 {
			return nil, invalidValue("NextToken", "", "not a token this endpoint gave")
		}
		from = n
	}
	q, err := h.q.GetQueue(c.ctx, &tagqv1.GetQueueRequest{Name: t.queue})
	if err != nil {
		return nil, err
	}
	out := sourceQueuesResult{QueueURLs: []string{}}
	sources := q.GetQueue().GetSourceQueues()
	for i := from; i < len(sources) && int32(len(out.QueueURLs)) < max; i++ {
		out.QueueURLs = append(out.QueueURLs, h.queueURL(c.base, target{queue: sources[i], fifo: q.GetQueue().GetTopicQueue()}))
		if i+1 < len(sources) && int32(len(out.QueueURLs)) == max && r.MaxResults != nil {
			out.NextToken = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(i + 1)))
		}
	}
	return out, nil
}
