package server

import (
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// MaxPublishFramesInFlight bounds the frames one Publish stream has being
// stored at once; the stream reads no further frame until one is answered
// (HTTP/2 flow control then holds the client back).
const MaxPublishFramesInFlight = 64

// Publish stores each request frame as SendMessageBatch would and answers
// it by seq once stored (S17). Frames are stored concurrently, so answers
// may come out of order. A frame's own failure is answered in its response
// and the stream goes on. When the client closes its side, the frames in
// flight are answered and the stream ends OK; when the server shuts down,
// it reads no more frames, answers those it has, and ends UNAVAILABLE.
func (s *messageService) Publish(stream grpc.BidiStreamingServer[tagqv1.PublishRequest, tagqv1.PublishResponse]) error {
	ctx := stream.Context()
	s.streams.Add(1)
	defer s.streams.Add(-1)
	type recv struct {
		req *tagqv1.PublishRequest
		err error
	}
	reqs := make(chan recv)
	go func() {
		for {
			req, err := stream.Recv()
			select {
			case reqs <- recv{req, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var (
		wg      sync.WaitGroup
		sendMu  sync.Mutex
		sendErr error
		slots   = make(chan struct{}, MaxPublishFramesInFlight)
	)
	answer := func(resp *tagqv1.PublishResponse) {
		sendMu.Lock()
		defer sendMu.Unlock()
		if sendErr == nil {
			sendErr = stream.Send(resp)
		}
	}
	for {
		var r recv
		select {
		case r = <-reqs:
		case <-ctx.Done():
			// The reader may have seen the end first and left without a word.
			wg.Wait()
			return ctx.Err()
		case <-s.drain:
			wg.Wait()
			return statusWith(codes.Unavailable, ReasonServerShuttingDown, "the server is shutting down: publish again", "", nil)
		}
		if r.err != nil {
			wg.Wait()
			if errors.Is(r.err, io.EOF) {
				return sendErr
			}
			return r.err
		}
		// A frame its decoding refused (a batch over its limit) is
		// answered with the refusal.
		if err := checkReadable(r.req); err != nil {
			answer(&tagqv1.PublishResponse{Seq: r.req.GetSeq(), Error: toStreamError(err)})
			continue
		}
		// A frame is held in flight until answered; one that does not fit
		// is answered with the refusal (the stream goes on).
		size := int64(proto.Size(r.req))
		if !s.inflight.Reserve(size) {
			s.refused.Inc()
			answer(&tagqv1.PublishResponse{Seq: r.req.GetSeq(), Error: toStreamError(s.inflight.refusal())})
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			s.inflight.add(-size)
			wg.Wait()
			return ctx.Err()
		}
		wg.Add(1)
		go func(req *tagqv1.PublishRequest) {
			defer func() { <-slots; s.inflight.add(-size); wg.Done() }()
			resp := &tagqv1.PublishResponse{Seq: req.GetSeq()}
			defer func() {
				if p := recover(); p != nil { // as recoverPanics does for a unary call
					panics.report(ctx, s.log, "/tagq.v1.MessageService/Publish (frame)", p)
					resp.Error = toStreamError(statusWith(codes.Internal, codeReasons[codes.Internal], "internal error", "", nil))
					answer(resp)
				}
			}()
			out, err := s.sendBatch(ctx, req.GetQueue(), req.GetEntries())
			if err != nil {
				resp.Error = toStreamError(notFoundField(req, err))
			} else {
				resp.Successful, resp.Failed = out.GetSuccessful(), out.GetFailed()
			}
			answer(resp)
		}(r.req)
	}
}
