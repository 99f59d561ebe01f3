package server

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Every wait in these tests is bounded: a regression fails, never hangs.
const streamWait = 10 * time.Second

func i64(v int64) *int64 { return &v }

func (b *testBundle) queueWith(t *testing.T, q *tagqv1.Queue) {
	t.Helper()
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: q})
	require.NoError(t, err)
}

func (b *testBundle) sendN(t *testing.T, q string, n int) {
	t.Helper()
	for i := range n {
		_, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: q, Body: fmt.Appendf(nil, "m%d", i)})
		require.NoError(t, err)
	}
}

func (b *testBundle) tagState(t *testing.T, q, tag string) *tagqv1.TagState {
	t.Helper()
	got, err := b.q.GetTag(b.ctx, &tagqv1.GetTagRequest{Queue: q, Name: tag})
	require.NoError(t, err)
	return got.GetTag().GetState()
}

type consumeStream = grpc.BidiStreamingClient[tagqv1.ConsumeRequest, tagqv1.ConsumeResponse]

func (b *testBundle) consume(t *testing.T, open *tagqv1.ConsumeOpen) (consumeStream, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, streamWait)
	t.Cleanup(cancel)
	st, err := b.m.Consume(ctx)
	require.NoError(t, err)
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Open: open}))
	return st, cancel
}

// publish opens a Publish stream, ended after streamWait at the latest.
func (b *testBundle) publish(t *testing.T) grpc.BidiStreamingClient[tagqv1.PublishRequest, tagqv1.PublishResponse] {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, streamWait)
	t.Cleanup(cancel)
	st, err := b.m.Publish(ctx)
	require.NoError(t, err)
	return st
}

// recvMessages reads responses until it has n messages (confirmations
// are collected too).
func recvMessages(t *testing.T, st consumeStream, n int) ([]*tagqv1.ConsumeMessage, []*tagqv1.ConsumeConfirmation) {
	t.Helper()
	var msgs []*tagqv1.ConsumeMessage
	var confs []*tagqv1.ConsumeConfirmation
	for len(msgs) < n {
		r, err := st.Recv()
		require.NoError(t, err)
		msgs = append(msgs, r.GetMessages()...)
		confs = append(confs, r.GetConfirmations()...)
	}
	return msgs, confs
}

func recvConfirmations(t *testing.T, st consumeStream, n int) []*tagqv1.ConsumeConfirmation {
	t.Helper()
	var confs []*tagqv1.ConsumeConfirmation
	for len(confs) < n {
		r, err := st.Recv()
		require.NoError(t, err)
		require.Empty(t, r.GetMessages(), "no credit was given, so no message may come")
		confs = append(confs, r.GetConfirmations()...)
	}
	return confs
}

func TestPublish_AnswersEveryFrameBySeq(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	st := b.publish(t)
	// Frames in flight together: two good, one to a missing queue, one
	// malformed (duplicate entry ids).
	require.NoError(t, st.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("1")}, {Id: "b", Body: []byte("2")}}}))
	require.NoError(t, st.Send(&tagqv1.PublishRequest{Seq: 2, Queue: "nope", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("x")}}}))
	require.NoError(t, st.Send(&tagqv1.PublishRequest{Seq: 3, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("x")}, {Id: "a", Body: []byte("y")}}}))
	require.NoError(t, st.Send(&tagqv1.PublishRequest{Seq: 4, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "c", Body: []byte("3")}, {Id: "d", Body: []byte{}}}}))
	require.NoError(t, st.CloseSend())
	got := map[uint64]*tagqv1.PublishResponse{}
	for {
		r, err := st.Recv()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got[r.GetSeq()] = r
	}
	require.Len(t, got, 4)
	require.Len(t, got[1].GetSuccessful(), 2)
	require.Nil(t, got[1].GetError())
	require.Equal(t, int32(codes.NotFound), got[2].GetError().GetCode())
	require.Equal(t, "QUEUE_NOT_FOUND", got[2].GetError().GetReason())
	require.Equal(t, "queue", got[2].GetError().GetField())
	require.Equal(t, int32(codes.InvalidArgument), got[3].GetError().GetCode())
	require.Equal(t, "DUPLICATE_BATCH_ENTRY_ID", got[3].GetError().GetReason())
	require.Equal(t, "entries[1].id", got[3].GetError().GetField())
	// Frame 4: one stored, one refused (empty message), as SendMessageBatch.
	require.Len(t, got[4].GetSuccessful(), 1)
	require.Equal(t, "c", got[4].GetSuccessful()[0].GetId())
	require.Len(t, got[4].GetFailed(), 1)
	require.Equal(t, "d", got[4].GetFailed()[0].GetId())
	require.Equal(t, int64(3), b.tagState(t, "q", "default").GetAvailable())
}

