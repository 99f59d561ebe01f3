package tagq_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
	"github.com/tagq/tagq/internal/tagqdtest"
)

// replicas starts two tagqds (the binary TestMain built) on the Redis of
// TAGQ_TEST_REDIS_URL, under a key prefix of the test's own (removed at
// the end): two replicas of one service. Without that variable the test
// is skipped.
func replicas(t *testing.T) (a, b *tagqdtest.Daemon) {
	t.Helper()
	url := os.Getenv("TAGQ_TEST_REDIS_URL")
	if url == "" {
		t.Skip("TAGQ_TEST_REDIS_URL is not set (two tagqds need a shared Redis)")
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	prefix := "tagqgo-" + hex.EncodeToString(r[:])
	t.Cleanup(func() { require.NoError(t, tagqdtest.DeletePrefix(url, prefix)) })
	for _, d := range []**tagqdtest.Daemon{&a, &b} {
		var err error
		*d, err = tagqdtest.Start(tagqdtest.Binary, "--redis-url", url, "--key-prefix", prefix)
		require.NoError(t, err)
		dd := *d
		t.Cleanup(func() { _, _ = dd.Stop() })
	}
	return a, b
}

// A replica shutting down ends the Consume stream (SERVER_SHUTTING_DOWN)
// and gives its messages back; the Consumer goes on with the other
// replica. The message whose handler ran through it is handled once:
// pushed again by the other replica, it waits for that handler's verdict
// (and takes none of the stream's credit meanwhile).
func TestConsumer_ServerShutdownMovesToAnotherReplica(t *testing.T) {
	a, b := replicas(t)
	direct := dial(t, b.GRPC)
	queue(t, direct, "c-shutdown", tagq.QueueOptions{})
	sendN(t, direct, "c-shutdown", 1)
	px := newProxy(t, a.GRPC)
	var mu sync.Mutex
	handled := map[string]int{}
	started, release := make(chan struct{}, 1), make(chan struct{})
	co := dial(t, px.Addr()).NewConsumer(tagq.ConsumerConfig{Queue: "c-shutdown", Workers: 2, MaxOutstandingMessages: 2},
		tagq.HandlerFunc(func(_ context.Context, m *tagq.Message) error {
			mu.Lock()
			handled[string(m.GetBody())]++
			mu.Unlock()
			if string(m.GetBody()) == "m0" {
				started <- struct{}{}
				select {
				case <-release:
				case <-time.After(wait):
					return errors.New("never released")
				}
			}
			return nil
		}))
	stop := run(t, co)
	recv(t, started, "the first handler")
	px.setTarget(b.GRPC)
	stopped := make(chan error, 1)
	go func() { _, err := a.Stop(); stopped <- err }()
	eventually(t, func() bool { return co.Orphans() == 1 }, "the stream to the replica shutting down ended")
	eventually(t, func() bool { return co.Parked() == 1 }, "the other replica pushed the orphan's message again")
	// New messages go through the other replica while the orphan's
	// handler still runs.
	for i := 1; i <= 4; i++ {
		_, err := direct.Send(context.Background(), "c-shutdown", tagq.Outgoing{Body: fmt.Appendf(nil, "m%d", i)})
		require.NoError(t, err)
	}
	eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(handled) == 5 }, "all five handled")
	close(release)
	eventually(t, func() bool { _, _, deleted, _ := tagState(t, direct, "c-shutdown", "default"); return deleted == 5 },
		"all five deleted")
	stop()
	require.NoError(t, recv(t, stopped, "the replica's exit"))
	mu.Lock()
	defer mu.Unlock()
	for body, n := range handled {
		require.Equal(t, 1, n, "%s handled once", body)
	}
}

// Frames in flight on a replica shutting down are answered or sent again
// to the other replica: every message gets its id and is stored.
func TestPublisher_ServerShutdownMovesToAnotherReplica(t *testing.T) {
	a, b := replicas(t)
	direct := dial(t, b.GRPC)
	queue(t, direct, "p-shutdown", tagq.QueueOptions{})
	px := newProxy(t, a.GRPC)
	p := dial(t, px.Addr()).NewPublisher(tagq.PublisherConfig{MaxMessages: 10, MaxInFlight: 8})
	var rs []*tagq.PublishResult
	publish := func(n int) {
		for range n {
			rs = append(rs, p.Publish(context.Background(), "p-shutdown", tagq.Outgoing{Body: fmt.Appendf(nil, "%d", len(rs))}))
		}
	}
	publish(500)
	_, err := get(t, rs[0])
	require.NoError(t, err)
	px.setTarget(b.GRPC)
	stopped := make(chan error, 1)
	go func() { _, err := a.Stop(); stopped <- err }()
	publish(500)
	require.NoError(t, recv(t, stopped, "the replica's exit"))
	publish(500)
	for _, r := range rs {
		_, err := get(t, r)
		require.NoError(t, err)
	}
	stopPublisher(t, p)
	bodies := drain(t, direct, "p-shutdown")
	require.Len(t, bodies, len(rs))
	// The server answers every frame it read before it ends the stream,
	// so the frames sent again had not been stored: no message twice.
	for body, n := range bodies {
		require.Equal(t, 1, n, "%s stored once", body)
	}
}
