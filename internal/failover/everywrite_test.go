package failover_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/redisproc"
)

// TestFailover_EveryWriteWaits freezes the replica's link under a tagqd
// with --auth and --ack-replicas 1, then makes every kind of write the
// API has: each must be refused UNAVAILABLE (the first after waiting for
// the replica: REPLICATION_TIMEOUT; the rest at once:
// REPLICAS_UNAVAILABLE). A write path that does not wait for replicas
// would succeed here, and fail the test. Reads still answer.
func TestFailover_EveryWriteWaits(t *testing.T) {
	gate(t)
	master := redisproc.Start(t)
	_, link := redisproc.StartReplica(t, master)
	admin := strings.Repeat("k", 40)
	keyFile := filepath.Join(t.TempDir(), "admin.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(admin), 0o600))
	d, _ := startTagqd(t, "--redis-url", master.URL(), "--ack-replicas", "1", "--ack-timeout", "1s",
		"--auth", "--admin-key-file", keyFile)
	cc, err := grpc.NewClient(d.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+admin), 2*time.Minute)
	defer cancel()
	qs, ms := tagqv1.NewQueueServiceClient(cc), tagqv1.NewMessageServiceClient(cc)
	rs, as := tagqv1.NewRedriveServiceClient(cc), tagqv1.NewAccessServiceClient(cc)

	// Before the freeze: a DLQ with a dead letter and a slow move task
	// back, a queue with a tag and messages in flight by receive and by a
	// Consume stream, a principal with a key and a permission.
	_, err = qs.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "dlq", DeadLetterQueue: true}})
	require.NoError(t, err)
	_, err = qs.CreateQueue(ctx, &tagqv1.CreateQueueRequest{NoDefaultTag: true, Queue: &tagqv1.Queue{Name: "q",
		RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 5}}})
	require.NoError(t, err)
	_, err = qs.CreateTag(ctx, &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: "t"}})
	require.NoError(t, err)
	batch := &tagqv1.SendMessageBatchRequest{Queue: "q"}
	for i := range 20 {
		batch.Entries = append(batch.Entries, &tagqv1.SendMessageBatchEntry{Id: fmt.Sprint(i), Body: []byte(fmt.Sprint("m", i))})
	}
	_, err = ms.SendMessageBatch(ctx, batch)
	require.NoError(t, err)
	got, err := ms.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", Tag: "t", MaxMessages: proto.Int32(10),
		VisibilitySeconds: proto.Int32(600)})
	require.NoError(t, err)
	require.Len(t, got.GetMessages(), 10)
	h := func(i int) string { return got.GetMessages()[i].GetReceiptHandle() }
	_, err = ms.DeadMessage(ctx, &tagqv1.DeadMessageRequest{Queue: "q", ReceiptHandle: h(0)})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p, err := ms.PeekMessage(ctx, &tagqv1.PeekMessageRequest{Queue: "dlq", MaxMessages: proto.Int32(1)})
		return err == nil && len(p.GetMessages()) == 1
	}, 10*time.Second, 20*time.Millisecond, "the dead letter reached the DLQ")
	move, err := rs.StartMessageMove(ctx, &tagqv1.StartMessageMoveRequest{DeadLetterQueue: "dlq", MaxMessagesPerSecond: 1})
	require.NoError(t, err)
	consume, err := ms.Consume(ctx)
	require.NoError(t, err)
	require.NoError(t, consume.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "q", Tag: "t", Confirm: true,
		MaxOutstandingMessages: proto.Int32(4), VisibilitySeconds: proto.Int32(600)}}))
	var deliveries []uint64
	for len(deliveries) < 4 {
		r, err := consume.Recv()
		require.NoError(t, err)
		for _, m := range r.GetMessages() {
			deliveries = append(deliveries, m.GetDeliveryId())
		}
	}
	_, err = as.CreatePrincipal(ctx, &tagqv1.CreatePrincipalRequest{Principal: &tagqv1.Principal{Name: "alice"}})
	require.NoError(t, err)
	key, err := as.IssueKey(ctx, &tagqv1.IssueKeyRequest{Principal: "alice"})
	require.NoError(t, err)
	_, err = as.SetPermission(ctx, &tagqv1.SetPermissionRequest{Grant: &tagqv1.PermissionGrant{Principal: "alice", Queue: "q",
		Permission: tagqv1.Permission_PERMISSION_SEND}})
	require.NoError(t, err)
	require.NoError(t, master.WaitInSync(ctx, 1, 20*time.Second))

	link.Freeze()
	reasons := map[string]int{}
	refused := func(what string, err error) {
		t.Helper()
		require.Error(t, err, "%s succeeded with the replica frozen: it did not wait for the replica", what)
		st := status.Convert(err)
		require.Equal(t, codes.Unavailable, st.Code(), "%s: %v", what, err)
		reason := ""
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				reason = info.GetReason()
			}
		}
		require.Contains(t, []string{"REPLICATION_TIMEOUT", "REPLICAS_UNAVAILABLE"}, reason, "%s: %v", what, err)
		reasons[reason]++
	}
	entryRefused := func(what string, failed []*tagqv1.BatchResultError, n int) {
		t.Helper()
		require.Len(t, failed, n, "%s: every entry refused", what)
		for _, f := range failed {
			require.Contains(t, []string{"REPLICATION_TIMEOUT", "REPLICAS_UNAVAILABLE"}, f.GetReason(), "%s: %v", what, f)
		}
	}
	call := func(what string, fn func() error) { t.Helper(); refused(what, fn()) }

	// Messages.
	call("SendMessage", func() error {
		_, err := ms.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")})
		return err
	})
	call("SendMessageBatch", func() error { _, err := ms.SendMessageBatch(ctx, batch); return err })
	call("SendMessage with a deduplication id", func() error {
		_, err := ms.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"), DeduplicationId: proto.String("d1")})
		return err
	})
	call("DeleteMessage", func() error {
		_, err := ms.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: "q", ReceiptHandle: h(1)})
		return err
	})
	call("DeleteMessageBatch", func() error {
		_, err := ms.DeleteMessageBatch(ctx, &tagqv1.DeleteMessageBatchRequest{Queue: "q",
			Entries: []*tagqv1.DeleteMessageBatchEntry{{Id: "a", ReceiptHandle: h(2)}}})
		return err
	})
	call("ChangeMessageVisibility", func() error {
		_, err := ms.ChangeMessageVisibility(ctx, &tagqv1.ChangeMessageVisibilityRequest{Queue: "q", ReceiptHandle: h(3)})
		return err
	})
	call("ChangeMessageVisibilityBatch", func() error {
		_, err := ms.ChangeMessageVisibilityBatch(ctx, &tagqv1.ChangeMessageVisibilityBatchRequest{Queue: "q",
			Entries: []*tagqv1.ChangeMessageVisibilityBatchEntry{{Id: "a", ReceiptHandle: h(4)}}})
		return err
	})
	call("DeadMessage", func() error {
		_, err := ms.DeadMessage(ctx, &tagqv1.DeadMessageRequest{Queue: "q", ReceiptHandle: h(5)})
		return err
	})
	call("DeadMessageBatch", func() error {
		_, err := ms.DeadMessageBatch(ctx, &tagqv1.DeadMessageBatchRequest{Queue: "q",
			Entries: []*tagqv1.DeadMessageBatchEntry{{Id: "a", ReceiptHandle: h(6)}}})
		return err
	})
	// Streams: a Publish frame fails whole; each Consume settlement is
	// confirmed with the error.
	pub, err := ms.Publish(ctx)
	require.NoError(t, err)
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "q", Entries: batch.Entries[:2]}))
	pr, err := pub.Recv()
	require.NoError(t, err)
	if e := pr.GetError(); e != nil {
		require.Equal(t, int32(codes.Unavailable), e.GetCode(), "Publish frame: %v", e)
		require.Contains(t, []string{"REPLICATION_TIMEOUT", "REPLICAS_UNAVAILABLE"}, e.GetReason(), "Publish frame: %v", e)
	} else {
		entryRefused("Publish frame", pr.GetFailed(), 2)
	}
	require.NoError(t, consume.Send(&tagqv1.ConsumeRequest{Acks: deliveries[:1],
		Nacks:   []*tagqv1.ConsumeNack{{DeliveryId: deliveries[1]}},
		Extends: []*tagqv1.ConsumeExtend{{DeliveryId: deliveries[2], VisibilitySeconds: 60}},
		Deads:   []*tagqv1.ConsumeDead{{DeliveryId: deliveries[3]}}}))
	confirmed := 0
	for confirmed < 4 {
		r, err := consume.Recv()
		require.NoError(t, err)
		for _, c := range r.GetConfirmations() {
			require.NotNil(t, c.GetError(), "%s of delivery %d confirmed with the replica frozen", c.GetOperation(), c.GetDeliveryId())
			require.Equal(t, int32(codes.Unavailable), c.GetError().GetCode(), "%v", c)
			confirmed++
		}
	}

	// Queues and tags.
	call("CreateQueue", func() error {
		_, err := qs.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q2"}})
		return err
	})
	call("UpdateQueue", func() error {
		_, err := qs.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "q", DelaySeconds: proto.Int32(1)},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"delay_seconds"}}})
		return err
	})
	call("CreateTag", func() error {
		_, err := qs.CreateTag(ctx, &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: "t2"}})
		return err
	})
	call("SeekTag", func() error {
		_, err := qs.SeekTag(ctx, &tagqv1.SeekTagRequest{Queue: "q", Name: "t",
			Target: &tagqv1.SeekTagRequest_MessageId{MessageId: got.GetMessages()[1].GetMessageId()}})
		return err
	})
	call("DeleteTag", func() error { _, err := qs.DeleteTag(ctx, &tagqv1.DeleteTagRequest{Queue: "q", Name: "t"}); return err })
	call("PurgeQueue", func() error { _, err := qs.PurgeQueue(ctx, &tagqv1.PurgeQueueRequest{Name: "q"}); return err })
	call("DeleteQueue", func() error { _, err := qs.DeleteQueue(ctx, &tagqv1.DeleteQueueRequest{Name: "q"}); return err })
	// Moves.
	call("StartMessageMove", func() error {
		_, err := rs.StartMessageMove(ctx, &tagqv1.StartMessageMoveRequest{DeadLetterQueue: "dlq"})
		return err
	})
	call("CancelMessageMove", func() error {
		_, err := rs.CancelMessageMove(ctx, &tagqv1.CancelMessageMoveRequest{DeadLetterQueue: "dlq", TaskId: move.GetTask().GetTaskId()})
		return err
	})
	// Access.
	call("CreatePrincipal", func() error {
		_, err := as.CreatePrincipal(ctx, &tagqv1.CreatePrincipalRequest{Principal: &tagqv1.Principal{Name: "bob"}})
		return err
	})
	call("IssueKey", func() error { _, err := as.IssueKey(ctx, &tagqv1.IssueKeyRequest{Principal: "alice"}); return err })
	call("RevokeKey", func() error {
		_, err := as.RevokeKey(ctx, &tagqv1.RevokeKeyRequest{Principal: "alice", KeyId: key.GetKey().GetKeyId()})
		return err
	})
	call("SetPermission", func() error {
		_, err := as.SetPermission(ctx, &tagqv1.SetPermissionRequest{Grant: &tagqv1.PermissionGrant{Principal: "alice", Queue: "dlq",
			Permission: tagqv1.Permission_PERMISSION_SEND}})
		return err
	})
	call("RevokePermission", func() error {
		_, err := as.RevokePermission(ctx, &tagqv1.RevokePermissionRequest{Principal: "alice", Queue: "q"})
		return err
	})
	call("DeletePrincipal", func() error {
		_, err := as.DeletePrincipal(ctx, &tagqv1.DeletePrincipalRequest{Name: "alice"})
		return err
	})
	t.Logf("refusals: %v", reasons)
	require.Equal(t, 1, reasons["REPLICATION_TIMEOUT"], "only the first write waited: the master was known short after it")

	// Reads answer.
	_, err = qs.GetQueue(ctx, &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
	_, err = qs.GetTag(ctx, &tagqv1.GetTagRequest{Queue: "q", Name: "t"})
	require.NoError(t, err)
	_, err = ms.PeekMessage(ctx, &tagqv1.PeekMessageRequest{Queue: "dlq", MaxMessages: proto.Int32(1)})
	require.NoError(t, err)
	_, err = rs.ListMessageMoves(ctx, &tagqv1.ListMessageMovesRequest{DeadLetterQueue: "dlq"})
	require.NoError(t, err)
	_, err = as.ListPrincipals(ctx, &tagqv1.ListPrincipalsRequest{})
	require.NoError(t, err)
	_, err = ms.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", Tag: "t", MaxMessages: proto.Int32(1)})
	require.NoError(t, err, "a receive does not wait for replicas (lost in a failover, it is delivered again)")
}
