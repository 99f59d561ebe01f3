package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/wake"
)

// The wake-ups of waiting receives are package wake's (one watch per
// queue with waiters); here: what the hub needs of the Store.

// newHub is the Store's hub: its streams, its clients, its hint cache.
func newHub(s *Store) *wake.Hub {
	return wake.New(wake.Config{
		Client:   s.rdb,
		Blocking: s.blocking,
		Keys: func(queue string) (string, string) {
			k := s.qkeys(queue)
			return k.stream, k.wake
		},
		Hints:           storeHints{s},
		IgnoreDeadlines: s.rdb.testClock, // a test clock's deadlines are not Redis's
		MaxWake:         tags.MaxBatchEntries,
		Log:             s.log,
	})
}

// storeHints is the Store's hint cache as the hub sees it.
type storeHints struct{ s *Store }

func (h storeHints) Lower(queue, tag string, at time.Time) { h.s.lowerHint(queue, tag, at) }
func (h storeHints) Forget(queue, tag string)              { h.s.forgetHint(queue, tag) }

// Waiting is the number of receives waiting in this process, on all queues.
func (s *Store) Waiting() int { return s.waiters.Waiting("") }

// register is the hub's Register with its errors as the Store's: the
// context's own, or a StorageError (the watch could not read the streams).
func (s *Store) register(ctx context.Context, queue, tag string) (*wake.Waiter, error) {
	w, err := s.waiters.Register(ctx, queue, tag)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		if _, ok := tags.AsError(err); !ok {
			err = rediserr.StorageError(err)
		}
	}
	return w, err
}
