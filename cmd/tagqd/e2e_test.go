package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func i32(v int32) *int32 { return &v }

// grpcReason is the ErrorInfo reason and field of a gRPC error.
func grpcReason(t *testing.T, err error) (codes.Code, string, string) {
	t.Helper()
	st, ok := status.FromError(err)
	require.True(t, ok, "not a status: %v", err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			require.Equal(t, "tagq", info.GetDomain())
			return st.Code(), info.GetReason(), info.GetMetadata()["field"]
		}
	}
	t.Fatalf("no ErrorInfo in %v", err)
	return 0, "", ""
}

func TestE2E_S1_TagsAreIndependent_REST(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		d.restOK("POST", "/v1/queues", `{"name": "orders"}`)
		d.restOK("POST", "/v1/queues/orders/tags", `{"name": "a"}`)
		d.restOK("POST", "/v1/queues/orders/tags", `{"name": "b"}`)
		sent := d.restOK("POST", "/v1/queues/orders/messages:batchSend", fmt.Sprintf(`{"entries": [
			{"id": "1", "body": %q}, {"id": "2", "body": %q}, {"id": "3", "body": %q}]}`, b64("m1"), b64("m2"), b64("m3")))
		require.Len(t, sent["successful"], 3)
		require.Empty(t, sent["failed"])

		recv := func(tag string) []any {
			out := d.restOK("POST", "/v1/queues/orders/messages:receive", fmt.Sprintf(`{"tag": %q, "max_messages": 10}`, tag))
			msgs, _ := out["messages"].([]any)
			return msgs
		}
		a, b := recv("a"), recv("b")
		require.Len(t, a, 3)
		require.Len(t, b, 3)
		for i, m := range a {
			require.Equal(t, b64(fmt.Sprintf("m%d", i+1)), jget(m, "body"))
			require.Equal(t, jget(b[i], "message_id"), jget(m, "message_id"))
			d.restOK("POST", "/v1/queues/orders/messages:delete", fmt.Sprintf(`{"receipt_handle": %q}`, jget(m, "receipt_handle")))
		}
		stateA := d.restOK("GET", "/v1/queues/orders/tags/a", "")
		require.Equal(t, map[string]any{"available": "0", "in_flight": "0", "delayed": "0", "received_total": "3",
			"deleted_total": "3", "dead_total": "0", "expired_total": "0", "oldest_available_age_seconds": "0"},
			jget(stateA, "tag", "state"))
		stateB := d.restOK("GET", "/v1/queues/orders/tags/b", "")
		require.Equal(t, "3", jget(stateB, "tag", "state", "in_flight"))
		require.Equal(t, "0", jget(stateB, "tag", "state", "available"))
		require.Equal(t, "0", jget(stateB, "tag", "state", "deleted_total"))
		require.Empty(t, recv("b"), "b still holds them in flight")
	})
}

func TestE2E_S1_TagsAreIndependent_GRPC(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()
		_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "orders"}})
		require.NoError(t, err)
		for _, tag := range []string{"a", "b"} {
			_, err := d.q.CreateTag(ctx, &tagqv1.CreateTagRequest{Queue: "orders", Tag: &tagqv1.Tag{Name: tag}})
			require.NoError(t, err)
		}
		for i := range 3 {
			_, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "orders", Body: []byte(fmt.Sprintf("m%d", i))})
			require.NoError(t, err)
		}
		ra, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "orders", Tag: "a", MaxMessages: i32(10)})
		require.NoError(t, err)
		rb, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "orders", Tag: "b", MaxMessages: i32(10)})
		require.NoError(t, err)
		require.Len(t, ra.GetMessages(), 3)
		require.Len(t, rb.GetMessages(), 3)
		entries := make([]*tagqv1.DeleteMessageBatchEntry, 0, 3)
		for i, m := range ra.GetMessages() {
			entries = append(entries, &tagqv1.DeleteMessageBatchEntry{Id: fmt.Sprint(i), ReceiptHandle: m.GetReceiptHandle()})
		}
		del, err := d.m.DeleteMessageBatch(ctx, &tagqv1.DeleteMessageBatchRequest{Queue: "orders", Entries: entries})
		require.NoError(t, err)
		require.Len(t, del.GetSuccessful(), 3)
		ga, err := d.q.GetTag(ctx, &tagqv1.GetTagRequest{Queue: "orders", Name: "a"})
		require.NoError(t, err)
		require.EqualValues(t, 3, ga.GetTag().GetState().GetDeletedTotal())
		require.Zero(t, ga.GetTag().GetState().GetInFlight())
		gb, err := d.q.GetTag(ctx, &tagqv1.GetTagRequest{Queue: "orders", Name: "b"})
		require.NoError(t, err)
		require.EqualValues(t, 3, gb.GetTag().GetState().GetInFlight())
	})
}