func TestConsume_PushesWithinCreditAndAcks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	b.sendN(t, "q", 10)
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", MaxOutstandingMessages: i32(3), Confirm: true})
	msgs, _ := recvMessages(t, st, 3)
	require.Len(t, msgs, 3, "never more than max_outstanding_messages")
	require.Equal(t, int64(3), b.tagState(t, "q", "default").GetInFlight())
	// Acking one gives credit for one more.
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Acks: []uint64{msgs[0].GetDeliveryId()}}))
	var more []*tagqv1.ConsumeMessage
	var confs []*tagqv1.ConsumeConfirmation
	for len(more) < 1 || len(confs) < 1 {
		r, err := st.Recv()
		require.NoError(t, err)
		more = append(more, r.GetMessages()...)
		confs = append(confs, r.GetConfirmations()...)
	}
	require.Len(t, more, 1)
	require.Equal(t, msgs[0].GetDeliveryId(), confs[0].GetDeliveryId())
	require.Equal(t, tagqv1.ConsumeOperation_CONSUME_OPERATION_ACK, confs[0].GetOperation())
	require.Nil(t, confs[0].GetError())
	s := b.tagState(t, "q", "default")
	require.Equal(t, int64(1), s.GetDeletedTotal())
	require.Equal(t, int64(3), s.GetInFlight())
	require.Equal(t, int64(6), s.GetAvailable())
}

func TestConsume_ByteLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	big := make([]byte, 700)
	for range 4 {
		_, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: big})
		require.NoError(t, err)
	}
	// 1 KiB of bodies: one 700-byte message at a time.
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", MaxOutstandingBytes: i64(1024), Confirm: true})
	msgs, _ := recvMessages(t, st, 1)
	require.Len(t, msgs, 1)
	for range 3 {
		require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Acks: []uint64{msgs[len(msgs)-1].GetDeliveryId()}}))
		var next []*tagqv1.ConsumeMessage
		for len(next) == 0 {
			r, err := st.Recv()
			require.NoError(t, err)
			next = append(next, r.GetMessages()...)
		}
		require.Len(t, next, 1, "over the byte limit")
		msgs = append(msgs, next...)
	}
	require.Len(t, msgs, 4)
}

func TestConsume_CleanCloseGivesBackAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	b.sendN(t, "q", 3)
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", VisibilitySeconds: i32(600)})
	msgs, _ := recvMessages(t, st, 3)
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Acks: []uint64{msgs[0].GetDeliveryId()}}))
	require.NoError(t, st.CloseSend())
	_, err := st.Recv()
	require.ErrorIs(t, err, io.EOF, "a clean close ends OK")
	// The ack was applied before the end, and the other two are visible
	// now, not in 600 s.
	got, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Len(t, got.GetMessages(), 2)
	for _, m := range got.GetMessages() {
		require.Equal(t, int32(2), m.GetReceiveCount())
	}
	require.Equal(t, int64(1), b.tagState(t, "q", "default").GetDeletedTotal())
}

func TestConsume_BrokenStreamKeepsMessagesInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	b.sendN(t, "q", 2)
	st, cancel := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", VisibilitySeconds: i32(600)})
	recvMessages(t, st, 2)
	cancel()
	// The server sees the stream end; the messages stay in flight until
	// their deadline (the client may still be handling them).
	require.Eventually(t, func() bool { return b.srv.messages.streams.Load() == 0 }, streamWait, time.Millisecond)
	got, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(10), WaitSeconds: i32(0)})
	require.NoError(t, err)
	require.Empty(t, got.GetMessages())
	require.Equal(t, int64(2), b.tagState(t, "q", "default").GetInFlight())
}

func TestConsume_NackExtendDeadAndUnknown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "dlq", DeadLetterQueue: true})
	b.queueWith(t, &tagqv1.Queue{Name: "q", RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 5}})
	b.sendN(t, "q", 3)
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", MaxOutstandingMessages: i32(3), Confirm: true, VisibilitySeconds: i32(600)})
	msgs, _ := recvMessages(t, st, 3)
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{
		Extends: []*tagqv1.ConsumeExtend{{DeliveryId: msgs[0].GetDeliveryId(), VisibilitySeconds: 900}},
		Deads:   []*tagqv1.ConsumeDead{{DeliveryId: msgs[1].GetDeliveryId(), Reason: "BAD_ORDER", Description: "no such sku"}},
		Acks:    []uint64{9999},
		Flow:    &tagqv1.ConsumeFlow{MaxOutstandingMessages: i32(2)},
	}))
	confs := recvConfirmations(t, st, 3)
	byID := map[uint64]*tagqv1.ConsumeConfirmation{}
	for _, c := range confs {
		byID[c.GetDeliveryId()] = c
	}
	require.Nil(t, byID[msgs[0].GetDeliveryId()].GetError())
	require.Nil(t, byID[msgs[1].GetDeliveryId()].GetError())
	require.Equal(t, "INVALID_RECEIPT_HANDLE", byID[9999].GetError().GetReason())
	// The dead letter is in the DLQ with its reason.
	dl, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "dlq", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Len(t, dl.GetMessages(), 1)
	require.Equal(t, "BAD_ORDER", dl.GetMessages()[0].GetDeadLetter().GetReason())
	require.Equal(t, "no such sku", dl.GetMessages()[0].GetDeadLetter().GetDescription())
	// Nack the third after 0 ms: outstanding 1 (< 2), so it comes back on
	// this stream, received a second time.
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Nacks: []*tagqv1.ConsumeNack{{DeliveryId: msgs[2].GetDeliveryId()}}}))
	var again []*tagqv1.ConsumeMessage
	for len(again) == 0 {
		r, err := st.Recv()
		require.NoError(t, err)
		again = append(again, r.GetMessages()...)
	}
	require.Equal(t, msgs[2].GetMessage().GetMessageId(), again[0].GetMessage().GetMessageId())
	require.Equal(t, int32(2), again[0].GetMessage().GetReceiveCount())
	s := b.tagState(t, "q", "default")
	require.Equal(t, int64(1), s.GetDeadTotal())
	require.Equal(t, int64(2), s.GetInFlight())
}

func TestConsume_InterleavedWithUnaryCalls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	b.sendN(t, "q", 2)
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", Confirm: true, MaxOutstandingMessages: i32(2)})
	msgs, _ := recvMessages(t, st, 2)
	// A pushed message's receipt handle works with the unary calls.
	_, err := b.m.DeleteMessage(b.ctx, &tagqv1.DeleteMessageRequest{Queue: "q", ReceiptHandle: msgs[0].GetMessage().GetReceiptHandle()})
	require.NoError(t, err)
	_, err = b.m.ChangeMessageVisibility(b.ctx, &tagqv1.ChangeMessageVisibilityRequest{Queue: "q",
		ReceiptHandle: msgs[1].GetMessage().GetReceiptHandle(), VisibilitySeconds: 0})
	require.NoError(t, err)
	// The stream's ack of the deleted one is no error (deleting twice is
	// not); the nacked one is received again — by whoever asks first.
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Acks: []uint64{msgs[0].GetDeliveryId()}}))
	var confs []*tagqv1.ConsumeConfirmation
	var again []*tagqv1.ConsumeMessage
	for len(confs) < 1 || len(again) < 1 {
		r, err := st.Recv()
		require.NoError(t, err)
		confs = append(confs, r.GetConfirmations()...)
		again = append(again, r.GetMessages()...)
	}
	require.Nil(t, confs[0].GetError())
	require.Equal(t, msgs[1].GetMessage().GetMessageId(), again[0].GetMessage().GetMessageId())
	// The stream's stale delivery of msgs[1] cannot extend it any more.
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Extends: []*tagqv1.ConsumeExtend{{DeliveryId: msgs[1].GetDeliveryId(), VisibilitySeconds: 60}}}))
	c := recvConfirmations(t, st, 1)
	require.Equal(t, "RECEIPT_HANDLE_STALE", c[0].GetError().GetReason())
}

