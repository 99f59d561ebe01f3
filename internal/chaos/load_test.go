package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// The load: producers (unary SendMessageBatch and Publish streams) and
// consumers (unary receive and Consume streams), each through one replica
// and moving to the other when a call fails, retrying through every
// failure a crash explains.

// clients are gRPC connections to each replica's fixed address.
type clients struct {
	conns [2]*grpc.ClientConn
	msgs  [2]tagqv1.MessageServiceClient
	qs    [2]tagqv1.QueueServiceClient
}

func dialReplicas(addrs [2]string) (*clients, error) {
	c := &clients{}
	for i, addr := range addrs {
		// Reconnect fast: a replica is back within a second or so.
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: 2 * time.Second,
				Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second}}))
		if err != nil {
			return nil, err
		}
		c.conns[i], c.msgs[i], c.qs[i] = cc, tagqv1.NewMessageServiceClient(cc), tagqv1.NewQueueServiceClient(cc)
	}
	return c, nil
}

func (c *clients) close() {
	for _, cc := range c.conns {
		_ = cc.Close()
	}
}

// load runs the producers and consumers against the clients.
type load struct {
	c       *clients
	led     *ledger
	nextSeq atomic.Int64
}

// retryPause is how long a client waits before it retries a failed call
// (through the other replica): pacing, not synchronisation.
const retryPause = 50 * time.Millisecond

func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(retryPause):
	}
}

// takeSeqs takes the next n sequence numbers, or none once maxSeq is
// reached (so every load loop is bounded).
func (l *load) takeSeqs(n int) []int64 {
	end := l.nextSeq.Add(int64(n))
	if end > maxSeq {
		return nil
	}
	seqs := make([]int64, n)
	for i := range seqs {
		seqs[i] = end - int64(n) + int64(i)
	}
	return seqs
}

func entries(seqs []int64) []*tagqv1.SendMessageBatchEntry {
	es := make([]*tagqv1.SendMessageBatchEntry, len(seqs))
	for i, s := range seqs {
		es[i] = &tagqv1.SendMessageBatchEntry{Id: strconv.Itoa(i), Body: bodyOf(s)}
	}
	return es
}

// acceptBatch records the server's answer to a batch of seqs (a
// SendMessageBatch or a Publish frame): every entry must be stored.
func (l *load) acceptBatch(op string, seqs []int64, ok []*tagqv1.SendMessageBatchResult, failed []*tagqv1.BatchResultError) {
	for _, r := range ok {
		i, err := strconv.Atoi(r.GetId())
		if err != nil || i < 0 || i >= len(seqs) {
			l.led.failedReason(op+"-entry-id "+r.GetId(), codes.Internal, "")
			continue
		}
		l.led.ack(seqs[i], r.GetMessageId())
	}
	for _, f := range failed {
		l.led.failedReason(op+"-entry", codes.Unknown, f.GetReason())
	}
}

// unaryProducer sends batches with SendMessageBatch every tick until stop
// ends, each batch until the server acknowledges it or hard ends.
func (l *load) unaryProducer(stop, hard context.Context, pick int, every time.Duration) {
	l.eachBatch(stop, every, func(seqs []int64) {
		req := &tagqv1.SendMessageBatchRequest{Queue: queue, Entries: entries(seqs)}
		for hard.Err() == nil {
			l.led.attempt(seqs)
			ctx, cancel := context.WithTimeout(hard, callTimeout)
			resp, err := l.c.msgs[pick].SendMessageBatch(ctx, req)
			cancel()
			if err == nil {
				l.acceptBatch("send", seqs, resp.GetSuccessful(), resp.GetFailed())
				break
			}
			l.led.failed("send", err)
			if !retriable(status.Code(err)) {
				break // reported as strange by failed; the seqs stay unacknowledged
			}
			pick ^= 1
			pause(hard)
		}
	})
}