func TestE2E_S6_LongPollReturnsOnSendFromAnotherClient(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		d.restOK("POST", "/v1/queues", `{"name": "q"}`)
		type result struct {
			body    map[string]any
			elapsed time.Duration
		}
		done := make(chan result, 1)
		go func() {
			s := time.Now()
			out := d.restOK("POST", "/v1/queues/q/messages:receive", `{"wait_seconds": 10}`)
			done <- result{out, time.Since(s)}
		}()
		waitForWaiters(t, d, 1)
		sentAt := time.Now()
		_, err := d.m.SendMessage(context.Background(), &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("hi")})
		require.NoError(t, err)
		r := <-done
		woken := time.Since(sentAt)
		require.Equal(t, b64("hi"), jget(r.body, "messages", 0, "body"))
		require.Less(t, woken, 5*time.Second, "woken by the send, not by the 10 s timeout")
		t.Logf("REST long poll returned %v after the gRPC send returned", woken)
	})
}

// waitForWaiters polls the metrics until n receives are in progress.
func waitForWaiters(t *testing.T, d *daemon, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return inflightReceives(t, d) >= n }, 10*time.Second, 5*time.Millisecond)
}

func TestE2E_S6_SendOnOneProcessWakesAReceiveOnAnother(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		if be.name == "embedded" {
			t.Skip("two processes share a Redis only with --redis-url or --redis-cluster")
		}
		d1 := start(t, be)
		d2 := start(t, be)
		ctx := context.Background()
		_, err := d1.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
		require.NoError(t, err)
		done := make(chan *tagqv1.ReceiveMessageResponse, 1)
		go func() {
			r, err := d1.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", WaitSeconds: i32(20)})
			if err == nil {
				done <- r
			}
		}()
		waitForWaiters(t, d1, 1)
		sentAt := time.Now()
		_, err = d2.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("across")})
		require.NoError(t, err)
		select {
		case r := <-done:
			woken := time.Since(sentAt)
			require.Equal(t, "across", string(r.GetMessages()[0].GetBody()))
			require.Less(t, woken, 5*time.Second)
			t.Logf("receive on tagqd 1 returned %v after the send on tagqd 2 returned", woken)
		case <-time.After(15 * time.Second):
			t.Fatal("the waiting receive on the first tagqd was not woken")
		}
	})
}

func TestE2E_S6_TwoHundredWaitingReceives(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()
		_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
		require.NoError(t, err)
		const n = 200
		var wg sync.WaitGroup
		got := make(chan int, n)
		errs := make(chan error, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", WaitSeconds: i32(20)})
				if err != nil {
					errs <- err
					return
				}
				got <- len(r.GetMessages())
			}()
		}
		waitForWaiters(t, d, n)
		for i := 0; i < n; i += 100 {
			entries := make([]*tagqv1.SendMessageBatchEntry, 100)
			for j := range entries {
				entries[j] = &tagqv1.SendMessageBatchEntry{Id: fmt.Sprint(j), Body: []byte("m")}
			}
			_, err := d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: entries})
			require.NoError(t, err)
		}
		wg.Wait()
		close(got)
		close(errs)
		for err := range errs {
			t.Fatalf("a waiting receive failed: %v", err)
		}
		total := 0
		for c := range got {
			total += c
		}
		require.Equal(t, n, total)
	})
}

func TestE2E_S2_S3_NackRedeliversAndStalesTheOldHandle(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()
		_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
		require.NoError(t, err)
		_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("m")})
		require.NoError(t, err)
		first, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q"})
		require.NoError(t, err)
		h1 := first.GetMessages()[0].GetReceiptHandle()
		_, err = d.m.ChangeMessageVisibility(ctx, &tagqv1.ChangeMessageVisibilityRequest{Queue: "q", ReceiptHandle: h1})
		require.NoError(t, err)
		second, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q"})
		require.NoError(t, err)
		m := second.GetMessages()[0]
		require.EqualValues(t, 2, m.GetReceiveCount())
		require.NotEqual(t, h1, m.GetReceiptHandle())
		_, err = d.m.ChangeMessageVisibility(ctx, &tagqv1.ChangeMessageVisibilityRequest{Queue: "q", ReceiptHandle: h1, VisibilitySeconds: 60})
		code, r, _ := grpcReason(t, err)
		require.Equal(t, codes.FailedPrecondition, code)
		require.Equal(t, "RECEIPT_HANDLE_STALE", r)
		_, err = d.m.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: "q", ReceiptHandle: h1})
		require.NoError(t, err, "an older handle still deletes")
		g, err := d.q.GetTag(ctx, &tagqv1.GetTagRequest{Queue: "q", Name: "default"})
		require.NoError(t, err)
		require.EqualValues(t, 1, g.GetTag().GetState().GetDeletedTotal())
	})
}

