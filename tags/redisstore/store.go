package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags/receipt"
	"github.com/tagq/tagq/tags/wake"
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
	// TestClock makes the scripts read a queue's test_clock_ms (set by
	// tests on its meta hash) instead of Redis TIME, so tests drive time on
	// a real Redis. For tests only: it costs a read per script call.
	TestClock bool
	// StalledRead is how long a receive's read may sit between its two
	// steps (XREADGROUP into the tag's PEL, then the receive script) before
	// the janitor takes it as abandoned (its tagqd stopped) and makes the
	// entries visible again. Default 30s; it must exceed any Redis call.
	StalledRead time.Duration
	// Embedded says Client is miniredis (tagqd's embedded store), which
	// does some commands in time linear in a stream or a PEL that Redis
	// does in log time (XRANGE from an id, XTRIM MINID): the scripts use
	// others there. Every call stays correct either way; only the time
	// miniredis takes differs.
	Embedded bool
	// InFlightZset keeps every delivery in the tag's in-flight zset (v),
	// as before the PEL held stream deliveries: more Lua work per message,
	// but no PEL work, which miniredis does in time linear in the PEL
	// (XACK, XPENDING). Every process on one Redis may choose either; each
	// reads both.
	InFlightZset bool
	// HandleKeyFile names a file of receipt-handle keys, one a line as
	// "id:base64key": the first signs, the rest verify only (rotation; see
	// ParseHandleKeys). Once Start has run it is looked at once a second and
	// loaded again when it changes.
	HandleKeyFile string
	// HandleKey signs receipt handles (a fixed key, for tests and tools).
	// Default, without it and HandleKeyFile: a random key shared by every
	// tagqd on the same Redis, kept at <prefix>:handlekey (see
	// handlekeys.go: it is never made again silently).
	HandleKey []byte
	// HandleKeyCheck is how often, once Start has run, a Store on the key
	// kept in Redis checks that Redis still holds it (one GET). Default 5s;
	// negative: never (tests call checkHandleKey).
	HandleKeyCheck time.Duration
	// MemoryLimitRatio: sends are refused (STORAGE_FULL) while a Redis
	// master's used_memory is at or over this share of its maxmemory
	// (0 < ratio <= 1). Default DefaultMemoryLimitRatio (0.9); negative
	// turns the memory watch off. See memwatch.go.
	MemoryLimitRatio float64
	// MemoryLimitBytes is the threshold of a master that has no maxmemory
	// (maxmemory 0). Default 0: such a master is not watched.
	MemoryLimitBytes int64
	// MemoryCheckInterval is how often Start's watch reads Redis's memory.
	// Default 1s.
	MemoryCheckInterval time.Duration
	// NoRates turns off this process's part in sampling the rates over
	// time (rates.go): it never takes the sampler's lease. QueueRates
	// still serves what other processes sampled.
	NoRates bool
	// MemoryReader replaces reading INFO memory from every master (tests
	// inject readings with it).
	MemoryReader func(ctx context.Context) ([]MemoryReading, error)
	// Acks, installed on Client by durable.Install, makes every write the
	// engine acknowledges (sends, acks, nacks, visibility changes, dead
	// letters, moves, queue and tag changes) wait until that many Redis
	// replicas have it (S20). Nil: writes are acknowledged once the master
	// has them.
	Acks *durable.Acks
}

