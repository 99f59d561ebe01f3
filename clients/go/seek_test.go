package tagq_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
)

// S22: a tag's cursor moved back to a time replays what it had deleted,
// to a message id replays from that message; an id not retained is
// MESSAGE_NOT_FOUND naming message_id.
func TestClient_SeekTag(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	queue(t, c, "c-seek", tagq.QueueOptions{})
	ids, err := c.SendBatch(ctx, "c-seek", tagq.Outgoing{Body: []byte("a")}, tagq.Outgoing{Body: []byte("b")},
		tagq.Outgoing{Body: []byte("c")})
	require.NoError(t, err)
	got, err := c.Receive(ctx, "c-seek", tagq.ReceiveOptions{Max: 10})
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.NoError(t, c.Delete(ctx, got[0].GetReceiptHandle()))

	tg, err := c.SeekTagToTime(ctx, "c-seek", "default", time.Unix(0, 0))
	require.NoError(t, err)
	require.Equal(t, int64(3), tg.GetState().GetAvailable())
	require.Zero(t, tg.GetState().GetInFlight())
	require.Equal(t, int64(1), tg.GetState().GetDeletedTotal(), "totals stay")

	tg, err = c.SeekTagToMessage(ctx, "c-seek", "default", ids[1])
	require.NoError(t, err)
	require.Equal(t, int64(2), tg.GetState().GetAvailable())
	again, err := c.Receive(ctx, "c-seek", tagq.ReceiveOptions{Max: 10})
	require.NoError(t, err)
	require.Equal(t, []string{"b", "c"}, []string{string(again[0].GetBody()), string(again[1].GetBody())})
	require.Equal(t, int32(1), again[0].GetReceiveCount())

	tg, err = c.SeekTagToTime(ctx, "c-seek", "default", time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Zero(t, tg.GetState().GetAvailable())

	_, err = c.SeekTagToMessage(ctx, "c-seek", "default", "1-1")
	var e *tagq.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, tagq.ReasonMessageNotFound, e.Reason)
	require.Equal(t, "message_id", e.Field)
}
