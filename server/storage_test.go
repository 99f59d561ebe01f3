package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// fakeStorage is a tags.Storage whose calls answer what a test sets; the
// calls it does not override panic (the embedded interface is nil), which
// the server reports as INTERNAL.
type fakeStorage struct {
	tags.Storage
	getQueue func(name string) (*tags.Queue, error)
	send     func(queue string, msgs []tags.OutMessage) ([]tags.SendResult, error)
	ping     atomic.Pointer[error] // read by the readiness loop
}

func (f *fakeStorage) GetQueue(_ context.Context, name string) (*tags.Queue, error) {
	return f.getQueue(name)
}

func (f *fakeStorage) Send(_ context.Context, queue string, msgs []tags.OutMessage) ([]tags.SendResult, error) {
	return f.send(queue, msgs)
}

func (f *fakeStorage) Ping(context.Context) error {
	if p := f.ping.Load(); p != nil {
		return *p
	}
	return nil
}
func (f *fakeStorage) Waiting() int { return 0 }

// The server runs on any tags.Storage, and maps what it answers by the
// storage contract (tags/storage.go), over gRPC and REST alike: a
// tags.Error keeps its kind, reason and field; a bare network failure is
// UNAVAILABLE; any other bare error is INTERNAL (a bug, not retried);
// the context's errors are the call's own codes; per-entry send errors
// stay per entry.
func TestStorageSeam_TheServerRunsOnAnyStorage(t *testing.T) {
	t.Parallel()
	fake := &fakeStorage{}
	b := setup(t, func(c *Config) { c.Store = fake; c.HealthInterval = 5 * time.Millisecond })

	cases := []struct {
		err    error
		code   codes.Code
		reason string
		http   int
	}{
		{&tags.Error{Kind: tags.KindNotFound, Reason: tags.ReasonQueueNotFound, Message: "queue \"q\" does not exist"},
			codes.NotFound, tags.ReasonQueueNotFound, 404},
		{fmt.Errorf("reading: %w", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}),
			codes.Unavailable, tags.ReasonBackendUnavailable, 503},
		{errors.New("a reply of a type nobody expected"), codes.Internal, tags.ReasonInternal, 500},
		{context.DeadlineExceeded, codes.DeadlineExceeded, "", 504},
	}
	for _, tc := range cases {
		fake.getQueue = func(name string) (*tags.Queue, error) {
			require.Equal(t, "q", name)
			return nil, tc.err
		}
		_, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "q"})
		code, ei := info(t, err)
		require.Equal(t, tc.code, code, "%v", tc.err)
		if tc.reason != "" {
			require.Equal(t, tc.reason, ei.GetReason(), "%v", tc.err)
		}
		status, body := b.do(t, "GET", "/v1/queues/q", "")
		require.Equal(t, tc.http, status, body)
	}

	fake.getQueue = func(name string) (*tags.Queue, error) { return &tags.Queue{Name: name, MaxMessageBytes: 1024}, nil }
	got, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
	require.Equal(t, "q", got.GetQueue().GetName())

	// Per-entry errors stay per entry; the others are stored.
	fake.send = func(_ string, msgs []tags.OutMessage) ([]tags.SendResult, error) {
		out := make([]tags.SendResult, len(msgs))
		for i := range msgs {
			out[i].ID = fmt.Sprintf("1-%d", i)
		}
		out[1] = tags.SendResult{Err: &tags.Error{Kind: tags.KindInvalidArgument, Reason: tags.ReasonMessageTooLarge,
			Field: "body", Message: "too large"}}
		return out, nil
	}
	res, err := b.m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("x")}, {Id: "b", Body: []byte("y")}, {Id: "c", Body: []byte("z")}}})
	require.NoError(t, err)
	require.Len(t, res.GetSuccessful(), 2)
	require.Len(t, res.GetFailed(), 1)
	require.Equal(t, "b", res.GetFailed()[0].GetId())
	require.Equal(t, tags.ReasonMessageTooLarge, res.GetFailed()[0].GetReason())
	require.Equal(t, "entries[1].body", res.GetFailed()[0].GetField())

	// Readiness asks the storage (the background loop's next reading).
	status, _ := b.do(t, "GET", "/readyz", "")
	require.Equal(t, 200, status)
	down := fmt.Errorf("dial: %w", redis.ErrClosed)
	fake.ping.Store(&down)
	require.Eventually(t, func() bool { status, _ = b.do(t, "GET", "/readyz", ""); return status == 503 }, 10*time.Second, 5*time.Millisecond)

	// A call the storage cannot answer (here: not implemented by the fake,
	// so it panics) is INTERNAL, and the server lives on.
	_, err = b.q.DeleteQueue(b.ctx, &tagqv1.DeleteQueueRequest{Name: "q"})
	code, _ := info(t, err)
	require.Equal(t, codes.Internal, code)
	_, err = b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
}