func TestE2E_S5_DelayedMessageIsCountedAsDelayed(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		d.restOK("POST", "/v1/queues", `{"name": "q"}`)
		d.restOK("POST", "/v1/queues/q/tags", `{"name": "other"}`)
		d.restOK("POST", "/v1/queues/q/messages", fmt.Sprintf(`{"body": %q, "delay_seconds": 900}`, b64("later")))
		for _, tag := range []string{"default", "other"} {
			out := d.restOK("POST", "/v1/queues/q/messages:receive", fmt.Sprintf(`{"tag": %q, "max_messages": 10}`, tag))
			require.Empty(t, out["messages"])
			st := d.restOK("GET", "/v1/queues/q/tags/"+tag, "")
			require.Equal(t, "1", jget(st, "tag", "state", "delayed"))
			require.Equal(t, "0", jget(st, "tag", "state", "available"))
		}
	})
}

func TestE2E_S14_BadInputIsRefusedAndNothingIsWritten(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx := context.Background()
		// REST
		code, body := d.rest("POST", "/v1/queues", `{"name": "has space"}`)
		require.Equal(t, 400, code)
		r, f := reason(body)
		require.Equal(t, "INVALID_NAME", r)
		require.Equal(t, "queue.name", f)
		code, _ = d.rest("GET", "/v1/queues/has%20space", "")
		require.Equal(t, 400, code)
		_, err := d.q.GetQueue(ctx, &tagqv1.GetQueueRequest{Name: "has space"})
		_, r, _ = grpcReason(t, err)
		require.Equal(t, "INVALID_NAME", r)
		lst, err := d.q.ListQueues(ctx, &tagqv1.ListQueuesRequest{})
		require.NoError(t, err)
		require.Empty(t, lst.GetQueues(), "nothing was created")

		d.restOK("POST", "/v1/queues", `{"name": "q", "max_message_bytes": 1024}`)
		big := strings.Repeat("x", 1025)
		code, body = d.rest("POST", "/v1/queues/q/messages", fmt.Sprintf(`{"body": %q}`, b64(big)))
		require.Equal(t, 400, code)
		r, f = reason(body)
		require.Equal(t, "MESSAGE_TOO_LARGE", r)
		require.Equal(t, "body", f)
		code, body = d.rest("POST", "/v1/queues/q/messages:receive", `{"max_messages": 0}`)
		require.Equal(t, 400, code)
		r, f = reason(body)
		require.Equal(t, "INVALID_ARGUMENT_RANGE", r)
		require.Equal(t, "max_messages", f)
		code, body = d.rest("POST", "/v1/queues/q/messages:delete", `{"receipt_handle": "garbled!"}`)
		require.Equal(t, 400, code)
		r, _ = reason(body)
		require.Equal(t, "INVALID_RECEIPT_HANDLE", r)
		code, body = d.rest("POST", "/v1/queues/q/messages:batchSend", fmt.Sprintf(
			`{"entries": [{"id": "x", "body": %q}, {"id": "x", "body": %q}]}`, b64("a"), b64("b")))
		require.Equal(t, 400, code)
		r, f = reason(body)
		require.Equal(t, "DUPLICATE_BATCH_ENTRY_ID", r)
		require.Equal(t, "entries[1].id", f)
		code, body = d.rest("POST", "/v1/queues/q/messages", `{"body": "aGk=", "nonsense": 1}`)
		require.Equal(t, 400, code, "unknown JSON fields are refused: %v", body)
		code, body = d.rest("GET", "/v1/nowhere", "")
		require.Equal(t, 404, code)
		r, _ = reason(body)
		require.Equal(t, "NOT_FOUND", r)
		code, body = d.rest("PUT", "/v1/queues/q", "")
		require.Equal(t, 405, code)
		r, _ = reason(body)
		require.Equal(t, "METHOD_NOT_ALLOWED", r)

		// gRPC
		_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte(big)})
		code2, r, f := grpcReason(t, err)
		require.Equal(t, codes.InvalidArgument, code2)
		require.Equal(t, "MESSAGE_TOO_LARGE", r)
		require.Equal(t, "body", f)
		_, err = d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(0)})
		code2, r, f = grpcReason(t, err)
		require.Equal(t, codes.InvalidArgument, code2)
		require.Equal(t, "INVALID_ARGUMENT_RANGE", r)
		require.Equal(t, "max_messages", f)
		_, err = d.m.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: "q", ReceiptHandle: "AAAA"})
		_, r, _ = grpcReason(t, err)
		require.Equal(t, "INVALID_RECEIPT_HANDLE", r)
		_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"),
			Attributes: map[string]*tagqv1.MessageAttribute{"DLQ.sourceQueue": {Value: &tagqv1.MessageAttribute_StringValue{StringValue: "x"}}}})
		_, r, _ = grpcReason(t, err)
		require.Equal(t, "RESERVED_ATTRIBUTE", r)
		_, err = d.q.GetQueue(ctx, &tagqv1.GetQueueRequest{Name: "nope"})
		code2, r, _ = grpcReason(t, err)
		require.Equal(t, codes.NotFound, code2)
		require.Equal(t, "QUEUE_NOT_FOUND", r)

		g, err := d.q.GetTag(ctx, &tagqv1.GetTagRequest{Queue: "q", Name: "default"})
		require.NoError(t, err)
		require.Zero(t, g.GetTag().GetState().GetAvailable(), "no message was stored")
		require.Zero(t, g.GetTag().GetState().GetReceivedTotal())
	})
}

