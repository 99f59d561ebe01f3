package redisstore

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// deadOnBilling sends bodies to orders and dead-letters them on billing.
func deadOnBilling(t *testing.T, b *bundle, bodies ...string) {
	t.Helper()
	b.send("orders", bodies...)
	got := b.receive("orders", "billing", len(bodies))
	reqs := make([]tags.DeadRequest, len(got))
	for i, m := range got {
		reqs[i] = tags.DeadRequest{ReceiptHandle: m.ReceiptHandle}
	}
	errs, err := b.s.DeadLetter(b.ctx, "orders", reqs)
	require.NoError(t, err)
	for _, e := range errs {
		require.NoError(t, e)
	}
}

func runMoveToEnd(t *testing.T, b *bundle, dlq string) int {
	t.Helper()
	total := 0
	for range 100 {
		n, err := b.s.RunMove(b.ctx, dlq, time.Second)
		require.NoError(t, err)
		total += n
		tasks, err := b.s.ListMoves(b.ctx, dlq)
		require.NoError(t, err)
		if len(tasks) > 0 && tasks[0].State != tags.MoveRunning {
			return total
		}
	}
	t.Fatal("move did not finish")
	return total
}

func TestS10_MovedBackToTheTagItDiedInOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		b.send("orders", "shipped-only")
		b.del("orders", b.receive("orders", "shipping", 10)...) // shipping processed it
		b.del("orders", b.receive("orders", "", 10)...)
		got := b.receive("orders", "billing", 1)
		got[0].Attributes = nil
		errs, err := b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: got[0].ReceiptHandle, Reason: "TRY_LATER"}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		origID := got[0].ID

		task, err := b.s.StartMove(b.ctx, "orders-dlq", "", "", 0)
		require.NoError(t, err)
		require.Equal(t, tags.MoveRunning, task.State)
		require.EqualValues(t, 1, task.Total)
		require.EqualValues(t, 1, task.Remaining())
		require.EqualValues(t, tags.DefaultMoveRate, task.MaxPerSecond)
		require.Equal(t, 1, runMoveToEnd(t, b, "orders-dlq"))
		tasks, err := b.s.ListMoves(b.ctx, "orders-dlq")
		require.NoError(t, err)
		require.Equal(t, tags.MoveCompleted, tasks[0].State)
		require.EqualValues(t, 1, tasks[0].Moved)
		require.Zero(t, tasks[0].Remaining())

		require.Equal(t, tags.TagState{}, b.state("orders-dlq", "default"), "gone from the DLQ")
		require.Equal(t, tags.TagState{Available: 1, ReceivedTotal: 1, DeadTotal: 1}, b.state("orders", "billing"))
		require.Equal(t, tags.TagState{ReceivedTotal: 1, DeletedTotal: 1}, b.state("orders", "shipping"), "shipping never sees it again")
		require.Equal(t, tags.TagState{ReceivedTotal: 1, DeletedTotal: 1}, b.state("orders", "default"))
		require.Empty(t, b.receive("orders", "shipping", 10))
		back := b.receive("orders", "billing", 10)
		require.Len(t, back, 1)
		require.Equal(t, "shipped-only", string(back[0].Body))
		require.Equal(t, 1, back[0].ReceiveCount, "receive count reset")
		require.Equal(t, 1, back[0].MoveCount)
		require.Empty(t, back[0].Attributes, "DLQ.sourceQueue is not carried back")

		// It can die again, remembering where it started.
		errs, err = b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: back[0].ReceiptHandle}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		again := b.receive("orders-dlq", "", 1)
		require.Equal(t, origID, again[0].DeadLetter.OriginalMessageID)
		require.Equal(t, 1, again[0].DeadLetter.MoveCount)
	})
}

