package tags

import (
	"context"
	"errors"
	"time"
)

// Storage is what tagq's server asks of a storage engine: the Queue,
// Message and Redrive services, Consume streams, the per-queue metrics,
// health and receipt-handle routing are built on these calls and nothing
// else. *redisstore.Store is the implementation on Redis streams; the
// server takes any (server.Config.Store), so its tests can put a fake or a
// failing one behind a real gRPC and REST front.
//
// Errors follow one contract whatever the implementation: an *Error (its
// Kind and Reason become the gRPC status and its ErrorInfo; KindUnavailable
// with ReasonBackendUnavailable when the backend cannot be reached, which
// clients retry), or the context's error when the call's context ended.
// An implementation maps its backend's own failures to *Errors (the Redis
// engine: internal/rediserr); a bare error that still comes out is
// passed through StorageError: UNAVAILABLE when BackendFailure recognises
// it as a network failure, else INTERNAL (a bug: never retried).
// Per-entry errors of the batch calls (SendResult.Err, the []error of
// Delete, ChangeVisibility and DeadLetter) are *Errors, or nil.
type Storage interface {
	// Queues (S11, S12).
	CreateQueue(ctx context.Context, cfg QueueConfig) (*Queue, error)
	GetQueue(ctx context.Context, name string) (*Queue, error)
	UpdateQueue(ctx context.Context, name string, u QueueUpdate) (*Queue, error)
	DeleteQueue(ctx context.Context, name string, force bool) error
	PurgeQueue(ctx context.Context, name string) (int64, error)
	// ListQueuesWhere pages through the queues whose name starts with
	// prefix, in name order, keeping those keep accepts (nil: all).
	ListQueuesWhere(ctx context.Context, prefix string, pageSize int, pageToken string, keep func(name string) bool) ([]*Queue, string, error)

	// Tags.
	CreateTag(ctx context.Context, queue string, cfg TagConfig) (*Tag, error)
	GetTag(ctx context.Context, queue, tag string) (*Tag, error)
	DeleteTag(ctx context.Context, queue, tag string) error
	ListTags(ctx context.Context, queue string, pageSize int, pageToken string) ([]*Tag, string, error)

	// Messages (S1–S10, S13).
	Send(ctx context.Context, queue string, msgs []OutMessage) ([]SendResult, error)
	Receive(ctx context.Context, queue, tag string, opt ReceiveOptions) ([]Message, error)
	Delete(ctx context.Context, queue string, handles []string) ([]error, error)
	ChangeVisibility(ctx context.Context, queue string, changes []VisibilityChange) ([]error, error)
	DeadLetter(ctx context.Context, queue string, reqs []DeadRequest) ([]error, error)
	Peek(ctx context.Context, queue string, ids []string) ([]Message, error)
	PeekPage(ctx context.Context, queue, tag string, max int, from string) (msgs []Message, next string, err error)

	// Consume streams (S15, S16): a reader per stream, and the settlements
	// of every stream of a tag applied together.
	OpenReader(ctx context.Context, queue, tag string, visibilitySeconds *int32) (TagReader, error)
	Settle(ctx context.Context, batches []*SettleBatch) error

	// Moves of dead letters back to their source (S9).
	StartMove(ctx context.Context, dlq, sourceQueue, sourceTag string, maxPerSecond int32) (*MoveTask, error)
	ListMoves(ctx context.Context, dlq string) ([]*MoveTask, error)
	CancelMove(ctx context.Context, dlq, id string) (*MoveTask, error)

	// HandleTarget names the queue and tag a receipt handle was issued for
	// (ok false: not a handle this storage issued), for permission checks
	// before the call that uses it.
	HandleTarget(raw string) (queue, tag string, ok bool)
	// PageToken and PageAfter seal and open the list calls' page tokens
	// (list names the listing a token is bound to).
	PageToken(list, last string) string
	PageAfter(list, token string) (string, error)

	// Stats reads every queue's and tag's counters, for metrics (at most
	// maxTags tags in all; truncated says some were left out).
	Stats(ctx context.Context, maxTags int) (out []QueueStats, truncated bool, err error)
	// SharedStats is Stats at most maxAge old at now (the caller's clock),
	// read by this process or another replica sharing the backend, so
	// that replicas read every queue once per maxAge between them.
	SharedStats(ctx context.Context, maxTags int, maxAge time.Duration, now time.Time) (StatsSnapshot, error)
	// Ping answers whether the backend can be reached (readiness).
	Ping(ctx context.Context) error
	// Waiting is the number of receives and Consume streams waiting for
	// messages in this process (a gauge).
	Waiting() int
}

