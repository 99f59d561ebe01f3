package tags

import (
	"context"
	"time"
)

// Storage is what tagq's server asks of a storage engine: the Queue,
// Message and Redrive services, Consume streams, the per-queue metrics,
// health and receipt-handle routing are built on these calls and nothing
// else. *Store is the implementation on Redis streams; the server takes
// any (server.Config.Store), so its tests can put a fake or a failing one
// behind a real gRPC and REST front.
//
// Errors follow one contract whatever the implementation: an *Error (its
// Kind and Reason become the gRPC status and its ErrorInfo; KindUnavailable
// with ReasonBackendUnavailable when the backend cannot be reached, which
// clients retry), or the context's error when the call's context ended. A
// bare error is passed through StorageError: UNAVAILABLE when
// BackendFailure recognises it, else INTERNAL (a bug: never retried).
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

var _ Storage = (*Store)(nil)

// OpenReader is NewReader as Storage has it.
func (s *Store) OpenReader(ctx context.Context, queue, tag string, visibilitySeconds *int32) (TagReader, error) {
	r, err := s.NewReader(ctx, queue, tag, visibilitySeconds)
	if err != nil {
		return nil, err
	}
	return r, nil
}
