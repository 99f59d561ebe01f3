package sqs

import (
	"net/url"
	"strings"

	"github.com/tagq/tagq/tags"
)

// Names, URLs and ARNs.
//
// A tagq queue has one SQS name: its own, with ".fifo" appended when it is
// a topic queue (tagq names cannot hold a dot, so "orders.fifo" is the
// topic queue "orders" and "orders" a plain one; the two cannot both
// exist). Each of its tags has a name of its own, the queue's name and
// the tag's joined by TagSeparator ("orders~billing", the ".fifo" suffix
// last: "orders~billing.fifo"): tagq names cannot hold "~" either, and it
// needs no escaping in a URL, an ARN or a form. The queue's own name
// addresses its default tag.
//
//	http://<host>/<account>/orders            the queue; receives read its default tag
//	http://<host>/<account>/orders~billing    the tag billing of orders
//	arn:aws:sqs:<region>:<account>:orders~billing

// TagSeparator joins a queue's name and a tag's in the SQS name of a tag.
const TagSeparator = "~"

// fifoSuffix ends the SQS name of a topic queue (SQS's FIFO queue).
const fifoSuffix = ".fifo"

// target is what an SQS queue name addresses: a tagq queue, and a tag of
// it or (tag "") its default tag.
type target struct {
	queue string
	tag   string
	fifo  bool
}

// sqsName is the target's SQS queue name.
func (t target) sqsName() string {
	n := t.queue
	if t.tag != "" {
		n += TagSeparator + t.tag
	}
	if t.fifo {
		n += fifoSuffix
	}
	return n
}

// parseName reads an SQS queue name (param names the request parameter
// it came from, for the error).
func parseName(param, name string) (target, error) {
	var t target
	base, fifo := strings.CutSuffix(name, fifoSuffix)
	t.fifo = fifo
	q, tag, hasTag := strings.Cut(base, TagSeparator)
	if !tags.ValidName(q) || hasTag && !tags.ValidName(tag) {
		return t, invalidValue(param, clip(name),
			"queue names are 1-80 characters of A-Z a-z 0-9 _ -, with .fifo at the end for a FIFO (topic) queue; "+
				"a tag's queue name is the queue's name, "+TagSeparator+" and the tag's name (orders"+TagSeparator+"billing)")
	}
	t.queue, t.tag = q, tag
	return t, nil
}

// queueURL is the URL of t on the endpoint at base (scheme and host).
func (h *Handler) queueURL(base string, t target) string {
	return base + "/" + h.account + "/" + t.sqsName()
}

// parseURL reads a QueueUrl: any scheme and host (clients put the one
// they were given), a path of the account and the SQS name.
func (h *Handler) parseURL(param, raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return target{}, invalidAddress(raw)
	}
	path := strings.Trim(u.Path, "/")
	acct, name, ok := strings.Cut(path, "/")
	if !ok || strings.Contains(name, "/") {
		return target{}, invalidAddress(raw)
	}
	if acct != h.account {
		return target{}, queueNotFound(name)
	}
	return parseName(param, name)
}

// arn is t's ARN in region.
func (h *Handler) arn(region string, t target) string {
	return "arn:aws:sqs:" + region + ":" + h.account + ":" + t.sqsName()
}

// parseARN reads an SQS queue ARN (any partition and region; this
// endpoint's account).
func (h *Handler) parseARN(param, arn string) (target, error) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" {
		return target{}, invalidValue(param, clip(arn), "not an SQS queue ARN (arn:aws:sqs:<region>:<account>:<queue name>)")
	}
	if parts[4] != h.account {
		return target{}, invalidValue(param, clip(arn), "the account must be this endpoint's, "+h.account)
	}
	return parseName(param, parts[5])
}

// clip bounds a client's value quoted in an error.
func clip(s string) string { return tags.Clip(s, tags.MaxEcho) }