// TagReader hands out one tag's messages to one Consume stream (see
// Reader): Receive hands out 1 to n, waiting for the first until ctx ends
// or the storage closes (ErrClosed); Close releases the reader.
type TagReader interface {
	Tag() string
	Receive(ctx context.Context, n int) ([]Message, error)
	Close()
}

// ErrClosed is returned by a TagReader's Receive once the storage is
// closing.
var ErrClosed = errors.New("tags: store closed")

// Maintainer is the background work of a storage that package redrive's
// worker schedules on every tagqd: the janitor (retention, trimming,
// stalled reads), sweeps of source queues for dead letters (S7), relays of
// dead letters to their DLQ, and moves back (S10), each queue's shared
// among the live workers and leased per queue, so that several processes
// share the work and never do one queue's at once.
type Maintainer interface {
	// Owner is this process's name among the workers and as a lease holder.
	Owner() string
	// Heartbeat keeps Owner among the live workers for ttl and returns the
	// live members (Owner included), in order.
	Heartbeat(ctx context.Context, ttl time.Duration) ([]string, error)
	// LeaveWorkers takes Owner out of the live workers at once (a clean
	// stop: the others take its share without waiting for it to expire).
	LeaveWorkers(ctx context.Context) error
	// QueueNames lists every queue's name, in name order.
	QueueNames(ctx context.Context) ([]string, error)

	// WorkEpoch is a counter every process bumps when it gives a queue
	// work that is found by reading the queues (a redrive policy, a move);
	// MoveStarts counts the moves started in this process. Either moving
	// says: look for work again.
	WorkEpoch(ctx context.Context) (int64, error)
	MoveStarts() int64
	// RedriveWorkOf says which of the named queues have a redrive policy
	// (to sweep) and which have dead letters waiting in their outbox (to
	// relay); MoveWorkOf which are DLQs with a running move task.
	RedriveWorkOf(ctx context.Context, names []string) (sweep, relay []string, err error)
	MoveWorkOf(ctx context.Context, names []string) ([]string, error)

	// StalledRead is how long a receive's read may sit unfinished before
	// the janitor takes it as abandoned; a queue's janitor visits must not
	// be further apart.
	StalledRead() time.Duration
	// JanitorPass is the janitor's work on queue q under q's janitor
	// lease, taken or renewed for lease.
	JanitorPass(ctx context.Context, q string, lease time.Duration) (JanitorResult, error)
	// SweepDead dead-letters, on every tag of a source queue, the messages
	// received max_receive_count times whose deadline passed, and relays
	// them; SweepDeadLeased does it under the queue's sweep lease, taken
	// or renewed for lease, and says how long another process's lease has
	// left instead when it holds it.
	SweepDead(ctx context.Context, queue string) (int, error)
	SweepDeadLeased(ctx context.Context, queue string, lease time.Duration) (int, time.Duration, error)
	// RelayOutbox relays the dead letters queue staged to its DLQ.
	RelayOutbox(ctx context.Context, queue string) (int, error)
	// RunMove advances dlq's running move task, if no other process holds
	// it, by period's worth of its rate.
	RunMove(ctx context.Context, dlq string, period time.Duration) (int, error)
}

// JanitorResult is what a janitor pass on a queue did and found.
type JanitorResult struct {
	// Removed is how many stored messages went.
	Removed int64
	// Held is how long another process's lease on the queue's janitor
	// work has left (0: this pass did the work).
	Held time.Duration
	// Recheck, when not 0, is how soon the janitor should look at the
	// queue again: a read still in a tag's PEL may be a stalled read by
	// then (S21: recovered within the stalled read and a moment).
	Recheck time.Duration
}

// LeaseGrace is how much longer than its holder's next visit a lease on a
// queue's background work lasts (DESIGN §8): one process does each
// queue's janitor work, and sweeps it, at a time; when the holder stops,
// another takes the work over at most this long after the holder's next
// visit was due (within seconds on a busy queue, whose holder visits every
// interval).
const LeaseGrace = 3 * time.Second
