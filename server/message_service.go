package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

type messageService struct {
	tagqv1.UnimplementedMessageServiceServer
	store      tags.Storage
	log        *slog.Logger
	settler    *settler
	drain      <-chan struct{} // closed when the server starts shutting down
	drainGrace time.Duration   // how long a draining Consume stream still takes acks
	streams    atomic.Int64    // Publish and Consume streams open
	inflight   *InFlight       // request bytes in flight: Publish frames count
	refused    prometheus.Counter
}

// batchCall is an engine call that takes a batch of entries on a queue and
// answers per entry (a nil error: done), or fails as a whole.
type batchCall[T any] func(ctx context.Context, queue string, entries []T) ([]error, error)

// one is the unary form of a batch call on a receipt handle: one entry,
// its error. Its queue is named, or the handle's (handleQueue).
func one[T any](ctx context.Context, s *messageService, call batchCall[T], named, handle string, entry T) error {
	queue, err := s.handleQueue(named, []string{handle})
	if err != nil {
		return err
	}
	if queue == "" {
		return badHandle(handle)
	}
	errs, err := call(ctx, queue, []T{entry})
	if err != nil {
		return err
	}
	return errs[0]
}

// batch is the batch form: it reads each request entry's id, receipt
// handle and engine entry, checks the ids (checkBatch), finds the queue
// (named, or the handles': handleQueue), calls, and splits the answers
// into the ids that succeeded and the failures (fields named
// entries[i].…).
func batch[E, T any](ctx context.Context, s *messageService, call batchCall[T], named string, entries []E,
	read func(E) (id, handle string, entry T)) ([]string, []*tagqv1.BatchResultError, error) {
	ids := make([]string, len(entries))
	handles := make([]string, len(entries))
	in := make([]T, len(entries))
	for i, e := range entries {
		ids[i], handles[i], in[i] = read(e)
	}
	if err := checkBatch(ids); err != nil {
		return nil, nil, err
	}
	queue, err := s.handleQueue(named, handles)
	if err != nil {
		return nil, nil, err
	}
	errs := make([]error, len(entries))
	if queue == "" { // no handle names a queue: each is refused
		for i, h := range handles {
			errs[i] = badHandle(h)
		}
	} else if errs, err = call(ctx, queue, in); err != nil {
		return nil, nil, err
	}
	var ok []string
	var failed []*tagqv1.BatchResultError
	for i, e := range errs {
		if e != nil {
			failed = append(failed, toBatchError(i, ids[i], e))
		} else {
			ok = append(ok, ids[i])
		}
	}
	return ok, failed, nil
}

// toBatchError makes a BatchResultError of one entry's error.
func toBatchError(i int, id string, err error) *tagqv1.BatchResultError {
	st, _ := status.FromError(toStatus(withField(err, fmt.Sprintf("entries[%d].", i))))
	out := &tagqv1.BatchResultError{Id: id, Message: st.Message()}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			out.Reason = d.GetReason()
			out.Field = d.GetMetadata()["field"]
		}
	}
	return out
}

func (s *messageService) SendMessage(ctx context.Context, req *tagqv1.SendMessageRequest) (*tagqv1.SendMessageResponse, error) {
	ctx = sqsSendContext(ctx, hasSQSAttributes(req.GetAttributes()))
	res, err := s.store.Send(ctx, req.GetQueue(), []tags.OutMessage{{
		Body: req.GetBody(), Attributes: fromAttrs(req.GetAttributes()), DelaySeconds: req.DelaySeconds,
		DeduplicationID: req.DeduplicationId, Topic: req.GetTopic(),
		Priority: req.GetPriority()}})
	if err != nil {
		return nil, err
	}
	if res[0].Err != nil {
		return nil, res[0].Err
	}
	return &tagqv1.SendMessageResponse{MessageId: res[0].ID, SendTime: ts(res[0].SendTime)}, nil
}

func (s *messageService) SendMessageBatch(ctx context.Context, req *tagqv1.SendMessageBatchRequest) (*tagqv1.SendMessageBatchResponse, error) {
	return s.sendBatch(ctx, req.GetQueue(), req.GetEntries())
}

