// Package chaos holds tagq's chaos test (TestChaos, in its test files):
// two real tagqd replicas on a private redis-server (AOF, appendfsync
// always), under load from producers and consumers on three tags, while
// the replicas are killed with SIGKILL in turn and restarted, and then
// Redis is killed and restarted on its AOF. The consumers read with long
// polls and Consume streams (and the Go client's Consumer) throughout.
// After the faults stop the consumers drain, and no tag may show messages
// available while its consumers get nothing for longer than the stalled
// read and 2 s (S21: nothing available waits). Then it checks per tag
// that no acknowledged send was lost
// (each was delivered and deleted, or is in the dead-letter queue), counts
// and reports duplicates, and checks the tag's counters exactly where
// at-least-once makes them determinable.
//
// TestCleanClosesCountOnlyDeliveries hunts a race the chaos test found:
// receives counted, at a clean close of a Consume stream, for messages no
// client was sent.
//
// They run only with TAGQ_CHAOS=1 (about a minute and a half, two at most
// on a busy machine; .ci/run sets it), and fail without redis-server on
// PATH:
//
//	TAGQ_CHAOS=1 go test -count=1 -v ./internal/chaos/
//
// Every process listens on loopback ports only.
package chaos
