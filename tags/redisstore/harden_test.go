package redisstore

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// S14: an attribute with no value (neither a string nor bytes) is refused
// per message, naming it; an empty string and empty bytes are values.
func TestS14_AttributeWithoutAValueIsRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		res, err := b.s.Send(b.ctx, "q", []tags.OutMessage{
			{Body: []byte("x"), Attributes: map[string]tags.Attribute{"ok": {String: "v"}, "novalue": tags.MissingValue}},
			{Body: []byte("y"), Attributes: map[string]tags.Attribute{"s": {String: ""}, "b": {Binary: true, Bytes: []byte{}}}},
		})
		require.NoError(t, err)
		requireInvalid(t, res[0].Err, tags.ReasonInvalidAttribute, "attributes[novalue]")
		require.NoError(t, res[1].Err)
		got := b.receive("q", "", 10)
		require.Len(t, got, 1, "only the message whose attributes all have values was stored")
		require.Equal(t, map[string]tags.Attribute{"s": {String: ""}, "b": {Binary: true, Bytes: []byte{}}}, got[0].Attributes)
	})
}

// S14: page tokens are tagq's own: one made by any Store on the same Redis
// (another replica) works for the list it was made for, and nothing else
// does — a plain name, a garbled or re-signed token, another list's token.
func TestS14_PageTokenIsOnlyOneTagqIssued(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		tok := b.s.PageToken("queues?prefix=", "q1")
		require.NotEmpty(t, tok)
		require.NotContains(t, tok, "q1", "opaque")
		require.Empty(t, b.s.PageToken("queues?prefix=", ""), "no next page")

		after, err := b.s.PageAfter("queues?prefix=", tok)
		require.NoError(t, err)
		require.Equal(t, "q1", after)
		after, err = b.s.PageAfter("queues?prefix=", "")
		require.NoError(t, err)
		require.Empty(t, after, "no token: the first page")

		replica, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t)})
		require.NoError(t, err)
		defer replica.Close()
		after, err = replica.PageAfter("queues?prefix=", tok)
		require.NoError(t, err, "another tagqd on the same Redis takes it")
		require.Equal(t, "q1", after)

		other, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, HandleKey: []byte("another key"),
			Logger: testLogger(t)})
		require.NoError(t, err)
		defer other.Close()
		forged := other.PageToken("queues?prefix=", "q1")

		raw, _ := base64.RawURLEncoding.DecodeString(tok)
		flipped := append([]byte{}, raw...)
		flipped[1] ^= 1
		for name, bad := range map[string]struct{ list, token string }{
			"a queue name":            {"queues?prefix=", "q1"},
			"not base64":              {"queues?prefix=", "!!!"},
			"too short":               {"queues?prefix=", "AQ"},
			"signed with another key": {"queues?prefix=", forged},
			"a changed name":          {"queues?prefix=", base64.RawURLEncoding.EncodeToString(flipped)},
			"another list":            {"queues?prefix=q", tok},
			"huge":                    {"queues?prefix=", strings.Repeat("A", 1<<20)},
		} {
			_, err := b.s.PageAfter(bad.list, bad.token)
			requireInvalid(t, err, tags.ReasonInvalidArgumentRange, "page_token")
			require.NotContains(t, err.Error(), bad.token[:min(len(bad.token), 40)], "%s: the token is not echoed", name)
		}
	})
}

// S10: a cancelled move reports the dead letters it leaves in the DLQ as
// remaining, exactly (not those a DLQ consumer finished meanwhile), in
// CancelMove's answer, in ListMoves and on a repeated cancel.
func TestS10_CancelledMoveReportsWhatItLeaves(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		deadOnBilling(t, b, "m1", "m2", "m3", "m4")
		task, err := b.s.StartMove(b.ctx, "orders-dlq", "", "", 1)
		require.NoError(t, err)
		require.EqualValues(t, 4, task.Total)
		n, err := b.s.RunMove(b.ctx, "orders-dlq", time.Second) // rate 1/s: m1 only
		require.NoError(t, err)
		require.Equal(t, 1, n)
		b.del("orders-dlq", b.receive("orders-dlq", "", 1)...) // a DLQ consumer finishes m2

		cancelled, err := b.s.CancelMove(b.ctx, "orders-dlq", task.ID)
		require.NoError(t, err)
		require.Equal(t, tags.MoveCancelled, cancelled.State)
		require.EqualValues(t, 1, cancelled.Moved)
		require.EqualValues(t, 2, cancelled.Remaining(), "m3 and m4 stay in the DLQ")
		tasks, err := b.s.ListMoves(b.ctx, "orders-dlq")
		require.NoError(t, err)
		require.EqualValues(t, 2, tasks[0].Remaining())
		again, err := b.s.CancelMove(b.ctx, "orders-dlq", task.ID)
		require.NoError(t, err)
		require.EqualValues(t, 2, again.Remaining())
		left := b.receive("orders-dlq", "", 10)
		require.Equal(t, []string{"m3", "m4"}, bodies(left))

		// A task cancelled before any step leaves all it covered.
		b.del("orders-dlq", left...)
		deadOnBilling(t, b, "m5")
		task, err = b.s.StartMove(b.ctx, "orders-dlq", "", "", 0)
		require.NoError(t, err)
		cancelled, err = b.s.CancelMove(b.ctx, "orders-dlq", task.ID)
		require.NoError(t, err)
		require.EqualValues(t, 1, cancelled.Remaining())
	})
}

// S14: errors quote at most MaxEcho bytes of the input they refuse.
func TestS14_ErrorsQuoteLittleOfTheInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		big := strings.Repeat("é", 1<<19) // 1 MiB of two-byte runes
		b.queue("q")
		_, err := b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: big})
		requireInvalid(t, err, tags.ReasonInvalidName, "name")
		require.Less(t, len(err.Error()), 300)
		_, _, err = b.s.ListQueues(b.ctx, big, 0, "")
		require.Less(t, len(err.Error()), 300)
		res, err := b.s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("x"), Attributes: map[string]tags.Attribute{big: {String: "v"}}}})
		require.NoError(t, err)
		e, _ := tags.AsError(res[0].Err)
		require.Less(t, len(e.Error()), 400)
		require.Equal(t, "attributes["+strings.Repeat("é", tags.MaxEcho/2)+"…]", e.Field, "cut at a rune boundary")
		_, err = b.s.CreateTag(b.ctx, "q", tags.TagConfig{Name: "t", Filter: &tags.Filter{Conditions: []tags.Condition{{Name: big}}}})
		require.Less(t, len(err.Error()), 300)
		_, err = b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "u", UserAttributes: map[string]string{big: "v"}})
		require.Less(t, len(err.Error()), 300)
	})
}

// An unreachable backend is BACKEND_UNAVAILABLE whose client text names no
// address; the address stays in Error (and Cause), for logs.
func TestBackendUnavailable_TextHidesTheAddress(t *testing.T) {
	m := miniredis.RunT(t)
	addr := m.Addr()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = c.Close() })
	s, err := New(context.Background(), Config{Client: c, Logger: testLogger(t)})
	require.NoError(t, err)
	defer s.Close()
	m.Close()
	_, err = s.GetQueue(context.Background(), "q")
	e, ok := tags.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, tags.ReasonBackendUnavailable, e.Reason)
	require.Equal(t, "BACKEND_UNAVAILABLE: storage backend unavailable", e.Text())
	require.NotNil(t, e.Cause)
	require.Contains(t, e.Error(), addr, "for the log")
}
