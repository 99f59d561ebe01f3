package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// S10: CancelMessageMove reports the dead letters the move leaves in the
// DLQ as remaining_messages (no redrive worker runs here: nothing moved).
func TestS10_CancelMessageMoveReportsTheRemainingDeadLetters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := tagqv1.NewRedriveServiceClient(b.conn)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "dlq", DeadLetterQueue: true}})
	require.NoError(t, err)
	_, err = b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "src",
		RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 5}}})
	require.NoError(t, err)
	deadTwo := func() {
		_, err := b.m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "src", Entries: []*tagqv1.SendMessageBatchEntry{
			{Id: "a", Body: []byte("a")}, {Id: "b", Body: []byte("b")}}})
		require.NoError(t, err)
		got, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "src", MaxMessages: i32(10)})
		require.NoError(t, err)
		require.Len(t, got.GetMessages(), 2)
		for _, m := range got.GetMessages() {
			_, err := b.m.DeadMessage(b.ctx, &tagqv1.DeadMessageRequest{Queue: "src", ReceiptHandle: m.GetReceiptHandle()})
			require.NoError(t, err)
		}
	}

	deadTwo()
	task, err := r.StartMessageMove(b.ctx, &tagqv1.StartMessageMoveRequest{DeadLetterQueue: "dlq"})
	require.NoError(t, err)
	require.EqualValues(t, 2, task.GetTask().GetRemainingMessages())
	cancelled, err := r.CancelMessageMove(b.ctx, &tagqv1.CancelMessageMoveRequest{DeadLetterQueue: "dlq", TaskId: task.GetTask().GetTaskId()})
	require.NoError(t, err)
	require.Equal(t, tagqv1.MessageMoveTask_STATE_CANCELLED, cancelled.GetTask().GetState())
	require.EqualValues(t, 2, cancelled.GetTask().GetRemainingMessages())
	list, err := r.ListMessageMoves(b.ctx, &tagqv1.ListMessageMovesRequest{DeadLetterQueue: "dlq"})
	require.NoError(t, err)
	require.EqualValues(t, 2, list.GetTasks()[0].GetRemainingMessages())

	// Over REST: a second move of all four, cancelled.
	deadTwo()
	task, err = r.StartMessageMove(b.ctx, &tagqv1.StartMessageMoveRequest{DeadLetterQueue: "dlq"})
	require.NoError(t, err)
	code, body := b.do(t, "POST", "/v1/queues/dlq/messageMoves/"+task.GetTask().GetTaskId()+":cancel", "")
	require.Equal(t, 200, code, body)
	var out struct {
		Task struct {
			State     string `json:"state"`
			Remaining string `json:"remaining_messages"`
		} `json:"task"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	require.Equal(t, "STATE_CANCELLED", out.Task.State)
	require.Equal(t, "4", out.Task.Remaining)
}
