package sqs

import (
	"regexp"
	"strconv"
	"time"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// Message actions: SendMessage(Batch), ReceiveMessage,
// DeleteMessage(Batch), ChangeMessageVisibility(Batch). A send to any of a
// queue's URLs stores the message once, for every tag; a receive on a
// tag's URL reads that tag, and a receipt handle is taken only on the URL
// of the tag it was received on.

// SQS's limits, which the endpoint keeps (tagq's own are wider).
const (
	maxBatchEntries = 10
	maxBatchBytes   = 1 << 20 // bodies and attributes of a SendMessageBatch
	maxReceive      = 10
	maxWaitSeconds  = 20
	maxVisibility   = 43200
	maxDelaySeconds = 900
)

var (
	batchIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	groupIDRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)
)

// outMessage is a message to send, checked, as tagq's batch entry.
type outMessage struct {
	entry   *tagqv1.SendMessageBatchEntry
	result  sendResult // its checksums
	payload int        // body and attribute bytes
}

// checkMessage validates one message to send to t (param prefixes the
// parameter names in errors: "" or "SendMessageBatchRequestEntry.N.").
func checkMessage(t target, param string, m *message) (*outMessage, *Error) {
	if e := checkBody(param+"MessageBody", m.MessageBody); e != nil {
		return nil, e
	}
	out := &tagqv1.SendMessageBatchEntry{Body: []byte(*m.MessageBody)}
	if d := m.DelaySeconds; d != nil {
		if *d < 0 || *d > maxDelaySeconds {
			return nil, invalidValue(param+"DelaySeconds", strconv.Itoa(int(*d)), "must be between 0 and 900")
		}
		if t.fifo && *d != 0 {
			return nil, invalidValue(param+"DelaySeconds", strconv.Itoa(int(*d)),
				"The request include parameter that is not valid for this queue type: a FIFO queue's delay is the queue's")
		}
		if !t.fifo {
			out.DelaySeconds = d
		}
	}
	attrs, e := toTagqAttributes(param, m.MessageAttributes, m.MessageSystemAttributes)
	if e != nil {
		return nil, e
	}
	out.Attributes = attrs
	if id := m.MessageDeduplicationID; id != nil {
		if !validDedupID(*id) {
			return nil, invalidValue(param+"MessageDeduplicationId", clip(*id), "1-128 characters of A-Z a-z 0-9 and punctuation")
		}
		out.DeduplicationId = id
	}
	switch g := m.MessageGroupID; {
	case t.fifo && g == nil:
		return nil, missing(param + "MessageGroupId")
	case !t.fifo && g != nil:
		return nil, invalidValue(param+"MessageGroupId", clip(*g), "MessageGroupId is for FIFO queues (tagq's topic queues) only")
	case g != nil && !groupIDRE.MatchString(*g):
		return nil, invalidValue(param+"MessageGroupId", clip(*g),
			"tagq's topics are 1-128 characters of A-Z a-z 0-9 _ . : - (a narrower set than SQS's group ids)")
	case g != nil:
		out.Topic = *g
	}
	res := sendResult{MD5OfMessageBody: md5Hex(out.Body), MD5OfMessageAttributes: md5OfAttributes(m.MessageAttributes),
		MD5OfMessageSystemAttributes: md5OfAttributes(m.MessageSystemAttributes)}
	size := len(out.Body)
	for n, a := range out.Attributes {
		size += len(n) + len(a.GetStringValue()) + len(a.GetBinaryValue())
	}
	return &outMessage{entry: out, result: res, payload: size}, nil
}

func validDedupID(s string) bool {
	if len(s) < 1 || len(s) > tags.MaxDeduplicationIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}

func (h *Handler) sendMessage(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	m, e := checkMessage(t, "", &r.message)
	if e != nil {
		return nil, e
	}
	en := m.entry
	res, err := h.m.SendMessage(c.ctx, &tagqv1.SendMessageRequest{Queue: t.queue, Body: en.Body, Attributes: en.Attributes,
		DelaySeconds: en.DelaySeconds, DeduplicationId: en.DeduplicationId, Topic: en.Topic})
	if err != nil {
		return nil, err
	}
	out := m.result
	out.MessageID = res.GetMessageId()
	if t.fifo {
		out.SequenceNumber = sequenceNumber(out.MessageID)
	}
	return out, nil
}

// checkEntries applies SQS's rules for a batch's entries: 1-10 of them,
// with distinct ids of 1-80 characters of A-Z a-z 0-9 _ -.
func checkEntries(entries []entry) error {
	if len(entries) == 0 {
		return errEmptyBatch("There should be at least one entry in the request.")
	}
	if len(entries) > maxBatchEntries {
		return errTooManyEntries("Maximum number of entries per request are 10. You have sent %d.", len(entries))
	}
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if !batchIDRE.MatchString(e.ID) {
			return errBadBatchID("A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long: %q", clip(e.ID))
		}
		if seen[e.ID] {
			return errIdsNotDistinct("Id %s repeated.", e.ID)
		}
		seen[e.ID] = true
	}
	return nil
}

