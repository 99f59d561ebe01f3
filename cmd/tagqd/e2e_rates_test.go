package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/redisstore"
)

// Rates over time through a real tagqd, over gRPC and REST: the series'
// shape, bad input named, and, on a shared Redis, the rates of what was
// sent, sampled on driven ticks by a sampler of the test's own (the tagqd
// runs with --no-rates, so the test's sampler holds the lease).
func TestE2E_QueueRates(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be, "--no-rates")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		d.restOK("POST", "/v1/queues", `{"name": "orders"}`)
		d.restOK("POST", "/v1/queues/orders/tags", `{"name": "audit"}`)

		var sampler *redisstore.Store
		var t1, t2 time.Time
		if be.name != "embedded" {
			rdb := redisOf(t, be)
			newSampler := func() *redisstore.Store {
				s, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Prefix: be.prefix, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
			now, err := rdb.Time(ctx).Result()
			require.NoError(t, err)
			t2 = now.Truncate(tags.RatesResolution)
			t1 = t2.Add(-tags.RatesResolution)
			// One sampler records the counters at t1 and stops; another
			// takes over at t2 (visiting every queue, as a sampler taking
			// over does: the queue, idle until now, is not left to its own
			// tick of the minute).
			first := newSampler()
			ok, err := first.SampleRates(ctx, t1)
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, first.Close())
			sampler = newSampler()
		}
		for i := 0; i < 5; i++ {
			entries := make([]*tagqv1.SendMessageBatchEntry, 10)
			for j := range entries {
				entries[j] = &tagqv1.SendMessageBatchEntry{Id: fmt.Sprint(j), Body: []byte("x")}
			}
			_, err := d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "orders", Entries: entries})
			require.NoError(t, err)
		}
		rcv, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "orders", MaxMessages: proto.Int32(10), WaitSeconds: proto.Int32(0)})
		require.NoError(t, err)
		require.Len(t, rcv.GetMessages(), 10)
		if sampler != nil {
			ok, err := sampler.SampleRates(ctx, t2)
			require.NoError(t, err)
			require.True(t, ok)
		}

		// gRPC: the queue and every tag, a minute of 10 s points.
		r, err := d.q.GetQueueRates(ctx, &tagqv1.GetQueueRatesRequest{Queue: "orders", WindowSeconds: 60})
		require.NoError(t, err)
		require.EqualValues(t, 10, r.GetResolutionSeconds())
		require.Len(t, r.GetPoints(), 6)
		require.Len(t, r.GetTags(), 2)
		require.Equal(t, "audit", r.GetTags()[0].GetTag())
		require.Equal(t, "default", r.GetTags()[1].GetTag())
		end := r.GetEndTime().AsTime()
		require.Equal(t, end, r.GetPoints()[5].GetTime().AsTime())
		require.Zero(t, end.UnixMilli()%10000, "points end on the 10 s grid")
		if sampler != nil {
			var at *tagqv1.RatePoint
			for _, p := range r.GetPoints() {
				if p.GetTime().AsTime().Equal(t2) {
					at = p
				}
			}
			require.NotNil(t, at, "the sampled tick is in the window")
			require.Equal(t, 5.0, at.GetInPerSecond())
			require.Equal(t, 1.0, at.GetReceivedPerSecond())
		}

		// REST: one tag, the default window, and the same figures.
		out := d.restOK("GET", "/v1/queues/orders/rates?tag=default&window_seconds=120", "")
		require.Len(t, jget(out, "points"), 12)
		require.Len(t, jget(out, "tags"), 1)
		require.Equal(t, "default", jget(out, "tags", 0, "tag"))
		out = d.restOK("GET", "/v1/queues/orders/rates", "")
		require.Len(t, jget(out, "points"), 360, "the last hour by default")
		if sampler != nil {
			found := false
			for _, p := range jget(out, "tags", 1, "points").([]any) {
				if jget(p, "time") == t2.UTC().Format(time.RFC3339) {
					require.Equal(t, 5.0, jget(p, "in_per_second"), "%v", p)
					require.Equal(t, 1.0, jget(p, "received_per_second"), "%v", p)
					found = true
				}
			}
			require.True(t, found, "%v", out)
		}

		// Bad input.
		_, err = d.q.GetQueueRates(ctx, &tagqv1.GetQueueRatesRequest{Queue: "nope"})
		code, info := errInfo(t, err)
		require.Equal(t, codes.NotFound, code)
		require.Equal(t, "QUEUE_NOT_FOUND", info.GetReason())
		_, err = d.q.GetQueueRates(ctx, &tagqv1.GetQueueRatesRequest{Queue: "orders", Tag: "nope"})
		code, info = errInfo(t, err)
		require.Equal(t, codes.NotFound, code)
		require.Equal(t, "TAG_NOT_FOUND", info.GetReason())
		_, err = d.q.GetQueueRates(ctx, &tagqv1.GetQueueRatesRequest{Queue: "orders", WindowSeconds: 7200})
		code, info = errInfo(t, err)
		require.Equal(t, codes.InvalidArgument, code)
		require.Equal(t, "INVALID_ARGUMENT_RANGE", info.GetReason())
		require.Equal(t, "window_seconds", info.GetMetadata()["field"])
		status, body := d.rest("GET", "/v1/queues/orders/rates?window_seconds=5", "")
		require.Equal(t, 400, status)
		rs, field := reason(body)
		require.Equal(t, "INVALID_ARGUMENT_RANGE", rs)
		require.Equal(t, "window_seconds", field)
		status, body = d.rest("GET", "/v1/queues/nope/rates", "")
		require.Equal(t, 404, status)
		rs, _ = reason(body)
		require.Equal(t, "QUEUE_NOT_FOUND", rs)
	})
}
