package tags

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// BenchmarkSendReceiveDelete measures one batch of send + receive + delete
// through the engine (no gRPC) on TAGQ_TEST_REDIS_URL. The full comparison
// against raw Redis streams is the benchmark command of issue 5.
func BenchmarkSendReceiveDelete(b *testing.B) {
	for _, batch := range []int{1, 10} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			s, ctx := benchStore(b, "bench")
			if _, err := s.CreateQueue(ctx, QueueConfig{Name: "bench"}); err != nil {
				b.Fatal(err)
			}
			body := make([]byte, 1024)
			msgs := make([]OutMessage, batch)
			for i := range msgs {
				msgs[i] = OutMessage{Body: body}
			}
			b.SetBytes(int64(batch * len(body)))
			b.ResetTimer()
			for range b.N {
				if _, err := s.Send(ctx, "bench", msgs); err != nil {
					b.Fatal(err)
				}
				got, err := s.Receive(ctx, "bench", "default", ReceiveOptions{MaxMessages: batch, WaitSeconds: i32(0)})
				if err != nil || len(got) != batch {
					b.Fatalf("got %d, %v", len(got), err)
				}
				hs := make([]string, len(got))
				for i, m := range got {
					hs[i] = m.ReceiptHandle
				}
				if _, err := s.Delete(ctx, "bench", hs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "msg/s")
		})
	}
}

// BenchmarkPoison is W4 through the engine: 4 goroutines send, receive,
// nack poison messages at once and delete the rest, on a queue with a
// redrive policy (max receive count 3). Compare poison0 with poison1 for
// the cost of redrive; INFO commandstats tells where Redis spends it.
func BenchmarkPoison(b *testing.B) {
	for _, pct := range []int{0, 1, 10} {
		b.Run(fmt.Sprintf("poison%d", pct), func(b *testing.B) {
			s, ctx := benchStore(b, "bench", "bench-dlq")
			if _, err := s.CreateQueue(ctx, QueueConfig{Name: "bench-dlq", DeadLetterQueue: true}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.CreateQueue(ctx, QueueConfig{Name: "bench",
				RedrivePolicy: &RedrivePolicy{DeadLetterQueue: "bench-dlq", MaxReceiveCount: 3}}); err != nil {
				b.Fatal(err)
			}
			var seq atomic.Int64
			b.SetParallelism(2) // 4 goroutines on 2 CPUs
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				msgs := make([]OutMessage, 10)
				for pb.Next() {
					for i := range msgs {
						body := make([]byte, 1024)
						if seq.Add(1)%100 < int64(pct) {
							body[0] = 'P'
						}
						msgs[i] = OutMessage{Body: body}
					}
					if _, err := s.Send(ctx, "bench", msgs); err != nil {
						b.Fatal(err)
					}
					got, err := s.Receive(ctx, "bench", "", ReceiveOptions{MaxMessages: 10, WaitSeconds: i32(0)})
					if err != nil {
						b.Fatal(err)
					}
					var del []string
					var nack []VisibilityChange
					for _, m := range got {
						if m.Body[0] == 'P' {
							nack = append(nack, VisibilityChange{ReceiptHandle: m.ReceiptHandle})
						} else {
							del = append(del, m.ReceiptHandle)
						}
					}
					if len(nack) > 0 {
						if _, err := s.ChangeVisibility(ctx, "bench", nack); err != nil {
							b.Fatal(err)
						}
					}
					if len(del) > 0 {
						if _, err := s.Delete(ctx, "bench", del); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
			b.ReportMetric(float64(b.N*10)/b.Elapsed().Seconds(), "msg/s")
		})
	}
}

// benchStore is a Store on TAGQ_TEST_REDIS_URL (the benchmark is skipped
// without it) under the prefix tagqbench, with no janitor; the named queues
// are deleted before and after, and the handle key after.
func benchStore(b *testing.B, queues ...string) (*Store, context.Context) {
	b.Helper()
	url := os.Getenv("TAGQ_TEST_REDIS_URL")
	if url == "" {
		b.Skip("TAGQ_TEST_REDIS_URL not set")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	ctx := context.Background()
	s, err := New(ctx, Config{Client: rdb, Prefix: "tagqbench", JanitorInterval: -1})
	if err != nil {
		_ = rdb.Close()
		b.Fatal(err)
	}
	for _, q := range queues {
		_ = s.DeleteQueue(ctx, q, true)
	}
	b.Cleanup(func() {
		for _, q := range queues {
			_ = s.DeleteQueue(ctx, q, true)
		}
		_ = rdb.Del(ctx, s.handleKeyName()).Err()
		s.Close()
		_ = rdb.Close()
	})
	return s, ctx
}
