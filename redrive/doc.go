// Package redrive runs tagq's dead-letter machinery in the background:
// sweeping messages that reached their tag's max receive count to the
// dead-letter queue without anyone polling the source (S7), relaying
// dead-letter outboxes left behind by a crash (S9), and moving dead letters
// back to the tag they died in (S10).
//
// The storage steps themselves are atomic scripts in package tags; this
// package decides when to run them. Every step is safe to run on several
// tagqd processes sharing one Redis at once.
package redrive
