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
	// Store is the storage whose background work the worker does.
	// Required.
	Store tags.Maintainer
	// Interval between sweeps. Default 1s: a message whose last visibility
	// deadline passed reaches its dead-letter queue within about that.
	Interval time.Duration
	// JanitorInterval between janitor passes (retention expiry, trimming
	// what every tag is done with, stalled reads recovered; see
	// tags.Maintainer.JanitorPass). Default 1s; negative: no janitor.
	JanitorInterval time.Duration
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// Worker runs tagq's background work on timers, each kind of work leased
// per queue in Redis so that several processes share it: the janitor,
// sweeps of source queues, relays of outboxes, and moves.
type Worker struct {
	cfg      Config
	stop     chan struct{}
	stopOnce sync.Once
	done     sync.WaitGroup
	shares   *shares // which queues are this worker's (shares.go)

	namesMu    sync.Mutex
	queueNames []string  // every queue, as last listed
	namesAt    time.Time // when
}

// New makes a Worker; Start runs it.
func New(cfg Config) *Worker {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.JanitorInterval == 0 {
		cfg.JanitorInterval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Worker{cfg: cfg, stop: make(chan struct{}), shares: &shares{self: cfg.Store.Owner()}}
}

// Start runs the worker until Stop: it joins the live workers, and does
// its share of the queues' background work (shares.go).
func (w *Worker) Start() {
	w.done.Add(1)
	go w.beat()
	p := &pass{idle: newIdle(w.cfg.Interval, sweepIdleMax)}
	w.every("redrive", w.cfg.Interval, func(ctx context.Context, now time.Time) error { return w.run(ctx, p, now) })
	if w.cfg.JanitorInterval > 0 {
		jb := newIdle(w.cfg.JanitorInterval, w.janitorIdleMax())
		w.every("janitor", w.cfg.JanitorInterval, func(ctx context.Context, _ time.Time) error { return w.janitor(ctx, jb) })
	}
}

// passTimeout bounds one pass of any kind of work.
const passTimeout = 30 * time.Second

// every runs pass every d until Stop, each with a passTimeout context; a
// failed pass is logged and the next one runs as usual. All the worker's
// schedules go through it.
func (w *Worker) every(name string, d time.Duration, pass func(ctx context.Context, now time.Time) error) {
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), passTimeout)
			if err := pass(ctx, time.Now()); err != nil {
				w.cfg.Logger.Warn(name+" pass failed", "err", err)
			}
			cancel()
		}
	}()
}

// janitorIdleMax is the longest the janitor leaves a queue where it found
// nothing to trim: the delay before retention expiry is counted on a
// queue nobody uses. It is the stalled read when that is shorter: a read
// that may become a stalled read is seen by a visit before it is one, and
// the janitor comes back when it would be (JanitorResult.Recheck), so a
// stalled read is recovered in time (S21) however idle its queue.
const janitorIdleMax = 30 * time.Second

func (w *Worker) janitorIdleMax() time.Duration {
	return max(min(janitorIdleMax, w.cfg.Store.StalledRead()), w.cfg.JanitorInterval)
}

// janitor trims this worker's queues that backoff says are due, and notes
// which had work. Idle queues are visited ever more rarely (up to
// janitorIdleMax). A queue whose janitor lease another process holds (it
// thought the queue its own a moment ago) is left to it until the lease
// would lapse.
func (w *Worker) janitor(ctx context.Context, backoff *idle) error {
	s := w.cfg.Store
	all, err := w.names(ctx, time.Now(), false)
	if err != nil {
		return err
	}
	names := w.shares.of(all)
	backoff.Forget(names)
	for _, q := range names {
		now := time.Now()
		if !backoff.Due(q, now) {
			continue
		}
		p, err := s.JanitorPass(ctx, q, w.cfg.JanitorInterval+tags.LeaseGrace)
		if err != nil {
			return err
		}
		if p.Held > 0 {
			backoff.Until(q, now.Add(p.Held))
			continue
		}
		backoff.Done(q, now, p.Removed > 0)
		if p.Recheck > 0 {
			backoff.Soon(q, now.Add(p.Recheck))
		}
	}
	return nil
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
	return w.run(ctx, &pass{}, time.Now())
}

