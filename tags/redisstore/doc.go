// Package redisstore is tagq's storage engine on Redis: queues, tags
// (independent readers) and messages over Redis streams, as package tags
// describes them (the model: types, the Storage interface, validation,
// errors). Store implements tags.Storage for the server and
// tags.Maintainer for the background worker (package redrive); cmd/tagqd,
// tagqtest and tests make it with New. Everything that touches Redis is
// here.
//
// # Storage
//
// All keys of queue Q carry the hash tag {Q}, so every script touches one
// cluster slot (see keys.go for the layout). Each queue is one stream; each
// tag is one consumer group on it, with a sorted set of visibility deadlines
// (in-flight and nacked messages), a sorted set of parked delayed messages,
// a hash of receive counts and a hash of counters. Receive, delete, change
// visibility, send, tag creation, seek, purge and the retention janitor are
// each one Lua script (scripts/*.lua), one call per batch, and take time from
// Redis TIME so replicas with skewed clocks agree. Background scripts
// (janitor, sweep) and the state script work in bounded steps, each call
// touching a bounded number of entries whatever the backlog, and are
// called again while there is more: no call holds Redis for long. On the
// embedded store (miniredis: Config.Embedded), which does some commands in
// time linear in a stream, the scripts use others (keys.go's :get group),
// and tagqd keeps in-flight messages in the zsets (Config.InFlightZset).
//
// # Counters
//
// A tag's counters are exact (S12). Messages the tag has not yet read from
// the stream are counted arithmetically: init (admitted messages retained
// when the tag was created) + admitted since creation - consumed - expired
// unread. Admission of a filtered tag is decided once, by the send script,
// and again (identically) by the receive script. A seek (S22) sets the
// same arithmetic afresh from its cursor, as if the tag were made there
// with its totals kept.
//
// # Bounded memory
//
// A queue may be made without a default tag (tags.QueueConfig.NoDefaultTag),
// so that only tags that read it keep its messages. Caps on what a queue
// retains (messages, bytes) refuse sends beyond them or drop the oldest,
// counted as expired per tag (caps.go; the rules are tags'); the memory
// watch refuses sends while Redis is near its maxmemory (memwatch.go).
//
// # Priority queues
//
// A queue made with tags.QueueConfig.PriorityQueue (EMQ priorities 1-16, 1
// highest, 8 by default; fixed at creation, not with TopicQueue) has its
// tags read new entries inside the receive script, as a topic queue's do,
// into per-priority lists (keys.go). The rule: after due redeliveries
// (which come first whatever their priority), a tag hands out the highest
// priority it holds, FIFO within a priority, except that every
// PriorityOldestEvery-th (10th) message it hands out from the lists is
// the oldest one it holds (the lowest id among the lists' heads). Under
// any backlog the highest priority gets at least 90 % and no priority
// waits forever. Held messages are available (S12), kept by the janitor
// while held and expired by retention like any other; dead letters keep
// their priority, so moved back (S10) they are ordered by it again.
//
// # Retry backoff
//
// A queue's retry policy (tags.RetryPolicy; tags/policy.go) is applied by
// lengthening deadlines: the receive script sets each delivery's deadline
// to its visibility plus its backoff, and settle.lua sets a nack's that
// asks for it, so every path that makes due messages available sees one
// deadline and wakes waiters at it. Policy queues hand out in zset mode.
//
// # Long polling
//
// Waiting receives do not poll. One watcher per queue per process blocks in
// XREAD on the queue's stream and its wake stream (on a dedicated
// connection, not the command pool) and wakes local waiters; a timer per tag
// wakes a waiter at the earliest visibility or delay deadline (package
// wake). A send of this process wakes its waiters itself, and one that
// finds a receive waiting on a plain queue's tag does that receive in its
// own MULTI and hands it the messages (deliver.go): at low rates a message
// goes from send to receiver in one Redis round trip.
//
// Nothing available waits (S21): every script that makes a message
// available other than by a send (a nack, a deadline it sets, a read the
// janitor recovers, a topic unblocked) writes the queue's wake stream,
// which every process's watch reads; a process's cached "nothing due
// before" hints are trusted only while such a watch keeps them, else for
// a second (hints.go).
//
// # Around the engine
//
// The server sees the engine as tags.Storage, whose conformance suite,
// model tests included, any implementation can run (package tags/tagstest,
// which runs it on this engine). Receipt handles and their key ring are
// package receipt; stream ids, package streamid; the wake-ups of waiting
// receives, package wake (hub.go is the engine's side). The background
// work that calls the engine's janitor, sweep, relay and move steps
// (tags.Maintainer) is scheduled by package redrive. The steps themselves
// stay here: each is a script on the engine's keys with a few lines
// around it, and moving them out would export the key layout.
package redisstore