func TestConsume_WokenBySend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q"})
	got := make(chan []*tagqv1.ConsumeMessage, 1)
	go func() {
		r, err := st.Recv()
		if err == nil {
			got <- r.GetMessages()
		}
		close(got)
	}()
	b.sendN(t, "q", 1)
	select {
	case m := <-got:
		require.Len(t, m, 1)
	case <-time.After(streamWait):
		t.Fatal("the stream was not woken by the send")
	}
}

func TestConsume_ShutdownEndsStreamsAndGivesBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	b.sendN(t, "q", 2)
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", VisibilitySeconds: i32(600)})
	msgs, _ := recvMessages(t, st, 2)
	b.srv.messages.drainGrace = time.Millisecond // the client acks nothing more
	b.srv.Draining()
	_, err := st.Recv()
	code, ei := info(t, err)
	require.Equal(t, codes.Unavailable, code)
	require.Equal(t, ReasonServerShuttingDown, ei.GetReason())
	got, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Len(t, got.GetMessages(), len(msgs), "given back at once")
}

func TestConsume_BadOpen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	for _, tc := range []struct {
		name   string
		first  *tagqv1.ConsumeRequest
		code   codes.Code
		reason string
		field  string
	}{
		{"no open", &tagqv1.ConsumeRequest{Acks: []uint64{1}}, codes.InvalidArgument, "INVALID_ARGUMENT_RANGE", "open"},
		{"no queue", &tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "nope"}}, codes.NotFound, "QUEUE_NOT_FOUND", "open.queue"},
		{"no tag", &tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "q", Tag: "x"}}, codes.NotFound, "TAG_NOT_FOUND", "open.tag"},
		{"bad name", &tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "a b"}}, codes.InvalidArgument, "INVALID_NAME", "open.queue"},
		{"credit", &tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "q", MaxOutstandingMessages: i32(0)}},
			codes.InvalidArgument, "INVALID_ARGUMENT_RANGE", "open.max_outstanding_messages"},
		{"bytes", &tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "q", MaxOutstandingBytes: i64(10)}},
			codes.InvalidArgument, "INVALID_ARGUMENT_RANGE", "open.max_outstanding_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(b.ctx, streamWait)
			defer cancel()
			st, err := b.m.Consume(ctx)
			require.NoError(t, err)
			require.NoError(t, st.Send(tc.first))
			_, err = st.Recv()
			code, ei := info(t, err)
			require.Equal(t, tc.code, code)
			require.Equal(t, tc.reason, ei.GetReason())
			if tc.field != "" {
				require.Equal(t, tc.field, ei.GetMetadata()["field"])
			}
		})
	}
	// A bad settlement ends the stream naming the field.
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q"})
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Nacks: []*tagqv1.ConsumeNack{{DeliveryId: 1, DelayMilliseconds: proto.Int32(-1)}}}))
	_, err := st.Recv()
	code, ei := info(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "nacks[0].delay_milliseconds", ei.GetMetadata()["field"])
}

