package tags

import (
	"context"
	"time"
)

// Rates over time (RabbitMQ's management plugin's message rates): a
// storage that keeps them samples every queue's and tag's counters every
// RatesResolution, by one process at a time for all, and keeps the last
// MaxRatesWindow of samples with the queue, so every replica serves the
// same history and a restart keeps it.

const (
	// RatesResolution is the time between samples: each point of a
	// series is the mean rate over one such interval.
	RatesResolution = 10 * time.Second
	// MaxRatesWindow is how far back the series go.
	MaxRatesWindow = time.Hour
	// MinRatesWindow is the shortest window a call may ask for.
	MinRatesWindow = time.Minute
)

// RateStorage is a storage that keeps rates over time (the Redis engine
// does; the server answers UNIMPLEMENTED for one that does not).
type RateStorage interface {
	// QueueRates is queue's rates over the last window (MinRatesWindow to
	// MaxRatesWindow), for the queue and each of its tags, or only tag
	// when it is not empty.
	QueueRates(ctx context.Context, queue, tag string, window time.Duration) (*Rates, error)
}

// Rates is a queue's rates over time: one point per RatesResolution,
// oldest first, the last ending at End. An interval with no sample (the
// counters did not move, or nothing sampled then) is a zero rate.
type Rates struct {
	Resolution time.Duration
	End        time.Time
	// Queue: In is the messages added to the queue (sent, dead letters
	// arriving, moves back); Received, Deleted and Dead add up its tags'.
	Queue []RatePoint
	Tags  []TagRates
}

// TagRates is one tag's rates: In is the messages admitted to the tag
// (its filter's, from its start), Received its deliveries (redeliveries
// included), Deleted and Dead what it deleted and dead-lettered.
type TagRates struct {
	Tag    string
	Points []RatePoint
}

// RatePoint is the mean rates per second over the interval that ends at
// Time.
type RatePoint struct {
	Time                        time.Time
	In, Received, Deleted, Dead float64
}
