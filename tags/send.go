package tags

import (
	"context"
	"strconv"
)

// Send stores messages in one atomic step. Each message is checked first;
// the invalid ones get an error in their result and are not stored, the
// valid ones are all stored. The error return is for the whole call (queue
// not found, backend unavailable): then nothing was stored.
func (s *Store) Send(ctx context.Context, queue string, msgs []OutMessage) ([]SendResult, error) {
	if e := checkName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if len(msgs) == 0 || len(msgs) > MaxBatchEntries {
		return nil, invalid(ReasonBatchTooLarge, "entries", "a batch has 1-%d entries, got %d", MaxBatchEntries, len(msgs))
	}
	results := make([]SendResult, len(msgs))
	args := make([]any, 1, 1+4*len(msgs))
	sent := make([]int, 0, len(msgs))
	for i, m := range msgs {
		size, e := checkMessageAttributes(m.Attributes)
		if e == nil {
			e = checkRange("delay_seconds", m.DelaySeconds, 0, MaxDelaySeconds)
		}
		size += len(m.Body)
		if e == nil && size == 0 {
			e = invalid(ReasonInvalidArgumentRange, "body", "a message needs a body or attributes")
		}
		if e == nil && size > MaxMaxMessageBytes {
			e = tooLarge(size, MaxMaxMessageBytes)
		}
		if e != nil {
			results[i].Err = e
			continue
		}
		delay := int32(-1)
		if m.DelaySeconds != nil {
			delay = *m.DelaySeconds
		}
		args = append(args, size, delay, m.Body, encodeAttrs(m.Attributes))
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return results, nil
	}
	args[0] = len(sent)
	k := s.qkeys(queue)
	res, err := scriptSend.Run(ctx, s.rdb, []string{k.meta, k.stream, k.filters, k.delayed}, args...).Slice()
	if err != nil {
		return nil, mapErr(err, queue, "")
	}
	for j, r := range res {
		i := sent[j]
		parts, _ := r.([]any)
		if len(parts) == 1 {
			id, _ := parts[0].(string)
			results[i] = SendResult{ID: id, SendTime: idTime(id)}
			continue
		}
		size, _ := args[1+4*j].(int)
		results[i].Err = tooLarge(size, int(asInt64(parts[1])))
	}
	return results, nil
}

func tooLarge(size, limit int) *Error {
	e := invalid(ReasonMessageTooLarge, "body", "message is %d bytes (body plus attribute names and values); the queue allows %d",
		size, limit)
	e.Metadata = map[string]string{"size": strconv.Itoa(size), "limit": strconv.Itoa(limit)}
	return e
}