func TestConsume_FlowZeroPausesDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	b.sendN(t, "q", 3)
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", MaxOutstandingMessages: i32(1), Confirm: true})
	msgs, _ := recvMessages(t, st, 1)
	// Pause, then ack: the ack is confirmed, and nothing more comes.
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Flow: &tagqv1.ConsumeFlow{MaxOutstandingMessages: i32(0)}}))
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Acks: []uint64{msgs[0].GetDeliveryId()}}))
	c := recvConfirmations(t, st, 1)
	require.Nil(t, c[0].GetError())
	require.Equal(t, int64(2), b.tagState(t, "q", "default").GetAvailable(), "paused: nothing pushed")
	// Resume: the next comes.
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Flow: &tagqv1.ConsumeFlow{MaxOutstandingMessages: i32(5)}}))
	more, _ := recvMessages(t, st, 2)
	require.Len(t, more, 2)
}

// A delivery whose visibility ends unsettled stops holding credit: the
// message, visible again, comes back on the same stream under a new
// delivery id, and settling the old one is refused as not outstanding.
func TestConsume_ExpiredDeliveryFreesCredit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	b.sendN(t, "q", 1)
	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", MaxOutstandingMessages: i32(1), VisibilitySeconds: i32(1), Confirm: true})
	first, _ := recvMessages(t, st, 1)
	again, _ := recvMessages(t, st, 1) // after its 1 s visibility, with no settlement
	require.Equal(t, first[0].GetMessage().GetMessageId(), again[0].GetMessage().GetMessageId())
	require.NotEqual(t, first[0].GetDeliveryId(), again[0].GetDeliveryId())
	require.Equal(t, int32(2), again[0].GetMessage().GetReceiveCount())
	require.NoError(t, st.Send(&tagqv1.ConsumeRequest{Acks: []uint64{first[0].GetDeliveryId()}}))
	c := recvConfirmations(t, st, 1)
	require.Equal(t, "INVALID_RECEIPT_HANDLE", c[0].GetError().GetReason())
}

// A Publish stream whose client goes away ends on the server: its reader
// may see the end before the loop does and leave without handing it over
// (each round below did that about half the time before the loop watched
// the stream's context too).
func TestPublish_EndsWhenTheClientCancels(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "p"}})
	require.NoError(t, err)
	for range 20 {
		ctx, cancel := context.WithCancel(b.ctx)
		st, err := b.m.Publish(ctx)
		require.NoError(t, err)
		require.NoError(t, st.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "p",
			Entries: []*tagqv1.SendMessageBatchEntry{{Id: "a", Body: []byte("x")}}}))
		_, err = st.Recv()
		require.NoError(t, err)
		cancel()
		require.Eventually(t, func() bool { return b.srv.messages.streams.Load() == 0 }, streamWait, time.Millisecond)
	}
}

// On shutdown a Publish stream reads no more frames, answers those it
// has, and ends UNAVAILABLE. A frame sent as the shutdown begins may be
// read before it or not: either way it is stored if and only if it is
// answered. The stream's goroutines end.
func TestPublish_ShutdownAnswersWhatItHasAndEndsUnavailable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	st := b.publish(t)
	frame := func(seq uint64) *tagqv1.PublishRequest {
		return &tagqv1.PublishRequest{Seq: seq, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{{Id: "a", Body: []byte("x")}}}
	}
	require.NoError(t, st.Send(frame(1)))
	r, err := st.Recv()
	require.NoError(t, err)
	require.Len(t, r.GetSuccessful(), 1)

	b.srv.Draining()
	for seq := uint64(2); seq <= 5; seq++ {
		_ = st.Send(frame(seq)) // the stream may have ended already
	}
	answered := 1
	for {
		r, err := st.Recv()
		if err != nil {
			code, ei := info(t, err)
			require.Equal(t, codes.Unavailable, code)
			require.Equal(t, ReasonServerShuttingDown, ei.GetReason())
			break
		}
		require.Len(t, r.GetSuccessful(), 1, "frame %d", r.GetSeq())
		answered++
	}
	require.Equal(t, int64(answered), b.tagState(t, "q", "default").GetAvailable(), "stored if and only if answered")
	require.Eventually(t, func() bool { return b.srv.messages.streams.Load() == 0 }, streamWait, time.Millisecond)
}
