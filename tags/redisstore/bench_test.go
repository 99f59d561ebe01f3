package redisstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/tags"
)

// BenchmarkSendReceiveDelete measures one batch of send + receive + delete
// through the engine (no gRPC) on TAGQ_TEST_REDIS_URL. The full comparison
// against raw Redis streams is the benchmark command of issue 5.
func BenchmarkSendReceiveDelete(b *testing.B) {
	for _, batch := range []int{1, 10} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			s, ctx := benchStore(b, "bench")
			if _, err := s.CreateQueue(ctx, tags.QueueConfig{Name: "bench"}); err != nil {
				b.Fatal(err)
			}
			body := make([]byte, 1024)
			msgs := make([]tags.OutMessage, batch)
			for i := range msgs {
				msgs[i] = tags.OutMessage{Body: body}
			}
			b.SetBytes(int64(batch * len(body)))
			b.ResetTimer()
			for range b.N {
				if _, err := s.Send(ctx, "bench", msgs); err != nil {
					b.Fatal(err)
				}
				got, err := s.Receive(ctx, "bench", "default", tags.ReceiveOptions{MaxMessages: batch, WaitSeconds: i32(0)})
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
			if _, err := s.CreateQueue(ctx, tags.QueueConfig{Name: "bench-dlq", DeadLetterQueue: true}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.CreateQueue(ctx, tags.QueueConfig{Name: "bench",
				RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "bench-dlq", MaxReceiveCount: 3}}); err != nil {
				b.Fatal(err)
			}
			var seq atomic.Int64
			b.SetParallelism(2) // 4 goroutines on 2 CPUs
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				msgs := make([]tags.OutMessage, 10)
				for pb.Next() {
					for i := range msgs {
						body := make([]byte, 1024)
						if seq.Add(1)%100 < int64(pct) {
							body[0] = 'P'
						}
						msgs[i] = tags.OutMessage{Body: body}
					}
					if _, err := s.Send(ctx, "bench", msgs); err != nil {
						b.Fatal(err)
					}
					got, err := s.Receive(ctx, "bench", "", tags.ReceiveOptions{MaxMessages: 10, WaitSeconds: i32(0)})
					if err != nil {
						b.Fatal(err)
					}
					var del []string
					var nack []tags.VisibilityChange
					for _, m := range got {
						if m.Body[0] == 'P' {
							nack = append(nack, tags.VisibilityChange{ReceiptHandle: m.ReceiptHandle})
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
	return benchStoreWith(b, Config{}, queues...)
}

// benchStoreWith is benchStore with cfg's other settings.
func benchStoreWith(b *testing.B, cfg Config, queues ...string) (*Store, context.Context) {
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
	cfg.Client, cfg.Prefix = rdb, "tagqbench"
	s, err := New(ctx, cfg)
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

// BenchmarkConsumePath is the engine's side of streaming W1 at batch 10: 4
// producers send batches of 10, 4 consumers receive through Readers (up to
// 50 at a time) and settle each receive's acks in one Settle call, with
// stream deliveries in the PEL (the default) and in the in-flight zset
// (Config.InFlightZset). Besides msg/s it reports what Redis spent per
// message (INFO: the server's CPU, and the time in scripts): run it on a
// Redis of its own, e.g. TAGQ_TEST_REDIS_URL=redis://127.0.0.1:6392/0.
func BenchmarkConsumePath(b *testing.B) {
	for _, mode := range []string{"pel", "zset"} {
		b.Run(mode, func(b *testing.B) {
			s, ctx := benchStoreWith(b, Config{InFlightZset: mode == "zset"}, "bench")
			if _, err := s.CreateQueue(ctx, tags.QueueConfig{Name: "bench"}); err != nil {
				b.Fatal(err)
			}
			body := make([]byte, 1024)
			total := int64(b.N) * 10
			var done atomic.Int64
			cpu0, script0 := redisCost(b, s)
			b.ResetTimer()
			var wg sync.WaitGroup
			var sent atomic.Int64
			for range 4 {
				wg.Go(func() {
					msgs := make([]tags.OutMessage, 10)
					for i := range msgs {
						msgs[i] = tags.OutMessage{Body: body}
					}
					for sent.Add(1) <= int64(b.N) {
						if _, err := s.Send(ctx, "bench", msgs); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			for range 4 {
				wg.Go(func() {
					r, err := s.NewReader(ctx, "bench", "", nil)
					if err != nil {
						b.Error(err)
						return
					}
					defer r.Close()
					rctx, cancel := context.WithCancel(ctx)
					defer cancel()
					go func() {
						for done.Load() < total {
							runtimeYield()
						}
						cancel()
					}()
					for done.Load() < total {
						got, err := r.Receive(rctx, 50)
						if err != nil {
							return
						}
						sb := &tags.SettleBatch{Queue: "bench", Tag: r.Tag(), Ops: make([]tags.Settlement, len(got))}
						for i := range got {
							sb.Ops[i] = tags.Settlement{Kind: tags.SettleAck, Delivery: got[i].Delivery("bench")}
						}
						if err := s.Settle(ctx, []*tags.SettleBatch{sb}); err != nil {
							b.Error(err)
							return
						}
						done.Add(int64(len(got)))
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			cpu1, script1 := redisCost(b, s)
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "msg/s")
			b.ReportMetric((cpu1-cpu0)*1e6/float64(total), "redis-µs/msg")
			b.ReportMetric((script1-script0)/float64(total), "script-µs/msg")
		})
	}
}

func runtimeYield() { time.Sleep(time.Millisecond) }

// BenchmarkScriptPerCall is what one script call costs Redis when it
// handles one message, as at W3's 1,000 msg/s: b.N sends of one message
// (one sendpost.lua each), then b.N receives of one (one receive.lua),
// then b.N deletes of one (one settle.lua), each reported as µs of EVALSHA
// time per call (INFO commandstats: a call's own commands included). Run
// it on a Redis nothing else uses meanwhile.
func BenchmarkScriptPerCall(b *testing.B) {
	s, ctx := benchStore(b, "bench")
	if _, err := s.CreateQueue(ctx, tags.QueueConfig{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	msgs := []tags.OutMessage{{Body: make([]byte, 1024)}}
	handles := make([]string, 0, b.N)
	phases := []struct {
		unit string
		op   func() error
	}{
		{"sendpost-µs/call", func() error { _, err := s.Send(ctx, "bench", msgs); return err }},
		{"receive-µs/call", func() error {
			got, err := s.Receive(ctx, "bench", "default", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
			if err == nil && len(got) != 1 {
				err = fmt.Errorf("received %d, want 1", len(got))
			}
			if err == nil {
				handles = append(handles, got[0].ReceiptHandle)
			}
			return err
		}},
		{"settle-µs/call", func() error {
			_, err := s.Delete(ctx, "bench", handles[:1])
			handles = handles[1:]
			return err
		}},
	}
	b.ResetTimer()
	for _, ph := range phases {
		_, before := redisCost(b, s)
		for range b.N {
			if err := ph.op(); err != nil {
				b.Fatal(err)
			}
		}
		_, after := redisCost(b, s)
		b.ReportMetric((after-before)/float64(b.N), ph.unit)
	}
}

// redisCost is the Redis server's CPU seconds so far and the µs it spent
// in EVALSHA (INFO cpu and commandstats).
func redisCost(b *testing.B, s *Store) (cpu, scriptUs float64) {
	b.Helper()
	info, err := s.rdb.Info(context.Background(), "cpu", "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "used_cpu_user:"); ok {
			f, _ := strconv.ParseFloat(v, 64)
			cpu += f
		}
		if v, ok := strings.CutPrefix(line, "used_cpu_sys:"); ok {
			f, _ := strconv.ParseFloat(v, 64)
			cpu += f
		}
		if v, ok := strings.CutPrefix(line, "cmdstat_evalsha:"); ok {
			for _, kv := range strings.Split(v, ",") {
				if u, ok := strings.CutPrefix(kv, "usec="); ok {
					scriptUs, _ = strconv.ParseFloat(u, 64)
				}
			}
		}
	}
	return cpu, scriptUs
}

// BenchmarkSend is sending alone, batches of 10 messages of 1 KiB (the
// queue is purged as it grows): plain (the fast path), with a
// deduplication id per message, and on a queue with content-based
// deduplication (both through send.lua, which checks and records the ids).
func BenchmarkSend(b *testing.B) {
	for _, mode := range []string{"plain", "ids", "content"} {
		b.Run(mode, func(b *testing.B) {
			s, ctx := benchStore(b, "bench")
			if _, err := s.CreateQueue(ctx, tags.QueueConfig{Name: "bench", ContentBasedDeduplication: mode == "content"}); err != nil {
				b.Fatal(err)
			}
			msgs := make([]tags.OutMessage, 10)
			b.SetBytes(10 * 1024)
			b.ResetTimer()
			for n := range b.N {
				for i := range msgs {
					body := make([]byte, 1024)
					copy(body, fmt.Sprintf("%d-%d", n, i)) // distinct, for content-based ids
					msgs[i] = tags.OutMessage{Body: body}
					if mode == "ids" {
						id := fmt.Sprintf("id-%d-%d", n, i)
						msgs[i].DeduplicationID = &id
					}
				}
				if _, err := s.Send(ctx, "bench", msgs); err != nil {
					b.Fatal(err)
				}
				if n%1000 == 999 {
					b.StopTimer()
					if _, err := s.PurgeQueue(ctx, "bench"); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			}
			b.ReportMetric(float64(b.N*10)/b.Elapsed().Seconds(), "msg/s")
		})
	}
}

// BenchmarkTopics is W1 at batch 10 through the engine (4 goroutines each
// send 10 messages of 1 KiB, receive up to 10 and delete what they got),
// on a plain queue, on a topic queue whose messages spread over 1,000
// topics (S13): the cost of per-topic order, and on a priority queue whose
// messages cycle over priorities 1-16: the cost of priority order. msg/s
// counts deliveries.
func BenchmarkTopics(b *testing.B) {
	for _, mode := range []string{"plain", "topics1000", "priority16"} {
		b.Run(mode, func(b *testing.B) {
			s, ctx := benchStore(b, "bench")
			if _, err := s.CreateQueue(ctx, tags.QueueConfig{Name: "bench", TopicQueue: mode == "topics1000",
				PriorityQueue: mode == "priority16"}); err != nil {
				b.Fatal(err)
			}
			var seq, delivered atomic.Int64
			b.SetParallelism(2) // 4 goroutines on 2 CPUs
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				msgs := make([]tags.OutMessage, 10)
				for pb.Next() {
					for i := range msgs {
						msgs[i] = tags.OutMessage{Body: make([]byte, 1024)}
						switch mode {
						case "topics1000":
							msgs[i].Topic = "t" + strconv.FormatInt(seq.Add(1)%1000, 10)
						case "priority16":
							msgs[i].Priority = int32(seq.Add(1)%16) + 1
						}
					}
					if _, err := s.Send(ctx, "bench", msgs); err != nil {
						b.Fatal(err)
					}
					got, err := s.Receive(ctx, "bench", "", tags.ReceiveOptions{MaxMessages: 10, WaitSeconds: i32(0)})
					if err != nil {
						b.Fatal(err)
					}
					if len(got) == 0 {
						continue
					}
					hs := make([]string, len(got))
					for i, m := range got {
						hs[i] = m.ReceiptHandle
					}
					if _, err := s.Delete(ctx, "bench", hs); err != nil {
						b.Fatal(err)
					}
					delivered.Add(int64(len(got)))
				}
			})
			b.ReportMetric(float64(delivered.Load())/b.Elapsed().Seconds(), "msg/s")
		})
	}
}
