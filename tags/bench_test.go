package tags

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// BenchmarkSendReceiveDelete measures one batch of send + receive + delete
// through the engine (no gRPC) on TAGQ_TEST_REDIS_URL. The full comparison
// against raw Redis streams is the benchmark command of issue 5.
func BenchmarkSendReceiveDelete(b *testing.B) {
	url := os.Getenv("TAGQ_TEST_REDIS_URL")
	if url == "" {
		b.Skip("TAGQ_TEST_REDIS_URL not set")
	}
	for _, batch := range []int{1, 10} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			opt, _ := redis.ParseURL(url)
			rdb := redis.NewClient(opt)
			defer rdb.Close()
			ctx := context.Background()
			s, err := New(ctx, Config{Client: rdb, Prefix: "tagqbench", JanitorInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			_ = s.DeleteQueue(ctx, "bench", true)
			if _, err := s.CreateQueue(ctx, QueueConfig{Name: "bench"}); err != nil {
				b.Fatal(err)
			}
			defer s.DeleteQueue(ctx, "bench", true)
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