// sendBatch is SendMessageBatch, for the unary call and Publish frames.
func (s *messageService) sendBatch(ctx context.Context, queue string, entries []*tagqv1.SendMessageBatchEntry) (*tagqv1.SendMessageBatchResponse, error) {
	ids := make([]string, len(entries))
	msgs := make([]tags.OutMessage, len(entries))
	sqsAttrs := false
	for i, e := range entries {
		ids[i] = e.GetId()
		msgs[i] = tags.OutMessage{Body: e.GetBody(), Attributes: fromAttrs(e.GetAttributes()), DelaySeconds: e.DelaySeconds,
			DeduplicationID: e.DeduplicationId, Topic: e.GetTopic(), Priority: e.GetPriority()}
		sqsAttrs = sqsAttrs || hasSQSAttributes(e.GetAttributes())
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
	ctx = sqsSendContext(ctx, sqsAttrs)
	res, err := s.store.Send(ctx, queue, msgs)
	if err != nil {
		return nil, err
	}
	out := &tagqv1.SendMessageBatchResponse{}
	for i, r := range res {
		if r.Err != nil {
			out.Failed = append(out.Failed, toBatchError(i, ids[i], r.Err))
			continue
		}
		out.Successful = append(out.Successful, &tagqv1.SendMessageBatchResult{Id: ids[i], MessageId: r.ID, SendTime: ts(r.SendTime)})
	}
	return out, nil
}

func (s *messageService) ReceiveMessage(ctx context.Context, req *tagqv1.ReceiveMessageRequest) (*tagqv1.ReceiveMessageResponse, error) {
	max := 1
	if req.MaxMessages != nil {
		max = int(req.GetMaxMessages())
	}
	msgs, err := s.store.Receive(ctx, req.GetQueue(), req.GetTag(), tags.ReceiveOptions{
		MaxMessages: max, WaitSeconds: req.WaitSeconds, VisibilitySeconds: req.VisibilitySeconds})
	if err != nil {
		return nil, err
	}
	return &tagqv1.ReceiveMessageResponse{Messages: toMessages(msgs)}, nil
}

func (s *messageService) DeleteMessage(ctx context.Context, req *tagqv1.DeleteMessageRequest) (*tagqv1.DeleteMessageResponse, error) {
	return &tagqv1.DeleteMessageResponse{}, one(ctx, s, s.store.Delete, req.GetQueue(), req.GetReceiptHandle(), req.GetReceiptHandle())
}

func (s *messageService) DeleteMessageBatch(ctx context.Context, req *tagqv1.DeleteMessageBatchRequest) (*tagqv1.DeleteMessageBatchResponse, error) {
	out := &tagqv1.DeleteMessageBatchResponse{}
	var err error
	out.Successful, out.Failed, err = batch(ctx, s, s.store.Delete, req.GetQueue(), req.GetEntries(),
		func(e *tagqv1.DeleteMessageBatchEntry) (string, string, string) {
			return e.GetId(), e.GetReceiptHandle(), e.GetReceiptHandle()
		})
	return out, err
}

func (s *messageService) ChangeMessageVisibility(ctx context.Context, req *tagqv1.ChangeMessageVisibilityRequest) (*tagqv1.ChangeMessageVisibilityResponse, error) {
	return &tagqv1.ChangeMessageVisibilityResponse{}, one(ctx, s, s.store.ChangeVisibility, req.GetQueue(), req.GetReceiptHandle(),
		tags.VisibilityChange{ReceiptHandle: req.GetReceiptHandle(), VisibilitySeconds: req.GetVisibilitySeconds(),
			RetryBackoff: req.GetRetryBackoff()})
}

func (s *messageService) ChangeMessageVisibilityBatch(ctx context.Context, req *tagqv1.ChangeMessageVisibilityBatchRequest) (*tagqv1.ChangeMessageVisibilityBatchResponse, error) {
	out := &tagqv1.ChangeMessageVisibilityBatchResponse{}
	var err error
	out.Successful, out.Failed, err = batch(ctx, s, s.store.ChangeVisibility, req.GetQueue(), req.GetEntries(),
		func(e *tagqv1.ChangeMessageVisibilityBatchEntry) (string, string, tags.VisibilityChange) {
			return e.GetId(), e.GetReceiptHandle(), tags.VisibilityChange{ReceiptHandle: e.GetReceiptHandle(), VisibilitySeconds: e.GetVisibilitySeconds(),
				RetryBackoff: e.GetRetryBackoff()}
		})
	return out, err
}

func (s *messageService) PeekMessage(ctx context.Context, req *tagqv1.PeekMessageRequest) (*tagqv1.PeekMessageResponse, error) {
	var msgs []tags.Message
	var next string
	var err error
	if len(req.GetMessageIds()) > 0 {
		if req.GetPageToken() != "" {
			return nil, fieldError(tags.ReasonInvalidArgumentRange, "page_token", "page_token pages a peek by tag; with message_ids there is one page")
		}
		msgs, err = s.store.Peek(ctx, req.GetQueue(), req.GetMessageIds())
	} else {
		max := 1
		if req.MaxMessages != nil {
			max = int(req.GetMaxMessages())
		}
		// Tokens are bound to the listing: queue and tag.
		list := peekList(req.GetQueue(), req.GetTag())
		var from string
		if from, err = s.store.PageAfter(list, req.GetPageToken()); err != nil {
			return nil, err
		}
		msgs, next, err = s.store.PeekPage(ctx, req.GetQueue(), req.GetTag(), max, from)
		next = s.store.PageToken(list, next)
	}
	if err != nil {
		return nil, err
	}
	return &tagqv1.PeekMessageResponse{Messages: toMessages(msgs), NextPageToken: next}, nil
}

// peekList is the listing a PeekMessage page token is bound to.
func peekList(queue, tag string) string { return "queues/" + queue + "/peek?tag=" + tag }

func (s *messageService) DeadMessage(ctx context.Context, req *tagqv1.DeadMessageRequest) (*tagqv1.DeadMessageResponse, error) {
	return &tagqv1.DeadMessageResponse{}, one(ctx, s, s.store.DeadLetter, req.GetQueue(), req.GetReceiptHandle(),
		tags.DeadRequest{ReceiptHandle: req.GetReceiptHandle(), Reason: req.GetReason(), Description: req.GetDescription()})
}

func (s *messageService) DeadMessageBatch(ctx context.Context, req *tagqv1.DeadMessageBatchRequest) (*tagqv1.DeadMessageBatchResponse, error) {
	out := &tagqv1.DeadMessageBatchResponse{}
	var err error
	out.Successful, out.Failed, err = batch(ctx, s, s.store.DeadLetter, req.GetQueue(), req.GetEntries(),
		func(e *tagqv1.DeadMessageBatchEntry) (string, string, tags.DeadRequest) {
			return e.GetId(), e.GetReceiptHandle(), tags.DeadRequest{ReceiptHandle: e.GetReceiptHandle(), Reason: e.GetReason(), Description: e.GetDescription()}
		})
	return out, err
}