func TestS10_MoveFiltersRateCancelAndFailures(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		deadOnBilling(t, b, "b1", "b2", "b3")
		got := b.receive("orders", "shipping", 1) // b1 on shipping
		_, err := b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: got[0].ReceiptHandle}})
		require.NoError(t, err)
		b.send("orders-dlq", "not-a-dead-letter")

		_, err = b.s.StartMove(b.ctx, "orders", "", "", 0)
		requireReason(t, err, tags.ReasonNotADeadLetterQueue)
		_, err = b.s.StartMove(b.ctx, "orders-dlq", "", "", tags.MaxMoveRate+1)
		requireInvalid(t, err, tags.ReasonInvalidArgumentRange, "max_messages_per_second")

		task, err := b.s.StartMove(b.ctx, "orders-dlq", "orders", "billing", 1)
		require.NoError(t, err)
		require.EqualValues(t, 3, task.Total)
		_, err = b.s.StartMove(b.ctx, "orders-dlq", "", "", 0)
		requireReason(t, err, tags.ReasonMoveInProgress)
		// Rate 1/s: one per second of work.
		n, err := b.s.RunMove(b.ctx, "orders-dlq", time.Second)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		tasks, _ := b.s.ListMoves(b.ctx, "orders-dlq")
		require.EqualValues(t, 2, tasks[0].Remaining())
		_, err = b.s.CancelMove(b.ctx, "orders-dlq", task.ID)
		require.NoError(t, err)
		n, err = b.s.RunMove(b.ctx, "orders-dlq", time.Second)
		require.NoError(t, err)
		require.Zero(t, n)
		tasks, _ = b.s.ListMoves(b.ctx, "orders-dlq")
		require.Equal(t, tags.MoveCancelled, tasks[0].State)
		require.EqualValues(t, 1, tasks[0].Moved)
		require.Equal(t, tags.TagState{Available: 4}, b.state("orders-dlq", "default"), "billing's other two, shipping's, and the plain message")

		// The shipping tag is gone: its dead letter fails and stays.
		require.NoError(t, b.s.DeleteTag(b.ctx, "orders", "shipping"))
		_, err = b.s.StartMove(b.ctx, "orders-dlq", "", "", 100)
		require.NoError(t, err)
		require.Equal(t, 2, runMoveToEnd(t, b, "orders-dlq"))
		tasks, _ = b.s.ListMoves(b.ctx, "orders-dlq")
		require.Len(t, tasks, 2)
		require.Equal(t, tags.MoveCompleted, tasks[0].State)
		require.EqualValues(t, 2, tasks[0].Moved)
		require.EqualValues(t, 1, tasks[0].Failed)
		require.Contains(t, tasks[0].FailureReason, "shipping")
		require.Equal(t, tags.TagState{Available: 2}, b.state("orders-dlq", "default"))
		require.Equal(t, []string{"b1", "b2", "b3"}, bodies(b.receive("orders", "billing", 10)))
	})
}

func TestS10_MoveIsExactlyOnceAcrossARestart(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		deadOnBilling(t, b, "m1", "m2")
		dead := b.receive("orders-dlq", "", 10) // a DLQ consumer holds them
		require.Len(t, dead, 2)
		task, err := b.s.StartMove(b.ctx, "orders-dlq", "", "", 0)
		require.NoError(t, err)
		// Crash after the source-side add of m1, before the DLQ-side step.
		dl := dead[0].DeadLetter
		v, err := b.rdb.XRange(b.ctx, b.s.qkeys("orders-dlq").stream, dead[0].ID, dead[0].ID).Result()
		require.NoError(t, err)
		_, _, err = b.s.moveBack(b.ctx, "orders-dlq", dead[0].ID, v[0].Values, dl)
		require.NoError(t, err)
		// Another process takes over once the lease lapses (here: none was taken).
		other, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t), TestClock: true})
		require.NoError(t, err)
		defer other.Close()
		n, err := other.RunMove(b.ctx, "orders-dlq", time.Second)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		tasks, _ := b.s.ListMoves(b.ctx, "orders-dlq")
		require.Equal(t, task.ID, tasks[0].ID)
		require.Equal(t, []string{"m1", "m2"}, bodies(b.receive("orders", "billing", 10)), "no duplicate of m1")
		require.Equal(t, tags.TagState{ReceivedTotal: 2}, b.state("orders-dlq", "default"), "the held dead letters left the DLQ")
	})
}

// Found by the TypeScript client's tests: a dead letter every DLQ tag has
// received and deleted is done with; a move must not resurrect it, even
// before the janitor trims it.
func TestS10_MoveLeavesDeadLettersTheDLQAlreadyProcessed(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		deadOnBilling(t, b, "handled", "pending")
		got := b.receive("orders-dlq", "", 1)
		require.Equal(t, []string{"handled"}, bodies(got))
		b.del("orders-dlq", got...)
		task, err := b.s.StartMove(b.ctx, "orders-dlq", "", "", 0)
		require.NoError(t, err)
		require.EqualValues(t, 1, task.Total, "only the pending one")
		require.Equal(t, 1, runMoveToEnd(t, b, "orders-dlq"))
		require.Equal(t, []string{"pending"}, bodies(b.receive("orders", "billing", 10)))
	})
}

// A task is running by its decoded state, not by matching text in its JSON
// (which an encoder may space out, or a failure reason quote).
func TestTaskRunning_DecodesTheState(t *testing.T) {
	done, err := json.Marshal(tags.MoveTask{ID: "1", State: tags.MoveFailed, FailureReason: `saw "state":"RUNNING" in a reply`})
	require.NoError(t, err)
	running, err := json.Marshal(tags.MoveTask{ID: "2", State: tags.MoveRunning})
	require.NoError(t, err)
	require.False(t, taskRunning(string(done)))
	require.True(t, taskRunning(string(running)))
	require.True(t, taskRunning(`{"id":"3", "state": "RUNNING"}`))
	require.False(t, taskRunning(`not json`))
}
