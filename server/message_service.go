package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

type messageService struct {
	tagqv1.UnimplementedMessageServiceServer
	store      *tags.Store
	log        *slog.Logger
	settler    *settler
	drain      <-chan struct{} // closed when the server starts shutting down
	drainGrace time.Duration   // how long a draining Consume stream still takes acks
	streams    atomic.Int64    // Publish and Consume streams open
}

// batchResults splits per-entry errors into the ids that succeeded and
// the failures.
func batchResults(ids []string, errs []error) ([]string, []*tagqv1.BatchResultError) {
	var ok []string
	var failed []*tagqv1.BatchResultError
	for i, e := range errs {
		if e != nil {
			failed = append(failed, toBatchError(i, ids[i], e))
		} else {
			ok = append(ok, ids[i])
		}
	}
	return ok, failed
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
	res, err := s.store.Send(ctx, req.GetQueue(), []tags.OutMessage{{
		Body: req.GetBody(), Attributes: fromAttrs(req.GetAttributes()), DelaySeconds: req.DelaySeconds}})
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
	for i, e := range entries {
		ids[i] = e.GetId()
		msgs[i] = tags.OutMessage{Body: e.GetBody(), Attributes: fromAttrs(e.GetAttributes()), DelaySeconds: e.DelaySeconds}
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
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
	errs, err := s.store.Delete(ctx, req.GetQueue(), []string{req.GetReceiptHandle()})
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	return &tagqv1.DeleteMessageResponse{}, nil
}

func (s *messageService) DeleteMessageBatch(ctx context.Context, req *tagqv1.DeleteMessageBatchRequest) (*tagqv1.DeleteMessageBatchResponse, error) {
	entries := req.GetEntries()
	ids := make([]string, len(entries))
	handles := make([]string, len(entries))
	for i, e := range entries {
		ids[i], handles[i] = e.GetId(), e.GetReceiptHandle()
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
	errs, err := s.store.Delete(ctx, req.GetQueue(), handles)
	if err != nil {
		return nil, err
	}
	out := &tagqv1.DeleteMessageBatchResponse{}
	out.Successful, out.Failed = batchResults(ids, errs)
	return out, nil
}

func (s *messageService) ChangeMessageVisibility(ctx context.Context, req *tagqv1.ChangeMessageVisibilityRequest) (*tagqv1.ChangeMessageVisibilityResponse, error) {
	errs, err := s.store.ChangeVisibility(ctx, req.GetQueue(), []tags.VisibilityChange{{
		ReceiptHandle: req.GetReceiptHandle(), VisibilitySeconds: req.GetVisibilitySeconds()}})
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	return &tagqv1.ChangeMessageVisibilityResponse{}, nil
}

func (s *messageService) ChangeMessageVisibilityBatch(ctx context.Context, req *tagqv1.ChangeMessageVisibilityBatchRequest) (*tagqv1.ChangeMessageVisibilityBatchResponse, error) {
	entries := req.GetEntries()
	ids := make([]string, len(entries))
	changes := make([]tags.VisibilityChange, len(entries))
	for i, e := range entries {
		ids[i] = e.GetId()
		changes[i] = tags.VisibilityChange{ReceiptHandle: e.GetReceiptHandle(), VisibilitySeconds: e.GetVisibilitySeconds()}
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
	errs, err := s.store.ChangeVisibility(ctx, req.GetQueue(), changes)
	if err != nil {
		return nil, err
	}
	out := &tagqv1.ChangeMessageVisibilityBatchResponse{}
	out.Successful, out.Failed = batchResults(ids, errs)
	return out, nil
}

func (s *messageService) PeekMessage(ctx context.Context, req *tagqv1.PeekMessageRequest) (*tagqv1.PeekMessageResponse, error) {
	var msgs []tags.Message
	var err error
	if len(req.GetMessageIds()) > 0 {
		msgs, err = s.store.Peek(ctx, req.GetQueue(), req.GetMessageIds())
	} else {
		max := 1
		if req.MaxMessages != nil {
			max = int(req.GetMaxMessages())
		}
		msgs, err = s.store.PeekNext(ctx, req.GetQueue(), req.GetTag(), max)
	}
	if err != nil {
		return nil, err
	}
	return &tagqv1.PeekMessageResponse{Messages: toMessages(msgs)}, nil
}

func (s *messageService) DeadMessage(ctx context.Context, req *tagqv1.DeadMessageRequest) (*tagqv1.DeadMessageResponse, error) {
	errs, err := s.store.DeadLetter(ctx, req.GetQueue(), []tags.DeadRequest{{
		ReceiptHandle: req.GetReceiptHandle(), Reason: req.GetReason(), Description: req.GetDescription()}})
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	return &tagqv1.DeadMessageResponse{}, nil
}

func (s *messageService) DeadMessageBatch(ctx context.Context, req *tagqv1.DeadMessageBatchRequest) (*tagqv1.DeadMessageBatchResponse, error) {
	entries := req.GetEntries()
	ids := make([]string, len(entries))
	reqs := make([]tags.DeadRequest, len(entries))
	for i, e := range entries {
		ids[i] = e.GetId()
		reqs[i] = tags.DeadRequest{ReceiptHandle: e.GetReceiptHandle(), Reason: e.GetReason(), Description: e.GetDescription()}
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
	errs, err := s.store.DeadLetter(ctx, req.GetQueue(), reqs)
	if err != nil {
		return nil, err
	}
	out := &tagqv1.DeadMessageBatchResponse{}
	out.Successful, out.Failed = batchResults(ids, errs)
	return out, nil
}
