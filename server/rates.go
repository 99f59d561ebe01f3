package server

import (
	"context"
	"time"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// GetQueueRates serves the rates over time a storage keeps
// (tags.RateStorage): the Redis engine samples them on one tagqd at a time
// (redisstore/rates.go).
func (s *queueService) GetQueueRates(ctx context.Context, req *tagqv1.GetQueueRatesRequest) (*tagqv1.GetQueueRatesResponse, error) {
	w := req.GetWindowSeconds()
	if w == 0 {
		w = int32(tags.MaxRatesWindow / time.Second)
	}
	lo, hi := int32(tags.MinRatesWindow/time.Second), int32(tags.MaxRatesWindow/time.Second)
	if w < lo || w > hi {
		return nil, tags.Invalid(tags.ReasonInvalidArgumentRange, "window_seconds", "window_seconds must be from %d to %d (0: %d), not %d", lo, hi, hi, w)
	}
	rs, ok := s.store.(tags.RateStorage)
	if !ok {
		return nil, &tags.Error{Kind: tags.KindUnimplemented, Reason: tags.ReasonNotImplemented, Message: "this storage keeps no rates over time"}
	}
	r, err := rs.QueueRates(ctx, req.GetQueue(), req.GetTag(), time.Duration(w)*time.Second)
	if err != nil {
		return nil, err
	}
	out := &tagqv1.GetQueueRatesResponse{ResolutionSeconds: int32(r.Resolution / time.Second), EndTime: ts(r.End), Points: ratePoints(r.Queue)}
	for _, t := range r.Tags {
		out.Tags = append(out.Tags, &tagqv1.TagRates{Tag: t.Tag, Points: ratePoints(t.Points)})
	}
	return out, nil
}

func ratePoints(ps []tags.RatePoint) []*tagqv1.RatePoint {
	out := make([]*tagqv1.RatePoint, len(ps))
	for i, p := range ps {
		out[i] = &tagqv1.RatePoint{Time: ts(p.Time), InPerSecond: p.In, ReceivedPerSecond: p.Received,
			DeletedPerSecond: p.Deleted, DeadPerSecond: p.Dead}
	}
	return out
}
