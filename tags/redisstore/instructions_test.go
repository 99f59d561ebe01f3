package redisstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/tags"
)

// BenchmarkRedisInstructions is the workload behind the callgrind figures
// of BENCHMARKS.md: Redis's instructions per message do not move with the
// machine's load, as CPU seconds do. One round (one b.N) is 5 sends of 10
// x 1 KiB, one receive of 50 and one Settle of the 50 acks; "raw" does the
// same with pipelined XADDs, XREADGROUP COUNT 50 and XACK; "coalesced"
// is "pel" with the 5 sends in one round trip, as concurrent Publish frames
// go under load (one MULTI, one sendpost.lua call for the five); "single"
// is a round of one message (one send, receive and ack of one: each
// call's fixed cost, as at W3's rate). After 20
// warm-up rounds it zeroes the callgrind counters of the redis-server at
// TAGQ_COST_PID and dumps them at the end (the framework's first call, of
// one round, dumps too: the last dump is the one to read);
// .ci/redis-instructions runs it and prints instructions per message.
// With TAGQ_COST_PHASE (send, receive or settle) only that phase of each
// engine round is counted (callgrind's instrumentation is switched on for
// it alone). Keys go under a prefix of their own and are removed. Skipped
// without TAGQ_COST_URL.
func BenchmarkRedisInstructions(b *testing.B) {
	url, pid := os.Getenv("TAGQ_COST_URL"), os.Getenv("TAGQ_COST_PID")
	if url == "" || pid == "" {
		b.Skip("TAGQ_COST_URL and TAGQ_COST_PID not set (see .ci/redis-instructions)")
	}
	callgrind := func(op string) {
		if out, err := exec.Command("callgrind_control", op, pid).CombinedOutput(); err != nil {
			b.Fatalf("callgrind_control %s: %v: %s", op, err, out)
		}
	}
	only := os.Getenv("TAGQ_COST_PHASE")
	counting := true
	phase := func(name string, f func()) {
		if only == "" || !counting {
			f()
			return
		}
		if name == only {
			callgrind("--instr=on")
			defer callgrind("--instr=off")
		}
		f()
	}
	for _, mode := range []string{"pel", "coalesced", "single", "zset", "raw"} {
		b.Run(mode, func(b *testing.B) {
			opt, err := redis.ParseURL(url)
			if err != nil {
				b.Fatal(err)
			}
			rdb := redis.NewClient(opt)
			defer rdb.Close()
			ctx := context.Background()
			prefix := fmt.Sprintf("tagqcost%d", time.Now().UnixNano())
			var round func()
			if mode == "raw" {
				round = rawRound(b, ctx, rdb, prefix+":raw")
				defer rdb.Del(ctx, prefix+":raw")
			} else {
				s, err := New(ctx, Config{Client: rdb, Prefix: prefix, InFlightZset: mode == "zset"})
				if err != nil {
					b.Fatal(err)
				}
				defer func() {
					_ = s.DeleteQueue(ctx, "c", true)
					_ = rdb.Del(ctx, s.handleKeyName(), s.indexKey()).Err()
					s.Close()
				}()
				round = engineRound(b, ctx, s, mode, phase)
			}
			counting = false
			for range 20 {
				round()
			}
			if only != "" {
				callgrind("--instr=off")
				counting = true
			}
			callgrind("-z")
			b.ResetTimer()
			for range b.N {
				round()
			}
			b.StopTimer()
			callgrind("-d")
		})
	}
}

// engineRound is one round through the engine.
func engineRound(b *testing.B, ctx context.Context, s *Store, mode string, phase func(string, func())) func() {
	if _, err := s.CreateQueue(ctx, tags.QueueConfig{Name: "c"}); err != nil {
		b.Fatal(err)
	}
	msgs := make([]tags.OutMessage, 10)
	for i := range msgs {
		msgs[i] = tags.OutMessage{Body: make([]byte, 1024)}
	}
	n := 50 // messages per round
	if mode == "single" {
		n = 1
	}
	return func() {
		phase("send", func() {
			switch mode {
			case "single":
				if _, err := s.Send(ctx, "c", msgs[:1]); err != nil {
					b.Fatal(err)
				}
				return
			case "coalesced":
				frames := framesOf("c", 5, msgs)
				s.execSends(ctx, frames)
				for _, f := range frames {
					if !f.ok || f.err != nil {
						b.Fatalf("coalesced send: ok %v, %v", f.ok, f.err)
					}
				}
				return
			}
			for range 5 {
				if _, err := s.Send(ctx, "c", msgs); err != nil {
					b.Fatal(err)
				}
			}
		})
		var got []tags.Message
		phase("receive", func() {
			var err error
			got, err = s.Receive(ctx, "c", "", tags.ReceiveOptions{MaxMessages: n, WaitSeconds: i32(0)})
			if err != nil || len(got) != n {
				b.Fatalf("received %d: %v", len(got), err)
			}
		})
		phase("settle", func() {
			sb := &tags.SettleBatch{Queue: "c", Tag: got[0].Tag, Ops: make([]tags.Settlement, len(got))}
			for i := range got {
				sb.Ops[i] = tags.Settlement{Kind: tags.SettleAck, Delivery: got[i].Delivery("c")}
			}
			if err := s.Settle(ctx, []*tags.SettleBatch{sb}); err != nil {
				b.Fatal(err)
			}
			for _, e := range sb.Errs {
				if e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}

// rawRound is one round of plain commands.
func rawRound(b *testing.B, ctx context.Context, rdb *redis.Client, key string) func() {
	if err := rdb.XGroupCreateMkStream(ctx, key, "g", "$").Err(); err != nil {
		b.Fatal(err)
	}
	body := string(make([]byte, 1024))
	return func() {
		for range 5 {
			p := rdb.Pipeline()
			for range 10 {
				p.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"b", body}})
			}
			if _, err := p.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
		res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{key, ">"},
			Count: 50, Block: -1}).Result()
		if err != nil || len(res[0].Messages) != 50 {
			b.Fatal(fmt.Sprint("raw read: ", err))
		}
		ids := make([]string, 50)
		for i, m := range res[0].Messages {
			ids[i] = m.ID
		}
		if err := rdb.XAck(ctx, key, "g", ids...).Err(); err != nil {
			b.Fatal(err)
		}
	}
}