// The background worker finds its work (source queues, outboxes waiting,
// running moves) by reading its share of the queues: when the work epoch
// (tags.Maintainer.WorkEpoch: a redrive policy set, a move started, on any
// process) moved, which it looks at every discoverEvery, or a move started
// here; and every discoverAll in any case, for what a crash left (an
// outbox not relayed). It sweeps a source queue where the last sweep
// moved nothing ever more rarely, up to sweepIdleMax: so a dead letter of
// an idle queue may reach its DLQ that much after its deadline.
const (
	discoverEvery = 5 * time.Second
	discoverAll   = time.Minute
	sweepIdleMax  = 5 * time.Second
)

// pass is what the background worker keeps between passes; RunOnce uses a
// fresh one (find everything, sweep everything).
type pass struct {
	idle               *idle     // nil: sweep every source queue
	found              time.Time // when the lists below were found
	looked             time.Time // when the work epoch was last read
	epoch              int64     // the work epoch then
	shares             uint64    // the worker's share then (shares.version)
	moveStarts         int64     // Store.MoveStarts then
	sweep, relay, move []string
}

// stale says whether p's lists must be found again at now.
func (w *Worker) stale(ctx context.Context, p *pass, now time.Time) (bool, error) {
	s := w.cfg.Store
	if p.found.IsZero() || now.Sub(p.found) >= discoverAll || s.MoveStarts() != p.moveStarts ||
		(p.idle != nil && w.shares.version() != p.shares) {
		return true, nil
	}
	if now.Sub(p.looked) < discoverEvery {
		return false, nil
	}
	epoch, err := s.WorkEpoch(ctx)
	if err != nil {
		return false, err
	}
	p.looked = now
	return epoch != p.epoch, nil
}

func (w *Worker) run(ctx context.Context, p *pass, now time.Time) error {
	s := w.cfg.Store
	starts := s.MoveStarts()
	fresh, err := w.stale(ctx, p, now)
	if err != nil {
		return err
	}
	if fresh {
		// The epoch first: work given after this read moves it again.
		epoch, err := s.WorkEpoch(ctx)
		if err != nil {
			return err
		}
		ver := w.shares.version()
		// New work may be on a new queue: list them anew then.
		names, err := w.names(ctx, now, p.idle == nil || epoch != p.epoch)
		if err != nil {
			return err
		}
		if p.idle != nil {
			names = w.shares.of(names) // the background's: this worker's share
		}
		sweep, relay, err := s.RedriveWorkOf(ctx, names)
		if err != nil {
			return err
		}
		moves, err := s.MoveWorkOf(ctx, names)
		if err != nil {
			return err
		}
		p.sweep, p.relay, p.move, p.found, p.moveStarts = sweep, relay, moves, now, starts
		p.epoch, p.looked, p.shares = epoch, now, ver
		if p.idle != nil {
			p.idle.Forget(sweep)
		}
	}
	sweep, relay, moves := p.sweep, p.relay, p.move
	if !fresh {
		relay = nil // relays run as dead letters are staged; this is for leftovers
	}
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, q := range sweep {
		if p.idle != nil && !p.idle.Due(q, now) {
			continue
		}
		var n int
		var err error
		if p.idle == nil {
			n, err = s.SweepDead(ctx, q)
		} else {
			var held time.Duration
			n, held, err = s.SweepDeadLeased(ctx, q, w.cfg.Interval+tags.LeaseGrace)
			if held > 0 { // another process sweeps q: look again when its lease would lapse
				p.idle.Until(q, now.Add(held))
				continue
			}
		}
		if n > 0 {
			w.cfg.Logger.Debug("dead-lettered", "queue", q, "messages", n)
		}
		if p.idle != nil {
			p.idle.Done(q, now, n > 0)
		}
		keep(err)
	}
	for _, q := range relay {
		_, err := s.RelayOutbox(ctx, q)
		keep(err)
	}
	for _, dlq := range moves {
		n, err := s.RunMove(ctx, dlq, w.cfg.Interval)
		if n > 0 {
			w.cfg.Logger.Debug("moved dead letters back", "dead_letter_queue", dlq, "messages", n)
		}
		keep(err)
	}
	return first
}