// eachBatch calls send with the next batch of sequence numbers every
// tick, until stop ends or maxSeq is reached.
func (l *load) eachBatch(stop context.Context, every time.Duration, send func(seqs []int64)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-tick.C:
		}
		seqs := l.takeSeqs(batch)
		if seqs == nil {
			return
		}
		send(seqs)
	}
}

// publishProducer sends frames on a Publish stream, up to window of them
// unanswered; a frame unanswered when its stream breaks is sent again on
// the next stream (the other replica's).
func (l *load) publishProducer(stop, hard context.Context, pick int, every time.Duration) {
	const window = 4
	pending := map[uint64][]int64{} // frame seq -> message seqs
	var frameSeq uint64
	tick := time.NewTicker(every)
	defer tick.Stop()
	stopping := stop.Done()
	for hard.Err() == nil && (stopping != nil || len(pending) > 0) {
		sctx, cancel := context.WithCancel(hard)
		st, err := l.c.msgs[pick].Publish(sctx)
		if err != nil {
			cancel()
			l.led.failed("publish-open", err)
			pick ^= 1
			pause(hard)
			continue
		}
		resps := make(chan *tagqv1.PublishResponse)
		broken := make(chan error, 1)
		go func() {
			for {
				r, err := st.Recv()
				if err != nil {
					broken <- err
					return
				}
				select {
				case resps <- r:
				case <-sctx.Done():
					return
				}
			}
		}()
		// A Send that fails means the stream ended: Recv says how, and
		// the frames not answered are sent again on the next stream.
		sendable := true
		send := func(fs uint64) {
			if !sendable {
				return
			}
			l.led.attempt(pending[fs])
			if st.Send(&tagqv1.PublishRequest{Seq: fs, Queue: queue, Entries: entries(pending[fs])}) != nil {
				sendable = false
			}
		}
		for fs := range pending { // what the last stream left unanswered
			send(fs)
		}
		var err2 error
		for err2 == nil && (stopping != nil || len(pending) > 0) {
			var ticks <-chan time.Time
			if stopping != nil && sendable && len(pending) < window {
				ticks = tick.C
			}
			select {
			case <-stopping:
				stopping = nil
			case <-ticks:
				seqs := l.takeSeqs(batch)
				if seqs == nil {
					stopping = nil
					continue
				}
				frameSeq++
				pending[frameSeq] = seqs
				send(frameSeq)
			case r := <-resps:
				seqs, ok := pending[r.GetSeq()]
				if !ok {
					l.led.failedReason("publish-unknown-frame", codes.Internal, "")
					continue
				}
				if e := r.GetError(); e != nil {
					// The whole frame failed, nothing stored: send it again,
					// unless no retry can help (reported as strange).
					l.led.failedReason("publish-frame", codes.Code(e.GetCode()), e.GetReason())
					if !retriable(codes.Code(e.GetCode())) {
						delete(pending, r.GetSeq())
						continue
					}
					pause(hard)
					send(r.GetSeq())
					continue
				}
				l.acceptBatch("publish", seqs, r.GetSuccessful(), r.GetFailed())
				delete(pending, r.GetSeq())
			case err2 = <-broken:
			case <-hard.Done():
				err2 = hard.Err()
			}
		}
		if err2 == nil {
			_ = st.CloseSend()
		} else if hard.Err() == nil {
			l.led.failed("publish", err2)
			pick ^= 1
		}
		cancel()
		if err2 != nil {
			pause(hard)
		}
	}
}

// unaryConsumer receives from tag with ReceiveMessage and settles with the
// batch calls, until ctx ends.
func (l *load) unaryConsumer(ctx context.Context, tag string, pick int) {
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		resp, err := l.c.msgs[pick].ReceiveMessage(cctx, &tagqv1.ReceiveMessageRequest{Queue: queue, Tag: tag,
			MaxMessages: ptr[int32](10), WaitSeconds: ptr[int32](1)})
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				l.led.failed("receive", err)
				pick ^= 1
				pause(ctx)
			}
			continue
		}
		byAct := map[action][]*tagqv1.Message{}
		for _, m := range resp.GetMessages() {
			act := l.led.deliver(tag, fmt.Sprintf("receive on replica-%d", pick), m)
			byAct[act] = append(byAct[act], m)
		}
		for act, ms := range byAct {
			if act != actForget {
				pick = l.settleUnary(ctx, tag, act, ms, pick)
			}
		}
	}
}

