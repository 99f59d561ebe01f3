package tagq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Handler processes one message. Return nil to delete it, an error to
// retry it later (with a backoff), or an error wrapping *Poison to
// dead-letter it now.
type Handler interface {
	Handle(ctx context.Context, m *Message) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, m *Message) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, m *Message) error { return f(ctx, m) }

// Poison is a handler's verdict that a message can never be processed: the
// Consumer dead-letters it with Reason instead of retrying it.
type Poison struct {
	Reason string // e.g. INVALID_PAYLOAD; default CONSUMER_DEAD_LETTERED
	Err    error  // the cause; its text becomes the dead letter's description
}

func (p *Poison) Error() string { return fmt.Sprintf("poison message (%s): %v", p.Reason, p.Err) }
func (p *Poison) Unwrap() error { return p.Err }

// PoisonError makes a handler error that dead-letters the message.
func PoisonError(reason string, err error) error { return &Poison{Reason: reason, Err: err} }

// ConsumerConfig configures a Consumer. Every field but Queue has a default.
type ConsumerConfig struct {
	Queue string
	// Tag to read; default the queue's default tag.
	Tag string
	// Workers run handlers concurrently. Default 1.
	Workers int
	// Visibility is how long a message stays hidden from other receivers of
	// the tag; the Consumer renews it while the handler runs. Default 30s
	// (whole seconds, at least 1s).
	Visibility time.Duration
	// Wait is the long-poll wait of each receive. Default 20s.
	Wait time.Duration
	// Backoff is how long a failed message stays hidden before it is
	// retried, given how many times the tag received it. Default:
	// exponential from 1s, doubling, capped at 5 minutes, with ±20% jitter.
	Backoff func(receiveCount int) time.Duration
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// DefaultBackoff doubles from 1s per receive, up to 5 minutes, ±20%.
func DefaultBackoff(receiveCount int) time.Duration {
	d := time.Second << min(max(receiveCount-1, 0), 9)
	d = min(d, 5*time.Minute)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Consumer runs a Handler for every message of one tag.
type Consumer struct {
	c   *Client
	cfg ConsumerConfig
	h   Handler
}

// NewConsumer makes a Consumer; Run starts it.
func (c *Client) NewConsumer(cfg ConsumerConfig, h Handler) *Consumer {
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.Visibility < time.Second {
		cfg.Visibility = 30 * time.Second
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 20 * time.Second
	}
	if cfg.Backoff == nil {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Consumer{c: c, cfg: cfg, h: h}
}

// Run receives and handles messages until ctx ends, then stops receiving,
// lets the handlers in progress finish (their messages are still
// acknowledged), and returns nil. It returns an error only if the first
// receive fails (e.g. the queue or tag does not exist).
func (co *Consumer) Run(ctx context.Context) error {
	work := make(chan *Message)
	// One token per idle worker; a worker returns its token when done.
	free := make(chan struct{}, co.cfg.Workers)
	var wg sync.WaitGroup
	for range co.cfg.Workers {
		free <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				co.handle(m)
				free <- struct{}{}
			}
		}()
	}
	defer func() {
		close(work)
		wg.Wait()
	}()
	first := true
	backoff := 100 * time.Millisecond
	for {
		// Receive only as many messages as there are idle workers, so none
		// waits in memory while its visibility runs out.
		n := 0
		select {
		case <-ctx.Done():
			return nil
		case <-free:
			n = 1
		}
	more:
		for n < co.cfg.Workers && n < 10 {
			select {
			case <-free:
				n++
			default:
				break more
			}
		}
		msgs, err := co.c.Receive(ctx, co.cfg.Queue, ReceiveOptions{Tag: co.cfg.Tag, Max: n, Wait: co.cfg.Wait, Visibility: co.cfg.Visibility})
		if err != nil {
			for range n {
				free <- struct{}{}
			}
			if ctx.Err() != nil {
				return nil
			}
			if first {
				return err
			}
			co.cfg.Logger.Warn("tagq consumer: receive failed; retrying", "queue", co.cfg.Queue, "tag", co.cfg.Tag, "err", err)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil
			}
			backoff = min(backoff*2, 10*time.Second)
			continue
		}
		first, backoff = false, 100*time.Millisecond
		for i := len(msgs); i < n; i++ {
			free <- struct{}{}
		}
		for _, m := range msgs {
			work <- m
		}
	}
}

// handle runs the handler with visibility renewal, then acknowledges.
func (co *Consumer) handle(m *Message) {
	// Acknowledgements use their own context: they must happen even while
	// the consumer is stopping.
	ack, cancelAck := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelAck()
	hctx, stop := context.WithCancel(context.Background())
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(max(co.cfg.Visibility/3, 300*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				if err := co.c.ChangeVisibility(ack, co.cfg.Queue, m.GetReceiptHandle(), co.cfg.Visibility); err != nil {
					co.cfg.Logger.Warn("tagq consumer: could not extend visibility", "message", m.GetMessageId(), "err", err)
				}
			}
		}
	}()
	err := co.safeHandle(hctx, m)
	stop()
	<-renewed
	log := co.cfg.Logger.With("queue", co.cfg.Queue, "tag", m.GetTag(), "message", m.GetMessageId())
	var poison *Poison
	switch {
	case err == nil:
		if err := co.c.Delete(ack, co.cfg.Queue, m.GetReceiptHandle()); err != nil {
			log.Warn("tagq consumer: delete failed; the message will be received again", "err", err)
		}
	case errors.As(err, &poison):
		reason := poison.Reason
		if reason == "" {
			reason = "CONSUMER_DEAD_LETTERED"
		}
		desc := ""
		if poison.Err != nil {
			desc = poison.Err.Error()
		}
		if err := co.c.Dead(ack, co.cfg.Queue, m.GetReceiptHandle(), reason, desc); err != nil {
			log.Error("tagq consumer: dead-lettering failed", "err", err)
		}
	default:
		wait := co.cfg.Backoff(int(m.GetReceiveCount()))
		log.Info("tagq consumer: handler failed; retrying later", "err", err, "retry_in", wait)
		if err := co.c.ChangeVisibility(ack, co.cfg.Queue, m.GetReceiptHandle(), wait); err != nil {
			log.Warn("tagq consumer: nack failed", "err", err)
		}
	}
}

// safeHandle runs the handler, turning a panic into an error.
func (co *Consumer) safeHandle(ctx context.Context, m *Message) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return co.h.Handle(ctx, m)
}