func (h *Handler) sendMessageBatch(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	if err := checkEntries(r.Entries); err != nil {
		return nil, err
	}
	out := sendBatchResult{Successful: []sendEntryResult{}, Failed: []entryError{}}
	checked := map[string]*outMessage{}
	var entries []*tagqv1.SendMessageBatchEntry
	total := 0
	for i := range r.Entries {
		e := &r.Entries[i]
		m, err := checkMessage(t, "SendMessageBatchRequestEntry."+strconv.Itoa(i+1)+".", &e.message)
		if err != nil {
			out.Failed = append(out.Failed, entryFailed(e.ID, err))
			continue
		}
		total += m.payload
		m.entry.Id = e.ID
		checked[e.ID] = m
		entries = append(entries, m.entry)
	}
	if total > maxBatchBytes {
		return nil, errBatchTooLong("Batch requests cannot be longer than %d bytes. You have sent %d bytes.", maxBatchBytes, total)
	}
	if len(entries) > 0 {
		res, err := h.m.SendMessageBatch(c.ctx, &tagqv1.SendMessageBatchRequest{Queue: t.queue, Entries: entries})
		if err != nil {
			return nil, err
		}
		for _, s := range res.GetSuccessful() {
			sr := checked[s.GetId()].result
			sr.MessageID = s.GetMessageId()
			if t.fifo {
				sr.SequenceNumber = sequenceNumber(sr.MessageID)
			}
			out.Successful = append(out.Successful, sendEntryResult{ID: s.GetId(), sendResult: sr})
		}
		for _, f := range res.GetFailed() {
			out.Failed = append(out.Failed, entryFromTagq(f.GetId(), f.GetReason(), f.GetMessage(), f.GetField()))
		}
	}
	return out, nil
}

func (h *Handler) receiveMessage(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	req := &tagqv1.ReceiveMessageRequest{Queue: t.queue, Tag: t.tag, MaxMessages: r.MaxNumberOfMessages,
		WaitSeconds: r.WaitTimeSeconds, VisibilitySeconds: r.VisibilityTimeout}
	if n := r.MaxNumberOfMessages; n != nil && (*n < 1 || *n > maxReceive) {
		return nil, invalidValue("MaxNumberOfMessages", strconv.Itoa(int(*n)), "Must be between 1 and 10, if provided.")
	}
	if w := r.WaitTimeSeconds; w != nil && (*w < 0 || *w > maxWaitSeconds) {
		return nil, invalidValue("WaitTimeSeconds", strconv.Itoa(int(*w)), "Must be >= 0 and <= 20, if provided.")
	}
	if v := r.VisibilityTimeout; v != nil && (*v < 0 || *v > maxVisibility) {
		return nil, invalidValue("VisibilityTimeout", strconv.Itoa(int(*v)), "Must be >= 0 and <= 43200, if provided.")
	}
	attemptKey := ""
	if id := r.ReceiveRequestAttemptID; id != nil && t.fifo { // as in SQS, FIFO queues only
		if !validDedupID(*id) {
			return nil, invalidValue("ReceiveRequestAttemptId", clip(*id), "1-128 characters of A-Z a-z 0-9 and punctuation")
		}
		attemptKey = c.principal + "\x00" + t.queue + "\x00" + t.tag + "\x00" + *id
		if res := h.attempts.get(attemptKey); res != nil {
			return *res, nil
		}
	}
	res, err := h.m.ReceiveMessage(c.ctx, req)
	if err != nil {
		return nil, err
	}
	sys := systemAttributeSet(append(append([]string{}, r.AttributeNames...), r.MessageSystemAttributeNames...))
	out := receiveResult{}
	for _, m := range res.GetMessages() {
		out.Messages = append(out.Messages, h.toSQSMessage(c, t, m, sys, r.MessageAttributeNames))
	}
	if attemptKey != "" {
		vis := 30
		if v := r.VisibilityTimeout; v != nil {
			vis = int(*v)
		}
		h.attempts.put(attemptKey, c.principal, &out, time.Duration(vis)*time.Second)
	}
	return out, nil
}

// systemAttributeSet is the set of system attribute names asked for (nil:
// all of them).
func systemAttributeSet(names []string) map[string]bool {
	set := map[string]bool{}
	for _, n := range names {
		if n == "All" {
			return nil
		}
		set[n] = true
	}
	return set
}

