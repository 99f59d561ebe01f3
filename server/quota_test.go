package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// quotaTime sets miniredis's clock (the scripts' TIME) to ms into a second.
func (b *testBundle) quotaTime(ms int) time.Time {
	at := time.Date(2031, 3, 4, 5, 6, 7, ms*int(time.Millisecond), time.UTC)
	b.mr.SetTime(at)
	return at
}

func TestQuota_SendAndReceiveErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.quotaTime(300)
	created, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q",
		WriteQuotaPerSecond: i32(2), ReadQuotaPerSecond: i32(1)}})
	require.NoError(t, err)
	require.Equal(t, int32(2), created.GetQueue().GetWriteQuotaPerSecond())
	require.Equal(t, int32(1), created.GetQueue().GetReadQuotaPerSecond())

	// A batch stores the prefix that fits.
	res, err := b.m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("1")}, {Id: "b", Body: []byte("2")}, {Id: "c", Body: []byte("3")}}})
	require.NoError(t, err)
	require.Len(t, res.GetSuccessful(), 2)
	require.Len(t, res.GetFailed(), 1)
	require.Equal(t, "c", res.GetFailed()[0].GetId())
	require.Equal(t, "QUOTA_EXCEEDED", res.GetFailed()[0].GetReason())
	require.Contains(t, res.GetFailed()[0].GetMessage(), "write_quota_per_second")

	// One message: the call fails, with what to wait for.
	_, err = b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("4")})
	code, ei := info(t, err)
	require.Equal(t, codes.ResourceExhausted, code)
	require.Equal(t, "QUOTA_EXCEEDED", ei.GetReason())
	require.Equal(t, "write_quota_per_second", ei.GetMetadata()["quota"])
	require.Equal(t, "2", ei.GetMetadata()["limit"])
	require.Equal(t, "q", ei.GetMetadata()["queue"])
	retry, err := strconv.Atoi(ei.GetMetadata()["retry_after_ms"])
	require.NoError(t, err)
	require.True(t, retry >= 1 && retry <= 700, "retry_after_ms %d", retry)

	// REST: 429 with the same ErrorInfo.
	code2, body := b.do(t, "POST", "/v1/queues/q/messages", `{"body": "NQ=="}`)
	require.Equal(t, 429, code2, body)
	require.Contains(t, body, `"QUOTA_EXCEEDED"`)
	require.Contains(t, body, `"retry_after_ms"`)

	// Receive: what the read quota leaves, then the error.
	got, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Len(t, got.GetMessages(), 1)
	_, err = b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(10), WaitSeconds: i32(5)})
	code, ei = info(t, err)
	require.Equal(t, codes.ResourceExhausted, code)
	require.Equal(t, "QUOTA_EXCEEDED", ei.GetReason())
	require.Equal(t, "read_quota_per_second", ei.GetMetadata()["quota"])
	require.Equal(t, "default", ei.GetMetadata()["tag"])

	// A tag of its own quota: none.
	tg, err := b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: "bulk", ReadQuotaPerSecond: i32(0)}})
	require.NoError(t, err)
	require.Equal(t, int32(0), tg.GetTag().GetReadQuotaPerSecond())
	_, err = b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: "bad", ReadQuotaPerSecond: i32(-1)}})
	code, ei = info(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "tag.read_quota_per_second", ei.GetMetadata()["field"])

	// Update: the mask sets and (unset) removes.
	up, err := b.q.UpdateQueue(b.ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "q", ReadQuotaPerSecond: i32(9)},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"read_quota_per_second", "write_quota_per_second"}}})
	require.NoError(t, err)
	require.Equal(t, int32(9), up.GetQueue().GetReadQuotaPerSecond())
	require.Equal(t, int32(0), up.GetQueue().GetWriteQuotaPerSecond())
	_, err = b.q.UpdateQueue(b.ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "q", WriteQuotaPerSecond: i32(-3)},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"write_quota_per_second"}}})
	_, ei = info(t, err)
	require.Equal(t, "queue.write_quota_per_second", ei.GetMetadata()["field"])
}