func TestE2E_ServesHealthMetricsOpenAPIAndReflection(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	code, _ := d.rest("GET", "/healthz", "")
	require.Equal(t, 200, code)
	code, _ = d.rest("GET", "/readyz", "")
	require.Equal(t, 200, code)
	ctx := context.Background()
	_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "metered"}})
	require.NoError(t, err)
	for range 2 {
		_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "metered", Body: []byte("x")})
		require.NoError(t, err)
	}
	metrics, err := httpGet("http://" + d.http + "/metrics")
	require.NoError(t, err)
	require.Contains(t, metrics, "tagq_receives_waiting 0")
	require.Contains(t, metrics, `tagq_tag_messages_available{queue="metered",tag="default"} 2`)
	require.Contains(t, metrics, `tagq_queue_messages{queue="metered"} 2`)
	_, _ = d.q.ListQueues(ctx, &tagqv1.ListQueuesRequest{})
	metrics, err = httpGet("http://" + d.http + "/metrics")
	require.NoError(t, err)
	require.Contains(t, metrics, `grpc_server_handled_total{grpc_code="OK",grpc_method="ListQueues",grpc_service="tagq.v1.QueueService",grpc_type="unary"} 1`)
	out := d.restOK("GET", "/openapi.json", "")
	require.Equal(t, "3.1.0", out["openapi"])
	paths, _ := out["paths"].(map[string]any)
	require.Contains(t, paths, "/v1/queues/{queue}/messages:receive")
	require.Contains(t, paths, "/v1/queues/{queue}/messages:dead")

	h, err := healthpb.NewHealthClient(d.conn).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, h.GetStatus())
	stream, err := grpc_reflection_v1.NewServerReflectionClient(d.conn).ServerReflectionInfo(ctx)
	require.NoError(t, err)
	require.NoError(t, stream.Send(&grpc_reflection_v1.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_ListServices{}}))
	resp, err := stream.Recv()
	require.NoError(t, err)
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	require.Contains(t, names, "tagq.v1.QueueService")
	require.Contains(t, names, "tagq.v1.MessageService")
	require.Contains(t, names, "tagq.v1.RedriveService")
}

func TestE2E_GracefulShutdownReleasesWaitingReceives(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	ctx := context.Background()
	_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		r, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", WaitSeconds: i32(20)})
		if err == nil && len(r.GetMessages()) != 0 {
			err = fmt.Errorf("got %d messages", len(r.GetMessages()))
		}
		done <- err
	}()
	waitForWaiters(t, d, 1)
	took, err := d.stop()
	require.NoError(t, err, "exit status 0")
	require.Less(t, took, 10*time.Second)
	require.NoError(t, <-done, "the waiting receive returned empty, not an error")
}

// inflightReceives reads tagq_receives_waiting from /metrics.
func inflightReceives(t *testing.T, d *daemon) int {
	t.Helper()
	resp, err := httpGet("http://" + d.http + "/metrics")
	require.NoError(t, err)
	for _, line := range strings.Split(resp, "\n") {
		if strings.HasPrefix(line, "tagq_receives_waiting ") {
			var n float64
			_, _ = fmt.Sscan(strings.TrimPrefix(line, "tagq_receives_waiting "), &n)
			return int(n)
		}
	}
	return 0
}

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