// toSQSMessage is a received message as SQS's: body and attributes as
// SQS carries them, with their checksums, and the system attributes asked
// for (sys nil: all; tagq's dead-letter metadata under "tagq." names).
func (h *Handler) toSQSMessage(c *call, t target, m *tagqv1.Message, sys map[string]bool, attrNames []string) sqsMessage {
	// MD5OfBody is of what is delivered: the body's own bytes, unless it
	// holds what SQS cannot carry (sent through tagq's own API).
	raw := m.GetBody()
	body := deliverable(string(raw))
	sum := md5Hex(raw)
	if body != string(raw) {
		sum = md5Hex([]byte(body))
	}
	out := sqsMessage{MessageID: m.GetMessageId(), ReceiptHandle: m.GetReceiptHandle(), Body: body, MD5OfBody: sum}
	attrs, trace := toSQSAttributes(m.GetAttributes())
	if sel := selectAttributes(attrs, attrNames); len(sel) > 0 {
		out.MessageAttributes = sel
		out.MD5OfMessageAttributes = md5OfAttributes(sel)
	}
	switch {
	case sys == nil:
		out.Attributes = h.systemAttributes(c, t, m, trace)
	case len(sys) > 0: // none asked for, none made
		all := h.systemAttributes(c, t, m, trace)
		out.Attributes = attrMap{}
		for n := range sys {
			if v, ok := all[n]; ok {
				out.Attributes[n] = v
			}
		}
	}
	return out
}

// systemAttributes are all the system attributes of a received message
// (trace: its AWSTraceHeader).
func (h *Handler) systemAttributes(c *call, t target, m *tagqv1.Message, trace string) attrMap {
	all := attrMap{
		"SentTimestamp":           millis(m.GetSendTime().AsTime().UnixMilli()),
		"ApproximateReceiveCount": strconv.Itoa(int(m.GetReceiveCount())),
	}
	if ft := m.GetFirstReceiveTime(); ft != nil {
		all["ApproximateFirstReceiveTimestamp"] = millis(ft.AsTime().UnixMilli())
	}
	if t.fifo {
		all["MessageGroupId"] = m.GetTopic()
		if sn := sequenceNumber(m.GetMessageId()); sn != "" {
			all["SequenceNumber"] = sn
		}
	}
	if trace != "" {
		all["AWSTraceHeader"] = trace
	}
	if d := m.GetDeadLetter(); d != nil {
		all["DeadLetterQueueSourceArn"] = h.arn(c.region, target{queue: d.GetSourceQueueName(), tag: d.GetSourceTag(), fifo: t.fifo})
		all["tagq.DeadLetterSourceTag"] = d.GetSourceTag()
		all["tagq.DeadLetterReason"] = d.GetReason()
		if d.GetDescription() != "" {
			all["tagq.DeadLetterDescription"] = d.GetDescription()
		}
		all["tagq.DeadLetterTimestamp"] = millis(d.GetDeadTimestamp().AsTime().UnixMilli())
		all["tagq.DeadLetterOriginalMessageId"] = d.GetOriginalMessageId()
		all["tagq.DeadLetterOriginalReceiveCount"] = strconv.Itoa(int(d.GetOriginalReceiveCount()))
	}
	if mc := m.GetMoveCount(); mc > 0 {
		all["tagq.MoveCount"] = strconv.Itoa(int(mc))
	}
	return all
}

func millis(ms int64) string { return strconv.FormatInt(ms, 10) }

// checkHandle refuses a receipt handle used on another URL than the one
// of the tag it was received on. Handles this engine cannot read are left
// to tagq, which refuses them.
func (h *Handler) checkHandle(c *call, t target, param, handle string) *Error {
	if handle == "" {
		return missing(param)
	}
	q, tag, ok := h.engine.HandleTarget(handle)
	if !ok {
		return nil
	}
	wrong := func() *Error {
		return errReceiptHandle("The receipt handle given in %s was not received on this queue URL (%s): use the URL of the tag it was received on", param, t.sqsName())
	}
	if q != t.queue {
		return wrong()
	}
	if t.tag != "" {
		if tag != t.tag {
			return wrong()
		}
		return nil
	}
	if tag == tags.DefaultTagName {
		return nil
	}
	def, err := h.defaults.of(c.ctx, q)
	if err != nil || tag != def {
		return wrong()
	}
	return nil
}

func (h *Handler) deleteMessage(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	if r.ReceiptHandle == nil {
		return nil, missing("ReceiptHandle")
	}
	if e := h.checkHandle(c, t, "ReceiptHandle", *r.ReceiptHandle); e != nil {
		return nil, e
	}
	_, err = h.m.DeleteMessage(c.ctx, &tagqv1.DeleteMessageRequest{Queue: t.queue, ReceiptHandle: *r.ReceiptHandle})
	return nil, err
}

