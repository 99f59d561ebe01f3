// Package redrive runs tagq's background work, all of it scheduled here
// (Worker): the janitor (retention expiry, trimming messages every tag is
// done with, recovering stalled reads), and the dead-letter machinery,
// sweeping messages that reached their tag's max receive count to the
// dead-letter queue without anyone polling the source (S7), relaying
// dead-letter outboxes left behind by a crash (S9), and moving dead letters
// back to the tag they died in (S10).
//
// The storage steps themselves are the storage's (tags.Maintainer; on
// Redis, atomic scripts in package redisstore); this package decides when
// to run them. Every step is safe to run on several
// tagqd processes sharing one Redis at once; to keep their cost from
// growing with the replicas, the workers of the processes split the
// queues among themselves (shares.go: each queue to one live worker), and
// the janitor and sweeps are leased per queue too.
//
// Idle queues are visited ever more rarely (idle.go), a queue whose
// janitor found a read that may become a stalled read again when it
// would be one (S21).
package redrive
