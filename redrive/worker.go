package redrive

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tagq/tagq/tags"
)

// Config configures a Worker.
type Config struct {
	// Store is the engine. Required.
	Store *tags.Store
	// Interval between sweeps. Default 1s: a message whose last visibility
	// deadline passed reaches its dead-letter queue within about that.
	Interval time.Duration
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// Worker sweeps source queues and relays outboxes on a timer.
type Worker struct {
	cfg      Config
	stop     chan struct{}
	stopOnce sync.Once
	done     sync.WaitGroup
}

// New makes a Worker; Start runs it.
func New(cfg Config) *Worker {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Worker{cfg: cfg, stop: make(chan struct{})}
}

// Start runs the worker until Stop.
func (w *Worker) Start() {
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		t := time.NewTicker(w.cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := w.RunOnce(ctx); err != nil {
				w.cfg.Logger.Warn("redrive pass failed", "err", err)
			}
			cancel()
		}
	}()
}

// Stop ends the worker and waits for a pass in progress. Safe to call
// more than once, and without Start.
func (w *Worker) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	w.done.Wait()
}

// RunOnce sweeps every source queue, relays every outbox with dead
// letters waiting, and advances every running move task by one interval's
// worth of its rate. It goes on past a failing queue and returns the first
// error.
func (w *Worker) RunOnce(ctx context.Context) error {
	s := w.cfg.Store
	sweep, relay, err := s.RedriveWork(ctx)
	if err != nil {
		return err
	}
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, q := range sweep {
		n, err := s.SweepDead(ctx, q)
		if n > 0 {
			w.cfg.Logger.Debug("dead-lettered", "queue", q, "messages", n)
		}
		keep(err)
	}
	for _, q := range relay {
		_, err := s.RelayOutbox(ctx, q)
		keep(err)
	}
	moves, err := s.MoveWork(ctx)
	keep(err)
	for _, dlq := range moves {
		n, err := s.RunMove(ctx, dlq, w.cfg.Interval)
		if n > 0 {
			w.cfg.Logger.Debug("moved dead letters back", "dead_letter_queue", dlq, "messages", n)
		}
		keep(err)
	}
	return first
}