func (h *Handler) changeMessageVisibility(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	if r.ReceiptHandle == nil {
		return nil, missing("ReceiptHandle")
	}
	if r.VisibilityTimeout == nil {
		return nil, missing("VisibilityTimeout")
	}
	if v := *r.VisibilityTimeout; v < 0 || v > maxVisibility {
		return nil, invalidValue("VisibilityTimeout", strconv.Itoa(int(v)), "Must be between 0 and 43200.")
	}
	if e := h.checkHandle(c, t, "ReceiptHandle", *r.ReceiptHandle); e != nil {
		return nil, e
	}
	_, err = h.m.ChangeMessageVisibility(c.ctx, &tagqv1.ChangeMessageVisibilityRequest{Queue: t.queue,
		ReceiptHandle: *r.ReceiptHandle, VisibilitySeconds: *r.VisibilityTimeout})
	return nil, err
}

func (h *Handler) deleteMessageBatch(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	if err := checkEntries(r.Entries); err != nil {
		return nil, err
	}
	out := deleteBatchResult{Successful: []idEntry{}, Failed: []entryError{}}
	var entries []*tagqv1.DeleteMessageBatchEntry
	for i, e := range r.Entries {
		param := "DeleteMessageBatchRequestEntry." + strconv.Itoa(i+1) + ".ReceiptHandle"
		if e.ReceiptHandle == nil {
			out.Failed = append(out.Failed, entryFailed(e.ID, missing(param)))
			continue
		}
		if err := h.checkHandle(c, t, param, *e.ReceiptHandle); err != nil {
			out.Failed = append(out.Failed, entryFailed(e.ID, err))
			continue
		}
		entries = append(entries, &tagqv1.DeleteMessageBatchEntry{Id: e.ID, ReceiptHandle: *e.ReceiptHandle})
	}
	if len(entries) > 0 {
		res, err := h.m.DeleteMessageBatch(c.ctx, &tagqv1.DeleteMessageBatchRequest{Queue: t.queue, Entries: entries})
		if err != nil {
			return nil, err
		}
		out.Successful, out.Failed = settled(out.Successful, out.Failed, res)
	}
	return out, nil
}

// settled adds a tagq batch's per-entry results to an SQS batch answer's.
func settled(ok []idEntry, failed []entryError, res interface {
	GetSuccessful() []string
	GetFailed() []*tagqv1.BatchResultError
}) ([]idEntry, []entryError) {
	for _, id := range res.GetSuccessful() {
		ok = append(ok, idEntry{ID: id})
	}
	for _, f := range res.GetFailed() {
		failed = append(failed, entryFromTagq(f.GetId(), f.GetReason(), f.GetMessage(), f.GetField()))
	}
	return ok, failed
}

func (h *Handler) changeMessageVisibilityBatch(c *call, r *request) (any, error) {
	t, err := h.target(c, r)
	if err != nil {
		return nil, err
	}
	if err := checkEntries(r.Entries); err != nil {
		return nil, err
	}
	out := visibilityBatchResult{Successful: []idEntry{}, Failed: []entryError{}}
	var entries []*tagqv1.ChangeMessageVisibilityBatchEntry
	for i, e := range r.Entries {
		param := "ChangeMessageVisibilityBatchRequestEntry." + strconv.Itoa(i+1) + "."
		var fail *Error
		switch {
		case e.ReceiptHandle == nil:
			fail = missing(param + "ReceiptHandle")
		case e.VisibilityTimeout == nil:
			fail = missing(param + "VisibilityTimeout")
		case *e.VisibilityTimeout < 0 || *e.VisibilityTimeout > maxVisibility:
			fail = invalidValue(param+"VisibilityTimeout", strconv.Itoa(int(*e.VisibilityTimeout)), "Must be between 0 and 43200.")
		default:
			fail = h.checkHandle(c, t, param+"ReceiptHandle", *e.ReceiptHandle)
		}
		if fail != nil {
			out.Failed = append(out.Failed, entryFailed(e.ID, fail))
			continue
		}
		entries = append(entries, &tagqv1.ChangeMessageVisibilityBatchEntry{Id: e.ID, ReceiptHandle: *e.ReceiptHandle,
			VisibilitySeconds: *e.VisibilityTimeout})
	}
	if len(entries) > 0 {
		res, err := h.m.ChangeMessageVisibilityBatch(c.ctx, &tagqv1.ChangeMessageVisibilityBatchRequest{Queue: t.queue, Entries: entries})
		if err != nil {
			return nil, err
		}
		out.Successful, out.Failed = settled(out.Successful, out.Failed, res)
	}
	return out, nil
}

// unsupported answers SQS actions tagq has no counterpart of.
func unsupported(why string) func(*Handler, *call, *request) (any, error) {
	return func(*Handler, *call, *request) (any, error) { return nil, errUnsupported("%s", why) }
}
