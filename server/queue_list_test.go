package server

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// listFixture makes queues q-0 … q-4 and a DLQ "other": q-i holds i
// messages in its default tag and, from q-2 on, a tag "late" (created after
// the sends, so empty) and one message in flight on its default tag.
func listFixture(t *testing.T, b *testBundle) {
	t.Helper()
	for i := range 5 {
		name := fmt.Sprintf("q-%d", i)
		_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: name}})
		require.NoError(t, err)
		for j := range i {
			_, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: name, Body: fmt.Appendf(nil, "m%d", j)})
			require.NoError(t, err)
		}
		if i >= 2 {
			_, err = b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: name, Tag: &tagqv1.Tag{Name: "late"}})
			require.NoError(t, err)
			_, err = b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: name})
			require.NoError(t, err)
		}
	}
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "other", DeadLetterQueue: true}})
	require.NoError(t, err)
}

// One call lists a page of queues with every tag's state, and the total.
func TestListQueues_TagsViewAndTotal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	listFixture(t, b)
	l, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{PageSize: 2, View: tagqv1.QueueView_QUEUE_VIEW_TAGS})
	require.NoError(t, err)
	require.Equal(t, []string{"other", "q-0"}, queueNames(l))
	require.Equal(t, int32(6), l.GetTotalSize())
	_, err = b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{Prefix: "q-", PageSize: 2, PageToken: l.GetNextPageToken(), View: tagqv1.QueueView_QUEUE_VIEW_TAGS})
	_, ei := info(t, err)
	require.Equal(t, "page_token", ei.GetMetadata()["field"], "a token is bound to its listing")
	l, err = b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{Prefix: "q-", Skip: 3, View: tagqv1.QueueView_QUEUE_VIEW_TAGS})
	require.NoError(t, err)
	require.Equal(t, []string{"q-3", "q-4"}, queueNames(l))
	require.Equal(t, int32(5), l.GetTotalSize())
	q3 := l.GetQueues()[0]
	require.Len(t, q3.GetTags(), 2)
	require.Equal(t, "default", q3.GetTags()[0].GetName())
	require.Equal(t, int64(2), q3.GetTags()[0].GetState().GetAvailable())
	require.Equal(t, int64(1), q3.GetTags()[0].GetState().GetInFlight())
	require.Equal(t, "late", q3.GetTags()[1].GetName())

	// The basic view carries no tags.
	l, err = b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{Prefix: "q-4"})
	require.NoError(t, err)
	require.Empty(t, l.GetQueues()[0].GetTags())
}

// name_contains finds a name anywhere; skip jumps pages, also past a page
// token's place.
func TestListQueues_ContainsAndSkip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, n := range []string{"eu-orders", "us-orders", "eu-billing", "orders-dlq", "audit"} {
		_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: n}})
		require.NoError(t, err)
	}
	l, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{NameContains: "orders"})
	require.NoError(t, err)
	require.Equal(t, []string{"eu-orders", "orders-dlq", "us-orders"}, queueNames(l))
	require.Equal(t, int32(3), l.GetTotalSize())
	l, err = b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{NameContains: "orders", Prefix: "eu"})
	require.NoError(t, err)
	require.Equal(t, []string{"eu-orders"}, queueNames(l))
	l, err = b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{PageSize: 1})
	require.NoError(t, err)
	l, err = b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{PageSize: 1, Skip: 2, PageToken: l.GetNextPageToken()})
	require.NoError(t, err)
	require.Equal(t, []string{"orders-dlq"}, queueNames(l), "after audit, skipping eu-billing and eu-orders")
	l, err = b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{Skip: 10})
	require.NoError(t, err)
	require.Empty(t, l.GetQueues())
	require.Empty(t, l.GetNextPageToken())
	require.Equal(t, int32(5), l.GetTotalSize())
}

