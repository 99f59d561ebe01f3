package server

import (
	"fmt"

	"github.com/tagq/tagq/tags"
)

// ReasonMixedQueueBatch is the ErrorInfo reason of a batch of receipt
// handles that names no queue and holds handles of two queues.
const ReasonMixedQueueBatch = tags.ReasonMixedQueueBatch

// S3: a receipt handle names its queue, so the calls that take handles
// (delete, change visibility, dead, and their batches) need no queue. The
// request's queue field is optional:
//
//   - named: the call acts on that queue, and the engine refuses each
//     handle of another queue (INVALID_RECEIPT_HANDLE for that entry,
//     naming both queues), as before;
//   - empty: the call acts on the queue its handles name. A batch acts on
//     one queue (as SQS's and EMQ's do, and as the REST routes with the
//     queue in the path do), so handles of two queues are refused whole
//     (MIXED_QUEUE_BATCH), before anything is done: a per-entry refusal
//     would depend on the order of the entries, and a batch split across
//     queues would need per-queue failures (an unknown queue, one without
//     a dead-letter queue) reported per entry. Send one batch per queue.
//
// Handles this server did not sign name no queue: with no queue named and
// no handle of the batch signed, each entry is INVALID_RECEIPT_HANDLE, as
// the engine would have it.

// handleQueue is the queue a call on handles acts on: named when given,
// else the queue of the handles this server signed ("" when none is).
func (s *messageService) handleQueue(named string, handles []string) (string, error) {
	if named != "" {
		return named, nil
	}
	first := -1
	queue := ""
	for i, h := range handles {
		q, _, ok := s.store.HandleTarget(h)
		switch {
		case !ok:
		case first < 0:
			first, queue = i, q
		case q != queue:
			return "", &tags.Error{Kind: tags.KindInvalidArgument, Reason: ReasonMixedQueueBatch,
				Field: fmt.Sprintf("entries[%d].receipt_handle", i),
				Message: fmt.Sprintf("entries[%d].receipt_handle is of queue %q and entries[%d].receipt_handle of queue %q: "+
					"a batch acts on one queue (send one batch per queue)", first, echo(queue), i, echo(q)),
				Metadata: map[string]string{"queue": echo(queue), "other_queue": echo(q)}}
		}
	}
	return queue, nil
}

// badHandle is the error of a receipt handle that names no queue: empty,
// or not signed by this server (the engine's INVALID_RECEIPT_HANDLE).
func badHandle(raw string) error {
	if raw == "" {
		return fieldError(tags.ReasonInvalidReceiptHandle, "receipt_handle", "receipt handle is empty")
	}
	return fieldError(tags.ReasonInvalidReceiptHandle, "receipt_handle", "receipt handle is not one tagq issued")
}