// Store is the engine. It is safe for concurrent use.
type Store struct {
	rdb       *client
	blocking  redis.UniversalClient
	prefix    string
	log       *slog.Logger
	handles   *receipt.Codec
	keys      handleKeys
	waiters   *wake.Hub
	owner     string   // this process, as the holder of move task leases
	dtags     sync.Map // queue -> default tag name (checked by the receive script)
	relaying  sync.Map // queue -> *relayState: one RelayOutbox per queue at a time
	hints     sync.Map // tagKey -> hint: no redelivery is due before then (hints.go)
	lastReads sync.Map // tagKey -> lastRead: the tag's last receive (see smallReads)
	hintMu    sync.Mutex
	hintGen   uint64   // hints forgotten so far (see noteHint)
	limits    sync.Map // queue -> sendLimits, for sends' fast path
	keyCache  sync.Map // queue -> *queueKeys (see qkeys)
	// partCounts: queue -> partCount; partNext: queue -> *atomic.Uint32,
	// the next partition a batch goes to (partition.go).
	partCounts sync.Map
	partNext   sync.Map
	partRound  sync.Map // queue -> *sendRound (partSend)
	keyCacheN  atomic.Int64
	rooms      sync.Map // queue -> room: what a capped queue could take when last seen
	// spentQuotas: writeQuotaKey or tagKey -> spent, a rate quota that ran
	// out this second (see quota.go); readQuotas: tagKey -> int64, the
	// tag's read quota as its last receive script said (0: none).
	spentQuotas sync.Map
	readQuotas  sync.Map
	// queue -> int32: receive_wait_seconds as the last receive script said
	// (an empty read that skips the script answers with it).
	queueWaits sync.Map
	// queueKinds: queue -> queueKind, is it a topic queue (S13) or a
	// priority queue (see learnQueueKind). Their tags read in zset mode,
	// inside the receive script, and every receive runs the script (a
	// topic unblocked elsewhere follows no hint; a priority queue's held
	// messages are handed out by the script).
	queueKinds sync.Map
	sends      sendCoalescer
	// offers: Consume readers waiting, which a send may deliver to
	// (deliver.go); delivered counts those deliveries.
	offers    offerBook
	delivered atomic.Int64
	// moveStarts counts StartMove calls in this process (see MoveStarts).
	moveStarts atomic.Int64

	acks         *durable.Acks // nil: writes do not wait for replicas
	statsWait    time.Duration // see SharedStats
	mem          *memWatch     // nil: no memory watch
	stalledRead  time.Duration
	zsetInFlight bool
	noRates      bool
	ratesHeld    atomic.Bool // this process took the rates lease (rates.go)
	ratesMemo    ratesMemo
	stopOnce     sync.Once
	stop         chan struct{}
	done         sync.WaitGroup
}

// New makes a Store; it reads (or creates) the receipt-handle key and loads
// the scripts. Call Start to run the janitor and Close when done.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Client == nil {
		return nil, errors.New("redisstore: Config.Client is required")
	}
	s := &Store{
		rdb:          &client{UniversalClient: cfg.Client, testClock: cfg.TestClock, embedded: cfg.Embedded},
		blocking:     cfg.Blocking,
		prefix:       cfg.Prefix,
		log:          cfg.Logger,
		stalledRead:  cfg.StalledRead,
		zsetInFlight: cfg.InFlightZset,
		noRates:      cfg.NoRates,
		acks:         cfg.Acks,
		stop:         make(chan struct{}),
		owner:        newTaskID(),
		statsWait:    statsWait,
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
	if err := s.configureMemWatch(cfg); err != nil {
		return nil, err
	}
	if err := s.initHandleKeys(ctx, cfg); err != nil {
		return nil, err
	}
	if err := loadScripts(ctx, s.rdb); err != nil {
		return nil, rediserr.StorageError(err)
	}
	s.waiters = newHub(s)
	return s, nil
}

// Start runs the watch on the receipt-handle keys and the memory watch.
// (The janitor, sweeper, relay and moves are scheduled by redrive's
// worker.) Safe to call once.
func (s *Store) Start() {
	if (s.keys.file != "" || s.keys.redis) && s.keys.every > 0 {
		s.done.Add(1)
		go s.watchHandleKeys()
	}
	if s.mem != nil {
		s.done.Add(1)
		go s.memLoop()
	}
	if !s.noRates {
		s.done.Add(1)
		go s.ratesLoop()
	}
}

// Close wakes every waiting receive (they return empty) and stops the
// watches Start began. Long-poll watchers end within a few seconds, or at once when the
// caller then closes the Redis clients, which Close does not do. Safe to
// call more than once.
func (s *Store) Close() error {
	s.stopOnce.Do(func() {
		close(s.stop)
		s.waiters.Close()
	})
	s.done.Wait()
	s.leaveRates()
	return nil
}

// acked marks ctx so that the writes made under it are acknowledged only
// once the replicas Config.Acks names have them (S20).
func (s *Store) acked(ctx context.Context) context.Context {
	if s.acks == nil {
		return ctx
	}
	return durable.Mark(ctx)
}

// MoveStarts counts the moves started through this store: a background
// worker that sees it change looks for work at once.
func (s *Store) MoveStarts() int64 { return s.moveStarts.Load() }

// Ping checks the backend.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return rediserr.StorageError(err)
	}
	return nil
}