// order_by sorts every matching queue by a column, pages by offset, and
// breaks ties by name.
func TestListQueues_OrderBy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	listFixture(t, b)
	names := func(req *tagqv1.ListQueuesRequest) []string {
		t.Helper()
		var out []string
		for range 10 {
			l, err := b.q.ListQueues(b.ctx, req)
			require.NoError(t, err)
			require.Equal(t, int32(5), l.GetTotalSize())
			out = append(out, queueNames(l)...)
			if req.PageToken = l.GetNextPageToken(); req.PageToken == "" {
				return out
			}
		}
		t.Fatal("no last page")
		return nil
	}
	// available: the largest of the tags' (q-i: i-1 available once one is in flight).
	require.Equal(t, []string{"q-4", "q-3", "q-1", "q-2", "q-0"}, names(&tagqv1.ListQueuesRequest{Prefix: "q-", OrderBy: "available desc", PageSize: 2}),
		"q-4: 3, q-3: 2, q-1 and q-2: 1 (ties by name), q-0: 0")
	require.Equal(t, []string{"q-0", "q-1", "q-2", "q-3", "q-4"}, names(&tagqv1.ListQueuesRequest{Prefix: "q-", OrderBy: "messages", PageSize: 3}))
	require.Equal(t, []string{"q-4", "q-3", "q-2", "q-1", "q-0"}, names(&tagqv1.ListQueuesRequest{Prefix: "q-", OrderBy: "name desc", PageSize: 2}))
	// in_flight: the sum over tags (q-2…q-4: 1), ties by name.
	require.Equal(t, []string{"q-2", "q-3", "q-4", "q-0", "q-1"}, names(&tagqv1.ListQueuesRequest{Prefix: "q-", OrderBy: "in_flight desc"}))
	require.Equal(t, []string{"q-0", "q-1", "q-2", "q-3", "q-4"}, names(&tagqv1.ListQueuesRequest{Prefix: "q-", OrderBy: "tags"}))
	l, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{Prefix: "q-", OrderBy: "messages desc", Skip: 1, PageSize: 1, View: tagqv1.QueueView_QUEUE_VIEW_TAGS})
	require.NoError(t, err)
	require.Equal(t, []string{"q-3"}, queueNames(l))
	require.Len(t, l.GetQueues()[0].GetTags(), 2)

	for req, field := range map[*tagqv1.ListQueuesRequest]string{
		{OrderBy: "size"}:                        "order_by",
		{OrderBy: "name up"}:                     "order_by",
		{NameContains: "has space"}:              "name_contains",
		{Skip: -1}:                               "skip",
		{View: tagqv1.QueueView(9)}:              "view",
		{PageSize: 1001}:                         "page_size",
		{OrderBy: "messages", PageToken: "nope"}: "page_token",
	} {
		_, err := b.q.ListQueues(b.ctx, req)
		code, ei := info(t, err)
		require.Equal(t, codes.InvalidArgument, code, "%v", req)
		require.Equal(t, field, ei.GetMetadata()["field"], "%v", req)
	}
}

// A principal is listed the queues it holds a permission on; with the tags
// view, a queue's tags only where its level lets it read them (as ListTags).
func TestListQueues_TagsViewKeepsToPermissions(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	for _, n := range []string{"info-q", "send-q", "hidden-q"} {
		_, err := b.q.CreateQueue(as(b.admin), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: n}})
		require.NoError(t, err)
	}
	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: "info-q", Permission: access.GetInfo}))
	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: "send-q", Permission: access.Send}))
	for _, order := range []string{"", "available desc"} {
		l, err := b.q.ListQueues(as(b.user), &tagqv1.ListQueuesRequest{View: tagqv1.QueueView_QUEUE_VIEW_TAGS, OrderBy: order})
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"info-q", "send-q"}, queueNames(l), order)
		require.Equal(t, int32(2), l.GetTotalSize())
		for _, q := range l.GetQueues() {
			if q.GetName() == "info-q" {
				require.Len(t, q.GetTags(), 1, order)
			} else {
				require.Empty(t, q.GetTags(), "SEND does not read tags (%s)", order)
			}
		}
	}
}
