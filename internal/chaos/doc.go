// Package chaos holds tagq's chaos test (TestChaos, in its test files):
// two real tagqd replicas on a private redis-server (AOF, appendfsync
// always), under load from producers and consumers on three tags, while
// the replicas are killed with SIGKILL in turn and restarted, and then
// Redis is killed and restarted on its AOF. After the faults stop and the
// consumers drain, it checks per tag that no acknowledged send was lost
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
