package server

import (
	"context"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

type redriveService struct {
	tagqv1.UnimplementedRedriveServiceServer
	store tags.Storage
}

func (s *redriveService) StartMessageMove(ctx context.Context, req *tagqv1.StartMessageMoveRequest) (*tagqv1.StartMessageMoveResponse, error) {
	t, err := s.store.StartMove(ctx, req.GetDeadLetterQueue(), req.GetSourceQueue(), req.GetSourceTag(), req.GetMaxMessagesPerSecond())
	if err != nil {
		return nil, err
	}
	return &tagqv1.StartMessageMoveResponse{Task: toMoveTask(t)}, nil
}

func (s *redriveService) ListMessageMoves(ctx context.Context, req *tagqv1.ListMessageMovesRequest) (*tagqv1.ListMessageMovesResponse, error) {
	ts, err := s.store.ListMoves(ctx, req.GetDeadLetterQueue())
	if err != nil {
		return nil, err
	}
	out := &tagqv1.ListMessageMovesResponse{}
	for _, t := range ts {
		out.Tasks = append(out.Tasks, toMoveTask(t))
	}
	return out, nil
}

func (s *redriveService) CancelMessageMove(ctx context.Context, req *tagqv1.CancelMessageMoveRequest) (*tagqv1.CancelMessageMoveResponse, error) {
	t, err := s.store.CancelMove(ctx, req.GetDeadLetterQueue(), req.GetTaskId())
	if err != nil {
		return nil, err
	}
	return &tagqv1.CancelMessageMoveResponse{Task: toMoveTask(t)}, nil
}
