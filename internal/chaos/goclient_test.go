package chaos

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	tagq "github.com/tagq/tagq/clients/go"
)

// Load through the Go client (clients/go): its Publisher resends the
// frames a broken stream left unanswered, and its Consumer reopens its
// stream; both on one replica, so they wait out its restarts.

// warnings is the Go client's logger: its warnings (a stream that broke)
// say what it went through; its info lines (every retried message) do not.
var warnings = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

func dialGo(addr string) (*tagq.Client, error) {
	// Dial's plaintext default holds only when no option is given.
	return tagq.Dial(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: 2 * time.Second,
		Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second}}))
}

// goPublisher publishes a batch of messages every tick until stop ends,
// each message until the server stores it or hard ends. The Publisher
// sends a frame again on its own after a broken stream, so these seqs are
// not held to "stored at most as often as sent".
func (l *load) goPublisher(stop, hard context.Context, c *tagq.Client, every time.Duration) {
	p := c.NewPublisher(tagq.PublisherConfig{MaxMessages: batch, Logger: warnings})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		_ = p.Stop(ctx)
	}()
	l.eachBatch(stop, every, func(seqs []int64) {
		l.led.selfRetrying(seqs)
		for len(seqs) > 0 && hard.Err() == nil {
			l.led.attempt(seqs)
			results := make([]*tagq.PublishResult, len(seqs))
			for i, s := range seqs {
				results[i] = p.Publish(hard, queue, tagq.Outgoing{Body: bodyOf(s)})
			}
			var again []int64
			for i, r := range results {
				id, err := r.Get(hard)
				if err == nil {
					l.led.ack(seqs[i], id)
					continue
				}
				var te *tagq.Error
				if !errors.As(err, &te) {
					if hard.Err() == nil {
						l.led.failed("go-publish", err)
					}
					continue
				}
				l.led.failedReason("go-publish", te.Code, te.Reason)
				if retriable(te.Code) {
					again = append(again, seqs[i])
				}
			}
			seqs = again
			if len(seqs) > 0 {
				pause(hard)
			}
		}
	})
}

// goConsumer runs a Go client Consumer on tag until ctx ends: a handler
// that returns nil deletes, an error nacks (no backoff), a PoisonError
// dead-letters. The Consumer settles on its own, so its acknowledgements
// are not recorded.
func (l *load) goConsumer(ctx context.Context, c *tagq.Client, tag string) {
	co := c.NewConsumer(tagq.ConsumerConfig{Queue: queue, Tag: tag, Workers: 4, MaxOutstandingMessages: 20,
		Visibility: visibility * time.Second, Backoff: func(int) time.Duration { return 0 }, Logger: warnings},
		tagq.HandlerFunc(func(_ context.Context, m *tagq.Message) error {
			switch l.led.deliver(tag, "go consumer", m) {
			case actNack, actForget:
				return errors.New("again")
			case actDead:
				return tagq.PoisonError("POISON", errors.New("poison"))
			}
			return nil
		}))
	if err := co.Run(ctx); err != nil {
		l.led.failed("go-consume", err)
	}
}
