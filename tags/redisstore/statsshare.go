package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags"
)

// Per-queue figures shared by replicas (DESIGN §8: reads of every queue
// are shared). Reading every queue's and tag's state costs Redis in
// proportion to the queues; scraped on every tagqd, it cost that once per
// replica per interval. SharedStats reads it once per interval for all:
// the first replica to find the figures in Redis (<prefix>:stats) too old
// takes a lease (<prefix>:stats:lease), reads them and puts them there;
// the others serve those. A replica that finds the lease taken waits a
// moment for the figures, else serves the older ones.

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
func (s *Store) SharedStats(ctx context.Context, maxTags int, maxAge time.Duration, now time.Time) (tags.StatsSnapshot, error) {
	old, ok, err := s.loadStats(ctx, maxTags)
	if err != nil {
		return tags.StatsSnapshot{}, err
	}
	if ok && now.Sub(old.at) < maxAge {
		return old.figures(), nil
	}
	lease := s.statsKey() + ":lease"
	took, err := s.rdb.SetNX(ctx, lease, s.owner, statsLeaseTTL).Result()
	if err != nil {
		return tags.StatsSnapshot{}, mapErr(err, "", "")
	}
	if took {
		defer func() {
			_ = scriptUnlease.Run(context.WithoutCancel(ctx), s.rdb, []string{lease}, s.owner).Err()
		}()
		var prev []queueRead
		if ok {
			prev = old.queues // its idle queues unchanged need no reads
		}
		qs, truncated, err := s.statsSince(ctx, maxTags, prev)
		if err != nil {
			return tags.StatsSnapshot{}, err
		}
		snap := snapshot{queues: qs, truncated: truncated, at: now}
		return snap.figures(), s.publishStats(ctx, snap, maxTags, maxAge)
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
				return old.figures(), nil
			}
			return tags.StatsSnapshot{}, errStatsBusy
		case <-ctx.Done():
			return tags.StatsSnapshot{}, ctx.Err()
		}
		snap, fresh, err := s.loadStats(ctx, maxTags)
		if err != nil {
			return tags.StatsSnapshot{}, err
		}
		if fresh && (!ok || snap.at.After(old.at)) {
			return snap.figures(), nil
		}
	}
}

// snapshot is the figures as the engine read or loaded them: every
// queue's with what says it is as it was (queueRead).
type snapshot struct {
	queues    []queueRead
	truncated bool
	at        time.Time
}

// figures is snap as tags.Storage has it.
func (snap snapshot) figures() tags.StatsSnapshot {
	return tags.StatsSnapshot{Queues: figures(snap.queues), Truncated: snap.truncated, At: snap.at}
}

// publishStats puts snap in Redis for every replica.
func (s *Store) publishStats(ctx context.Context, snap snapshot, maxTags int, maxAge time.Duration) error {
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
var errStatsBusy = rediserr.StorageError(errors.New("the per-queue figures are being read by another replica"))

// loadStats is the figures in Redis, if any were read with the same cap
// on tags.
func (s *Store) loadStats(ctx context.Context, maxTags int) (snapshot, bool, error) {
	raw, err := s.rdb.Get(ctx, s.statsKey()).Bytes()
	if isNil(err) {
		return snapshot{}, false, nil
	}
	if err != nil {
		return snapshot{}, false, mapErr(err, "", "")
	}
	var w statsWire
	if err := json.Unmarshal(raw, &w); err != nil || w.MaxTags != maxTags {
		return snapshot{}, false, nil // another version's, or another cap: read anew
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

func encodeStats(snap snapshot, maxTags int) statsWire {
	w := statsWire{At: snap.at.UnixMilli(), MaxTags: maxTags, Truncated: snap.truncated, Queues: make([]queueWire, len(snap.queues))}
	for i, q := range snap.queues {
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

func (w statsWire) decode() snapshot {
	snap := snapshot{at: time.UnixMilli(w.At), truncated: w.Truncated, queues: make([]queueRead, len(w.Queues))}
	for i, q := range w.Queues {
		qs := queueRead{QueueStats: tags.QueueStats{Name: q.Name, Messages: q.Messages, Outbox: q.Outbox, MovesRunning: q.Moves,
			MovesRemaining: q.MovesLeft, Deduplicated: q.Dedup, Tags: make([]*tags.Tag, len(q.Tags))},
			created: q.Created, added: q.Added, admissions: q.Adm}
		for j, t := range q.Tags {
			qs.Tags[j] = &tags.Tag{TagConfig: tags.TagConfig{Name: t.Name}, CreateTime: time.UnixMilli(t.Created), State: tags.TagState{Available: t.Available, InFlight: t.InFlight,
				Delayed: t.Delayed, ReceivedTotal: t.Received, DeletedTotal: t.Deleted, DeadTotal: t.Dead, ExpiredTotal: t.Expired,
				OldestAvailableAge: time.Duration(t.OldestMs) * time.Millisecond}}
		}
		snap.queues[i] = qs
	}
	return snap
}