// settleUnary deletes, nacks or dead-letters ms, retrying the entries that
// failed for want of a server a few times; a message left unsettled comes
// back after its visibility timeout.
func (l *load) settleUnary(ctx context.Context, tag string, act action, ms []*tagqv1.Message, pick int) int {
	op := map[action]string{actDelete: "delete", actNack: "nack", actDead: "dead"}[act]
	byID := map[string]*tagqv1.Message{}
	for i, m := range ms {
		byID[strconv.Itoa(i)] = m
	}
	for try := 0; try < 3 && len(byID) > 0 && ctx.Err() == nil; try++ {
		if try > 0 {
			pick ^= 1
			pause(ctx)
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		var ok []string
		var failed []*tagqv1.BatchResultError
		var err error
		switch act {
		case actDelete:
			req := &tagqv1.DeleteMessageBatchRequest{Queue: queue}
			for id, m := range byID {
				req.Entries = append(req.Entries, &tagqv1.DeleteMessageBatchEntry{Id: id, ReceiptHandle: m.GetReceiptHandle()})
			}
			var r *tagqv1.DeleteMessageBatchResponse
			if r, err = l.c.msgs[pick].DeleteMessageBatch(cctx, req); err == nil {
				ok, failed = r.GetSuccessful(), r.GetFailed()
			}
		case actNack:
			req := &tagqv1.ChangeMessageVisibilityBatchRequest{Queue: queue}
			for id, m := range byID {
				req.Entries = append(req.Entries, &tagqv1.ChangeMessageVisibilityBatchEntry{Id: id, ReceiptHandle: m.GetReceiptHandle()})
			}
			var r *tagqv1.ChangeMessageVisibilityBatchResponse
			if r, err = l.c.msgs[pick].ChangeMessageVisibilityBatch(cctx, req); err == nil {
				ok, failed = r.GetSuccessful(), r.GetFailed()
			}
		case actDead:
			req := &tagqv1.DeadMessageBatchRequest{Queue: queue}
			for id, m := range byID {
				req.Entries = append(req.Entries, &tagqv1.DeadMessageBatchEntry{Id: id, ReceiptHandle: m.GetReceiptHandle(), Reason: "POISON"})
			}
			var r *tagqv1.DeadMessageBatchResponse
			if r, err = l.c.msgs[pick].DeadMessageBatch(cctx, req); err == nil {
				ok, failed = r.GetSuccessful(), r.GetFailed()
			}
		}
		cancel()
		if err != nil {
			l.led.failed(op, err)
			for _, m := range byID {
				l.led.note(tag, m.GetMessageId(), "%s on replica-%d failed: %v", op, pick, status.Code(err))
			}
			continue
		}
		for _, id := range ok {
			l.led.settled(tag, act, byID[id].GetMessageId())
			delete(byID, id)
		}
		for _, f := range failed {
			l.led.note(tag, byID[f.GetId()].GetMessageId(), "%s on replica-%d failed: %s", op, pick, f.GetReason())
			code := codes.Unavailable
			if f.GetReason() != "BACKEND_UNAVAILABLE" {
				code = codes.FailedPrecondition
				delete(byID, f.GetId()) // not a failure to retry
			}
			l.led.failedReason(op, code, f.GetReason())
		}
	}
	return pick
}

// streamConsumer receives from tag on a Consume stream and settles on it
// with confirmations, reopening the stream (on the other replica) when it
// breaks, until ctx ends. Every streamCloseAfter deliveries it closes the
// stream cleanly (the server applies what was settled and gives the rest
// back at once) and opens another.
func (l *load) streamConsumer(ctx context.Context, tag string, pick int) {
	for ctx.Err() == nil {
		err := l.consumeOnce(ctx, tag, pick)
		if err != nil && ctx.Err() == nil {
			l.led.failed("consume", err)
			pick ^= 1
			pause(ctx)
		}
	}
}

const streamCloseAfter = 500

func (l *load) consumeOnce(ctx context.Context, tag string, pick int) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := l.c.msgs[pick].Consume(sctx)
	if err != nil {
		return err
	}
	if err := st.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: queue, Tag: tag,
		MaxOutstandingMessages: ptr[int32](20), Confirm: true}}); err != nil {
		return recvErr(st)
	}
	settling := map[uint64]string{} // delivery id -> message id, settled and not yet confirmed
	via := fmt.Sprintf("stream on replica-%d", pick)
	delivered, closed := 0, false
	for {
		resp, err := st.Recv()
		if err != nil {
			if closed && errors.Is(err, io.EOF) {
				err = nil // the server's end of a clean close
				if len(settling) > 0 {
					l.led.strangeNote("%s: a clean close ended with %d settlements unconfirmed", via, len(settling))
				}
			}
			for _, id := range settling {
				l.led.note(tag, id, "%s ended before a confirmation: %v", via, status.Code(err))
			}
			return err
		}
		req := &tagqv1.ConsumeRequest{}
		for _, cm := range resp.GetMessages() {
			id := cm.GetDeliveryId()
			delivered++
			act := l.led.deliver(tag, via, cm.GetMessage())
			if closed {
				l.led.note(tag, cm.GetMessage().GetMessageId(), "%s: pushed after the close, given back", via)
				continue
			}
			switch act {
			case actDelete:
				req.Acks = append(req.Acks, id)
			case actNack:
				req.Nacks = append(req.Nacks, &tagqv1.ConsumeNack{DeliveryId: id})
			case actDead:
				req.Deads = append(req.Deads, &tagqv1.ConsumeDead{DeliveryId: id, Reason: "POISON"})
			case actForget:
				continue
			}
			settling[id] = cm.GetMessage().GetMessageId()
		}
		for _, c := range resp.GetConfirmations() {
			act := map[tagqv1.ConsumeOperation]action{tagqv1.ConsumeOperation_CONSUME_OPERATION_ACK: actDelete,
				tagqv1.ConsumeOperation_CONSUME_OPERATION_NACK: actNack, tagqv1.ConsumeOperation_CONSUME_OPERATION_DEAD: actDead}[c.GetOperation()]
			if e := c.GetError(); e != nil {
				l.led.note(tag, settling[c.GetDeliveryId()], "%s: %s refused: %s", via, act, e.GetReason())
				l.led.failedReason("stream-"+map[action]string{actDelete: "ack", actNack: "nack", actDead: "dead"}[act],
					codes.Code(e.GetCode()), e.GetReason())
			} else {
				l.led.settled(tag, act, settling[c.GetDeliveryId()])
			}
			delete(settling, c.GetDeliveryId())
		}
		if len(req.Acks)+len(req.Nacks)+len(req.Deads) > 0 {
			if err := st.Send(req); err != nil {
				return recvErr(st) // the stream ended; Recv says how
			}
		}
		if !closed && delivered >= streamCloseAfter {
			closed = true
			if err := st.CloseSend(); err != nil {
				return recvErr(st)
			}
		}
	}
}

// recvErr is the status a stream ended with, once a Send found it ended
// (gRPC's Send says only io.EOF). What still arrives is dropped: its
// deliveries come back when their visibility passes.
func recvErr(st grpc.BidiStreamingClient[tagqv1.ConsumeRequest, tagqv1.ConsumeResponse]) error {
	for {
		if _, err := st.Recv(); err != nil {
			return err
		}
	}
}

// retriable says whether a call that failed with code may succeed when
// tried again: the replica or Redis was down, or the call timed out.
func retriable(code codes.Code) bool {
	return code == codes.Unavailable || code == codes.DeadlineExceeded
}

func ptr[T any](v T) *T { return &v }
