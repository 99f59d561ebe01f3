package tags

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Per-queue figures shared by replicas (DESIGN §8: reads of every queue
// are shared). Reading every queue's and tag's state costs Redis in
// proportion to the queues; scraped on every tagqd, it cost that once per
// replica per interval. SharedStats reads it once per interval for all:
// the first replica to find the figures in Redis (<prefix>:stats) too old
// takes a lease (<prefix>:stats:lease), reads them and puts them there;
// the others serve those. A replica that finds the lease taken waits a
// moment for the figures, else serves the older ones.

// StatsSnapshot is the per-queue figures as one replica read them.
type StatsSnapshot struct {
	Queues    []QueueStats
	Truncated bool
	// At is when they were read, on the clock of the replica that read
	// them (replicas' clocks are taken to agree within a small part of
	// the interval).
	At time.Time
}

const (
	// statsLeaseTTL bounds how long a replica may take to read the figures
	// before another may.
	statsLeaseTTL = 30 * time.Second
	// statsWait is how long a replica waits for figures another is
	// reading (Store.statsWait, which tests shorten).
	statsWait = 5 * time.Second
	// statsPoll is how often it looks meanwhile.
	statsPoll = 50 * time.Millisecond
)

// SharedStats is Stats at most maxAge old at now (the caller's clock),
// read by this process or another (see above).
func (s *Store) SharedStats(ctx context.Context, maxTags int, maxAge time.Duration, now time.Time) (StatsSnapshot, error) {
	old, ok, err := s.loadStats(ctx, maxTags)
	if err != nil {
		return StatsSnapshot{}, err
	}
	if ok && now.Sub(old.At) < maxAge {
		return old, nil
	}
	lease := s.statsKey() + ":lease"
	took, err := s.rdb.SetNX(ctx, lease, s.owner, statsLeaseTTL).Result()
	if err != nil {
		return StatsSnapshot{}, mapErr(err, "", "")
	}
	if took {
		defer func() {
			_ = scriptUnlease.Run(context.WithoutCancel(ctx), s.rdb, []string{lease}, s.owner).Err()
		}()
		var prev []QueueStats
		if ok {
			prev = old.Queues // its idle queues unchanged need no reads
		}
		qs, truncated, err := s.statsSince(ctx, maxTags, prev)
		if err != nil {
			return StatsSnapshot{}, err
		}
		snap := StatsSnapshot{Queues: qs, Truncated: truncated, At: now}
		return snap, s.publishStats(ctx, snap, maxTags, maxAge)
	}
	// Another replica reads them now.
	t := time.NewTicker(statsPoll)
	defer t.Stop()
	wait := time.NewTimer(s.statsWait)
	defer wait.Stop()
	for {
		select {
		case <-t.C:
		case <-wait.C:
			if ok {
				return old, nil
			}
			return StatsSnapshot{}, errStatsBusy
		case <-ctx.Done():
			return StatsSnapshot{}, ctx.Err()
		}
		snap, fresh, err := s.loadStats(ctx, maxTags)
		if err != nil {
			return StatsSnapshot{}, err
		}
		if fresh && (!ok || snap.At.After(old.At)) {
			return snap, nil
		}
	}
}

// publishStats puts snap in Redis for every replica.
func (s *Store) publishStats(ctx context.Context, snap StatsSnapshot, maxTags int, maxAge time.Duration) error {
	raw, err := json.Marshal(encodeStats(snap, maxTags))
	if err != nil {
		return err
	}
	// Kept well past any replica's interval: figures too old are read
	// again, not lost.
	if err := s.rdb.Set(ctx, s.statsKey(), raw, max(10*maxAge, time.Minute)).Err(); err != nil {
		return mapErr(err, "", "")
	}
	return nil
}

// errStatsBusy: another replica was reading the figures, and none were
// there to serve meanwhile.
var errStatsBusy = StorageError(errors.New("the per-queue figures are being read by another replica"))

// loadStats is the figures in Redis, if any were read with the same cap
// on tags.
func (s *Store) loadStats(ctx context.Context, maxTags int) (StatsSnapshot, bool, error) {
	raw, err := s.rdb.Get(ctx, s.statsKey()).Bytes()
	if isNil(err) {
		return StatsSnapshot{}, false, nil
	}
	if err != nil {
		return StatsSnapshot{}, false, mapErr(err, "", "")
	}
	var w statsWire
	if err := json.Unmarshal(raw, &w); err != nil || w.MaxTags != maxTags {
		return StatsSnapshot{}, false, nil // another version's, or another cap: read anew
	}
	return w.decode(), true, nil
}

func (s *Store) statsKey() string { return s.prefix + ":stats" }

// statsWire is a snapshot as kept in Redis: what the metrics need, short.
type statsWire struct {
	At        int64       `json:"at"` // unix ms
	MaxTags   int         `json:"max"`
	Truncated bool        `json:"tr,omitempty"`
	Queues    []queueWire `json:"q"`
}

type queueWire struct {
	Name      string    `json:"n"`
	Created   int64     `json:"c,omitempty"`
	Added     int64     `json:"a,omitempty"`
	Adm       string    `json:"f,omitempty"`
	Messages  int64     `json:"m,omitempty"`
	Outbox    int64     `json:"o,omitempty"`
	Moves     int64     `json:"mr,omitempty"`
	MovesLeft int64     `json:"ml,omitempty"`
	Dedup     int64     `json:"d,omitempty"`
	Tags      []tagWire `json:"t,omitempty"`
}

type tagWire struct {
	Name      string `json:"n"`
	Created   int64  `json:"c,omitempty"`
	Available int64  `json:"a,omitempty"`
	InFlight  int64  `json:"i,omitempty"`
	Delayed   int64  `json:"dl,omitempty"`
	Received  int64  `json:"r,omitempty"`
	Deleted   int64  `json:"del,omitempty"`
	Dead      int64  `json:"dd,omitempty"`
	Expired   int64  `json:"x,omitempty"`
	OldestMs  int64  `json:"old,omitempty"`
}

func encodeStats(snap StatsSnapshot, maxTags int) statsWire {
	w := statsWire{At: snap.At.UnixMilli(), MaxTags: maxTags, Truncated: snap.Truncated, Queues: make([]queueWire, len(snap.Queues))}
	for i, q := range snap.Queues {
		qw := queueWire{Name: q.Name, Messages: q.Messages, Outbox: q.Outbox, Moves: q.MovesRunning, MovesLeft: q.MovesRemaining,
			Dedup: q.Deduplicated, Created: q.created, Added: q.added, Adm: q.admissions, Tags: make([]tagWire, len(q.Tags))}
		for j, t := range q.Tags {
			st := t.State
			qw.Tags[j] = tagWire{Name: t.Name, Created: t.CreateTime.UnixMilli(), Available: st.Available, InFlight: st.InFlight, Delayed: st.Delayed,
				Received: st.ReceivedTotal, Deleted: st.DeletedTotal, Dead: st.DeadTotal, Expired: st.ExpiredTotal,
				OldestMs: st.OldestAvailableAge.Milliseconds()}
		}
		w.Queues[i] = qw
	}
	return w
}

func (w statsWire) decode() StatsSnapshot {
	snap := StatsSnapshot{At: time.UnixMilli(w.At), Truncated: w.Truncated, Queues: make([]QueueStats, len(w.Queues))}
	for i, q := range w.Queues {
		qs := QueueStats{Name: q.Name, Messages: q.Messages, Outbox: q.Outbox, MovesRunning: q.Moves, MovesRemaining: q.MovesLeft,
			Deduplicated: q.Dedup, created: q.Created, added: q.Added, admissions: q.Adm, Tags: make([]*Tag, len(q.Tags))}
		for j, t := range q.Tags {
			qs.Tags[j] = &Tag{TagConfig: TagConfig{Name: t.Name}, CreateTime: time.UnixMilli(t.Created), State: TagState{Available: t.Available, InFlight: t.InFlight,
				Delayed: t.Delayed, ReceivedTotal: t.Received, DeletedTotal: t.Deleted, DeadTotal: t.Dead, ExpiredTotal: t.Expired,
				OldestAvailableAge: time.Duration(t.OldestMs) * time.Millisecond}}
		}
		snap.Queues[i] = qs
	}
	return snap
}
