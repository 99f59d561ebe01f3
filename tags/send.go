package tags

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"
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
	if done, err := s.sendFast(ctx, queue, args, sent, results); done || err != nil {
		if err != nil {
			return nil, err
		}
		return results, nil
	}
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

// sendLimits are the queue attributes a send's fast path checks against,
// cached per queue; sendpost.lua refuses a send made against stale ones.
type sendLimits struct {
	maxBytes int
	delay    int
}

func (s *Store) limitsOf(ctx context.Context, queue string) (sendLimits, bool) {
	if v, ok := s.limits.Load(queue); ok {
		return v.(sendLimits), true
	}
	m, err := s.rdb.HMGet(ctx, s.qkeys(queue).meta, "mmb", "delay").Result()
	if err != nil || len(m) != 2 || m[0] == nil || m[1] == nil {
		return sendLimits{}, false // the slow path tells what is wrong
	}
	mmb, _ := strconv.Atoi(m[0].(string))
	delay, _ := strconv.Atoi(m[1].(string))
	l := sendLimits{maxBytes: mmb, delay: delay}
	s.limits.Store(queue, l)
	return l, true
}

// sendFast stores a checked batch (args as send.lua takes them, sent the
// entries they hold) with plain XADDs followed by sendpost.lua in one
// MULTI, so no body passes through Lua. It does so only on the production
// clock, for undelayed messages within the queue's cached limits; it
// reports false, having stored nothing, when send.lua must do it.
func (s *Store) sendFast(ctx context.Context, queue string, args []any, sent []int, results []SendResult) (bool, error) {
	if s.rdb.testClock {
		return false, nil
	}
	lim, ok := s.limitsOf(ctx, queue)
	if !ok || lim.delay != 0 {
		return false, nil
	}
	largest := 0
	for j := range sent {
		size, delay := args[1+4*j].(int), args[2+4*j].(int32)
		if delay > 0 || size > lim.maxBytes {
			return false, nil // delayed, or (by the cache) too large: send.lua decides
		}
		largest = max(largest, size)
	}
	k := s.qkeys(queue)
	post := make([]any, 0, 3+len(sent))
	post = append(post, len(sent), largest, 0)
	pipe := s.rdb.TxPipeline()
	adds := make([]*redis.StringCmd, len(sent))
	for j := range sent {
		values := []any{"b", args[3+4*j]}
		attrs := args[4+4*j].(string)
		if attrs != "" {
			values = append(values, "a", attrs)
		}
		adds[j] = pipe.XAdd(ctx, &redis.XAddArgs{Stream: k.stream, NoMkStream: true, Values: values})
		post = append(post, attrs)
	}
	keys := []string{k.meta, k.stream, k.filters}
	check := scriptSendPost.build(false).EvalSha(ctx, pipe, keys, post...)
	_, _ = pipe.Exec(ctx) // errors are read per command
	if err := check.Err(); err != nil {
		switch {
		case redis.HasErrorPrefix(err, "NOSCRIPT"):
			// Redis lost its scripts (a restart) after the XADDs ran: they
			// stand; count them.
			for _, a := range adds {
				if a.Err() != nil {
					return true, mapErr(a.Err(), queue, "")
				}
			}
			post[2] = 1
			if err := scriptSendPost.Run(ctx, s.rdb, keys, post...).Err(); err != nil {
				return true, mapErr(err, queue, "")
			}
		case redis.HasErrorPrefix(err, "STALE_LIMITS"), redis.HasErrorPrefix(err, "NO_STREAM"):
			s.limits.Delete(queue)
			return false, nil
		default:
			s.limits.Delete(queue)
			return true, mapErr(err, queue, "")
		}
	}
	for j, i := range sent {
		id, err := adds[j].Result()
		if err != nil {
			return true, mapErr(err, queue, "")
		}
		results[i] = SendResult{ID: id, SendTime: idTime(id)}
	}
	return true, nil
}
