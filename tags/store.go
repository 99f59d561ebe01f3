package tags

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config configures a Store.
type Config struct {
	// Client runs every command and script. Required.
	Client redis.UniversalClient
	// Blocking runs the long-poll XREAD BLOCK calls, one connection per
	// queue being waited on. Default: Client (whose pool a busy server may
	// then exhaust; give tagqd a separate client).
	Blocking redis.UniversalClient
	// Prefix starts every key. Default "tagq".
	Prefix string
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// JanitorInterval is how often retention and fully-acknowledged
	// messages are trimmed. Default 1s; negative disables the janitor
	// (tests call RunJanitor).
	JanitorInterval time.Duration
	// TestClock makes the scripts read a queue's test_clock_ms (set by
	// tests on its meta hash) instead of Redis TIME, so tests drive time on
	// a real Redis. For tests only: it costs a read per script call.
	TestClock bool
	// StalledRead is how long a receive's read may sit between its two
	// steps (XREADGROUP into the tag's PEL, then the receive script) before
	// the janitor takes it as abandoned (its tagqd stopped) and makes the
	// entries visible again. Default 30s; it must exceed any Redis call.
	StalledRead time.Duration
	// HandleKey signs receipt handles. Default: a random key shared by every
	// tagqd on the same Redis, created on first use at <prefix>:handlekey.
	HandleKey []byte
}

// Store is the engine. It is safe for concurrent use.
type Store struct {
	rdb       *client
	blocking  redis.UniversalClient
	prefix    string
	log       *slog.Logger
	handles   *handleCodec
	waiters   *hub
	owner     string   // this process, as the holder of move task leases
	dtags     sync.Map // queue -> default tag name (checked by the receive script)
	relaying  sync.Map // queue -> *relayState: one RelayOutbox per queue at a time
	hints     sync.Map // tagKey -> time.Time: no redelivery is due before then (see dueMaybe)
	lastReads sync.Map // tagKey -> lastRead: the tag's last receive (see smallReads)
	hintMu    sync.Mutex
	hintGen   uint64   // hints forgotten so far (see noteHint)
	limits    sync.Map // queue -> sendLimits, for sends' fast path
	// queue -> int32: receive_wait_seconds as the last receive script said
	// (an empty read that skips the script answers with it).
	queueWaits sync.Map
	sends      sendCoalescer
	// moveStarts counts StartMove calls in this process (see MoveStarts).
	moveStarts atomic.Int64

	janitorEvery time.Duration
	stalledRead  time.Duration
	stopOnce     sync.Once
	stop         chan struct{}
	done         sync.WaitGroup
}

// New makes a Store; it reads (or creates) the receipt-handle key and loads
// the scripts. Call Start to run the janitor and Close when done.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Client == nil {
		return nil, errors.New("tags: Config.Client is required")
	}
	s := &Store{
		rdb:          &client{UniversalClient: cfg.Client, testClock: cfg.TestClock},
		blocking:     cfg.Blocking,
		prefix:       cfg.Prefix,
		log:          cfg.Logger,
		janitorEvery: cfg.JanitorInterval,
		stalledRead:  cfg.StalledRead,
		stop:         make(chan struct{}),
		owner:        newTaskID(),
	}
	if s.blocking == nil {
		s.blocking = cfg.Client
	}
	if s.prefix == "" {
		s.prefix = "tagq"
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.stalledRead <= 0 {
		s.stalledRead = 30 * time.Second
	}
	if s.janitorEvery == 0 {
		s.janitorEvery = time.Second
	}
	key := cfg.HandleKey
	if key == nil {
		var err error
		if key, err = s.loadHandleKey(ctx); err != nil {
			return nil, err
		}
	}
	s.handles = newHandleCodec(key)
	if err := loadScripts(ctx, s.rdb); err != nil {
		return nil, unavailable(err)
	}
	s.waiters = newHub(s)
	return s, nil
}

// Start runs the background janitor. Safe to call once.
func (s *Store) Start() {
	if s.janitorEvery < 0 {
		return
	}
	s.done.Add(1)
	go s.janitorLoop()
}

// Close wakes every waiting receive (they return empty) and stops the
// janitor. Long-poll watchers end within a few seconds, or at once when the
// caller then closes the Redis clients, which Close does not do. Safe to
// call more than once.
func (s *Store) Close() error {
	s.stopOnce.Do(func() {
		close(s.stop)
		s.waiters.close()
	})
	s.done.Wait()
	return nil
}

// MoveStarts counts the moves started through this store: a background
// worker that sees it change looks for work at once.
func (s *Store) MoveStarts() int64 { return s.moveStarts.Load() }

// Ping checks the backend.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return unavailable(err)
	}
	return nil
}