// Publish answers the entries over the write quota as SendMessageBatch
// would; Consume pauses until the next second instead of failing.
func TestQuota_Streams(t *testing.T) {
	t.Parallel()
	b := setup(t)
	at := b.quotaTime(900)
	b.queueWith(t, &tagqv1.Queue{Name: "q", WriteQuotaPerSecond: i32(3), ReadQuotaPerSecond: i32(2)})

	ctx, cancel := context.WithTimeout(b.ctx, streamWait)
	defer cancel()
	pub, err := b.m.Publish(ctx)
	require.NoError(t, err)
	var entries []*tagqv1.SendMessageBatchEntry
	for i := range 5 {
		entries = append(entries, &tagqv1.SendMessageBatchEntry{Id: fmt.Sprint(i), Body: fmt.Appendf(nil, "m%d", i)})
	}
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "q", Entries: entries}))
	r, err := pub.Recv()
	require.NoError(t, err)
	require.Len(t, r.GetSuccessful(), 3)
	require.Len(t, r.GetFailed(), 2)
	require.Equal(t, "QUOTA_EXCEEDED", r.GetFailed()[1].GetReason())
	require.NoError(t, pub.CloseSend())

	st, _ := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q", MaxOutstandingMessages: i32(10)})
	msgs, _ := recvMessages(t, st, 2)
	require.Len(t, msgs, 2)
	// The third waits for the next second of Redis's clock (the stream
	// looks again after the 100 ms left of this one); no error comes.
	b.mr.SetTime(at.Add(time.Second))
	msgs, _ = recvMessages(t, st, 1)
	require.Equal(t, "m2", string(msgs[0].GetMessage().GetBody()))
	require.Equal(t, int64(3), b.tagState(t, "q", "default").GetReceivedTotal())
}

// Beyond MaxStreams open, a Publish or Consume stream ends at once with
// RESOURCE_EXHAUSTED (TOO_MANY_STREAMS); closing one makes room.
func TestLimits_MaxStreams(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.MaxStreams = 1 })
	b.queueWith(t, &tagqv1.Queue{Name: "q"})
	b.sendN(t, "q", 1)
	st, stop := b.consume(t, &tagqv1.ConsumeOpen{Queue: "q"})
	recvMessages(t, st, 1) // open and pushing

	ctx, cancel := context.WithTimeout(b.ctx, streamWait)
	defer cancel()
	pub, err := b.m.Publish(ctx)
	require.NoError(t, err)
	_, err = pub.Recv()
	code, ei := info(t, err)
	require.Equal(t, codes.ResourceExhausted, code)
	require.Equal(t, ReasonTooManyStreams, ei.GetReason())
	require.Equal(t, "1", ei.GetMetadata()["limit"])

	stop()
	_, _ = st.Recv() // the stream has ended here; the server lets go of it soon after
	require.Eventually(t, func() bool {
		p, err := b.m.Publish(ctx)
		require.NoError(t, err)
		if err := p.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{{Id: "a", Body: []byte("x")}}}); err != nil {
			return false
		}
		_, err = p.Recv()
		return err == nil
	}, streamWait, 10*time.Millisecond)
}

// Health Watch streams, which need no credentials, are bounded apart from
// Publish and Consume streams: at most MaxHealthWatchesPerConnection on a
// connection and MaxHealthWatches in all, one beyond ending at once with
// RESOURCE_EXHAUSTED (TOO_MANY_STREAMS); tagq_health_watches_open counts
// them, and closing one makes room.
func TestLimits_HealthWatches(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.MaxHealthWatches = 10 })
	lis, err := net.Listen("tcp", "127.0.0.1:0") // connections told apart by their addresses
	require.NoError(t, err)
	go func() { _ = b.srv.GRPC().Serve(lis) }()
	dial := func() healthpb.HealthClient {
		cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		t.Cleanup(func() { _ = cc.Close() })
		return healthpb.NewHealthClient(cc)
	}
	watch := func(h healthpb.HealthClient) (context.CancelFunc, error) {
		ctx, cancel := context.WithCancel(b.ctx)
		st, err := h.Watch(ctx, &healthpb.HealthCheckRequest{})
		require.NoError(t, err)
		_, err = st.Recv()
		if err != nil {
			cancel()
		}
		return cancel, err
	}
	refused := func(err error, limit string) {
		t.Helper()
		code, ei := info(t, err)
		require.Equal(t, codes.ResourceExhausted, code)
		require.Equal(t, ReasonTooManyStreams, ei.GetReason())
		require.Equal(t, limit, ei.GetMetadata()["limit"])
	}
	open := func() float64 {
		mfs, err := b.reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "tagq_health_watches_open" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return -1
	}

	one := dial()
	var cancels []context.CancelFunc
	for range MaxHealthWatchesPerConnection {
		cancel, err := watch(one)
		require.NoError(t, err)
		cancels = append(cancels, cancel)
	}
	_, err = watch(one)
	refused(err, fmt.Sprint(MaxHealthWatchesPerConnection))
	two := dial()
	for range 2 {
		_, err := watch(two)
		require.NoError(t, err)
	}
	_, err = watch(two)
	refused(err, "10")
	require.Equal(t, 10.0, open())

	cancels[0]()
	require.Eventually(t, func() bool { return open() == 9 }, streamWait, 5*time.Millisecond)
	_, err = watch(one)
	require.NoError(t, err, "room again")
	for _, c := range cancels[1:] {
		c()
	}
}
