package sqs

import (
	"encoding/base64"
	"sort"
	"strconv"
	"strings"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Message move tasks: SQS's StartMessageMoveTask, ListMessageMoveTasks and
// CancelMessageMoveTask onto tagq's moves of dead letters back to their
// source (S10). The source ARN is the dead-letter queue's. A destination
// ARN narrows the move to the dead letters of that source queue (a tag's
// ARN: of that tag), each moved back to the tag it died in; without one,
// every dead letter goes back to where it came from, as SQS does. tagq
// cannot move dead letters to a queue they did not come from.

// maxMoveRate is SQS's MaxNumberOfMessagesPerSecond limit.
const maxMoveRate = 500

// taskHandle is a move's TaskHandle: its dead-letter queue and task id.
func taskHandle(dlq, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(dlq + "/" + id))
}

func parseTaskHandle(h string) (dlq, id string, err error) {
	raw, derr := base64.RawURLEncoding.DecodeString(h)
	dlq, id, ok := strings.Cut(string(raw), "/")
	if derr != nil || !ok || dlq == "" || id == "" {
		return "", "", errResourceNotFound("Task does not exist: %s is not a task handle of this endpoint.", clip(h))
	}
	return dlq, id, nil
}

// notFoundAsResource: the move actions answer a missing queue or task
// with ResourceNotFoundException, as SQS's model has them.
func notFoundAsResource(err error) error {
	if e := fromStatus(err); e.Type == "QueueDoesNotExist" {
		return errResourceNotFound("%s", e.Message)
	}
	return err
}

func (h *Handler) sourceQueue(r *request) (target, error) {
	if r.SourceArn == "" {
		return target{}, missing("SourceArn")
	}
	t, err := h.parseARN("SourceArn", r.SourceArn)
	if err == nil && t.tag != "" {
		err = invalidValue("SourceArn", clip(r.SourceArn), "moves are from a dead-letter queue, not one of its tags")
	}
	return t, err
}

func (h *Handler) startMessageMoveTask(c *call, r *request) (any, error) {
	src, err := h.sourceQueue(r)
	if err != nil {
		return nil, err
	}
	req := &tagqv1.StartMessageMoveRequest{DeadLetterQueue: src.queue}
	if n := r.MaxNumberOfMessagesPerSecond; n != nil {
		if *n < 1 || *n > maxMoveRate {
			return nil, invalidValue("MaxNumberOfMessagesPerSecond", strconv.Itoa(int(*n)), "must be between 1 and 500")
		}
		req.MaxMessagesPerSecond = *n
	}
	if r.DestinationArn != "" {
		d, err := h.parseARN("DestinationArn", r.DestinationArn)
		if err != nil {
			return nil, err
		}
		req.SourceQueue, req.SourceTag = d.queue, d.tag
	}
	res, err := h.rd.StartMessageMove(c.ctx, req)
	if err != nil {
		return nil, notFoundAsResource(err)
	}
	return startMoveResult{TaskHandle: taskHandle(src.queue, res.GetTask().GetTaskId())}, nil
}

// moveStatus is SQS's name of a move's state.
var moveStatus = map[tagqv1.MessageMoveTask_State]string{
	tagqv1.MessageMoveTask_STATE_RUNNING:   "RUNNING",
	tagqv1.MessageMoveTask_STATE_COMPLETED: "COMPLETED",
	tagqv1.MessageMoveTask_STATE_CANCELLED: "CANCELLED",
	tagqv1.MessageMoveTask_STATE_FAILED:    "FAILED",
}

func (h *Handler) listMessageMoveTasks(c *call, r *request) (any, error) {
	src, err := h.sourceQueue(r)
	if err != nil {
		return nil, err
	}
	max := int32(1)
	if n := r.MaxResults; n != nil {
		if *n < 1 || *n > 10 {
			return nil, invalidValue("MaxResults", strconv.Itoa(int(*n)), "must be between 1 and 10")
		}
		max = *n
	}
	res, err := h.rd.ListMessageMoves(c.ctx, &tagqv1.ListMessageMovesRequest{DeadLetterQueue: src.queue})
	if err != nil {
		return nil, notFoundAsResource(err)
	}
	tasks := res.GetTasks()
	sort.SliceStable(tasks, func(i, j int) bool { return tasks[i].GetCreateTime().AsTime().After(tasks[j].GetCreateTime().AsTime()) })
	out := listMovesResult{Results: []moveEntry{}}
	for _, t := range tasks {
		if int32(len(out.Results)) == max {
			break
		}
		rate := t.GetMaxMessagesPerSecond()
		e := moveEntry{Status: moveStatus[t.GetState()], SourceArn: h.arn(c.region, src), MaxNumberOfMessagesPerSecond: &rate,
			ApproximateNumberOfMessagesMoved:  t.GetMovedMessages(),
			ApproximateNumberOfMessagesToMove: t.GetMovedMessages() + t.GetFailedMessages() + t.GetRemainingMessages(),
			FailureReason:                     t.GetFailureReason(), StartedTimestamp: t.GetCreateTime().AsTime().UnixMilli()}
		if t.GetState() == tagqv1.MessageMoveTask_STATE_RUNNING {
			e.TaskHandle = taskHandle(src.queue, t.GetTaskId())
		}
		if t.GetSourceQueue() != "" {
			e.DestinationArn = h.arn(c.region, target{queue: t.GetSourceQueue(), tag: t.GetSourceTag(), fifo: src.fifo})
		}
		out.Results = append(out.Results, e)
	}
	return out, nil
}

func (h *Handler) cancelMessageMoveTask(c *call, r *request) (any, error) {
	if r.TaskHandle == "" {
		return nil, missing("TaskHandle")
	}
	dlq, id, err := parseTaskHandle(r.TaskHandle)
	if err != nil {
		return nil, err
	}
	res, err := h.rd.CancelMessageMove(c.ctx, &tagqv1.CancelMessageMoveRequest{DeadLetterQueue: dlq, TaskId: id})
	if err != nil {
		return nil, notFoundAsResource(err)
	}
	return cancelMoveResult{ApproximateNumberOfMessagesMoved: res.GetTask().GetMovedMessages()}, nil
}
