package tags

import (
	"fmt"
	"time"

	"github.com/tagq/tagq/tags/streamid"
)

// SeekTarget is where a seek moves a tag's cursor (S22): to a time, or to
// a message id; exactly one is set.
//
// A time T places the cursor before the first retained message sent at or
// after T: a time before the oldest retained message (the Unix epoch, say)
// replays every retained one; a time at or after the seek's own time (the
// storage's clock) skips every retained message, so that only those sent
// after the seek are available, as for a tag created now. A message id M
// places it just before M: M and every later message are available again.
// M must be retained: an id that is not (trimmed, or never sent) is
// NOT_FOUND (MESSAGE_NOT_FOUND), never a silent nearest position.
type SeekTarget struct {
	// Time, used when MessageID is "" (the zero Time is no target).
	Time time.Time
	// MessageID is a message id of the queue (a stream id, "ms-seq").
	MessageID string
}

// CheckSeek checks a seek of tag on queue to to.
func CheckSeek(queue, tag string, to SeekTarget) *Error {
	if e := CheckName("queue", "queue", queue); e != nil {
		return e
	}
	if e := CheckName("name", "tag", tag); e != nil {
		return e
	}
	switch {
	case to.MessageID != "" && !to.Time.IsZero():
		return Invalid(ReasonInvalidArgumentRange, "message_id", "a seek takes a time or a message_id, not both")
	case to.MessageID != "":
		if _, _, ok := streamid.Parse(to.MessageID); !ok {
			return Invalid(ReasonInvalidArgumentRange, "message_id", "message_id %q is not a message id", Echo(to.MessageID))
		}
	case to.Time.IsZero():
		return Invalid(ReasonInvalidArgumentRange, "time", "a seek needs a time or a message_id")
	}
	return nil
}

// MessageNotFound answers a seek of tag t of queue q to message id, which
// the queue does not retain.
func MessageNotFound(q, t, id string) *Error {
	q, t, id = Echo(q), Echo(t), Echo(id)
	return &Error{Kind: KindNotFound, Reason: ReasonMessageNotFound, Field: "message_id",
		Message: fmt.Sprintf("queue %q retains no message %s (trimmed once every tag finished it or its retention "+
			"passed, or never sent): seek to a time instead", q, id),
		Metadata: map[string]string{"queue": q, "tag": t, "message_id": id}}
}
