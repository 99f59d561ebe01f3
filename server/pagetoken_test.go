package server

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// S14: ListQueues and ListTags page with the tokens they hand out and
// refuse any other page_token with INVALID_ARGUMENT naming it.
func TestS14_ListsTakeOnlyTheirOwnPageTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 5 {
		_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: fmt.Sprintf("q%d", i)}})
		require.NoError(t, err)
		_, err = b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "q0", Tag: &tagqv1.Tag{Name: fmt.Sprintf("t%d", i)}})
		require.NoError(t, err)
	}

	// Paging through works with the tokens given.
	var names []string
	tok := ""
	for {
		page, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{Prefix: "q", PageSize: 2, PageToken: tok})
		require.NoError(t, err)
		for _, q := range page.GetQueues() {
			names = append(names, q.GetName())
		}
		if tok = page.GetNextPageToken(); tok == "" {
			break
		}
		require.NotContains(t, []string{"q1", "q3"}, tok, "opaque, not the last name")
	}
	require.Equal(t, []string{"q0", "q1", "q2", "q3", "q4"}, names)
	var tagNames []string
	for {
		page, err := b.q.ListTags(b.ctx, &tagqv1.ListTagsRequest{Queue: "q0", PageSize: 4, PageToken: tok})
		require.NoError(t, err)
		for _, tg := range page.GetTags() {
			tagNames = append(tagNames, tg.GetName())
		}
		if tok = page.GetNextPageToken(); tok == "" {
			break
		}
	}
	require.Equal(t, []string{"default", "t0", "t1", "t2", "t3", "t4"}, tagNames)

	queuesTok, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{PageSize: 1})
	require.NoError(t, err)
	tagsTok, err := b.q.ListTags(b.ctx, &tagqv1.ListTagsRequest{Queue: "q0", PageSize: 1})
	require.NoError(t, err)
	for name, call := range map[string]func() error{
		"a queue name as ListQueues' token": func() error {
			_, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{PageToken: "q1"})
			return err
		},
		"garbage": func() error {
			_, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{PageToken: "%%%"})
			return err
		},
		"ListQueues' token with another prefix": func() error {
			_, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{Prefix: "q", PageToken: queuesTok.GetNextPageToken()})
			return err
		},
		"a tag name as ListTags' token": func() error {
			_, err := b.q.ListTags(b.ctx, &tagqv1.ListTagsRequest{Queue: "q0", PageToken: "t1"})
			return err
		},
		"ListTags' token of another queue": func() error {
			_, err := b.q.ListTags(b.ctx, &tagqv1.ListTagsRequest{Queue: "q1", PageToken: tagsTok.GetNextPageToken()})
			return err
		},
		"ListQueues' token in ListTags": func() error {
			_, err := b.q.ListTags(b.ctx, &tagqv1.ListTagsRequest{Queue: "q0", PageToken: queuesTok.GetNextPageToken()})
			return err
		},
	} {
		code, ei := info(t, call())
		require.Equal(t, codes.InvalidArgument, code, name)
		require.Equal(t, "INVALID_ARGUMENT_RANGE", ei.GetReason(), name)
		require.Equal(t, "page_token", ei.GetMetadata()["field"], name)
	}
}

// PeekMessage pages by tag with the tokens it hands out (bound to the
// queue and tag), and refuses any other page_token, or one beside
// message_ids, with INVALID_ARGUMENT naming it.
func TestPeekMessage_PagesWithItsOwnTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "pq"}})
	require.NoError(t, err)
	_, err = b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "other"}})
	require.NoError(t, err)
	var sent []string
	for i := range 5 {
		r, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "pq", Body: []byte(fmt.Sprint(i))})
		require.NoError(t, err)
		sent = append(sent, r.GetMessageId())
	}
	two := int32(2)
	var got []string
	tok, first := "", ""
	for {
		page, err := b.m.PeekMessage(b.ctx, &tagqv1.PeekMessageRequest{Queue: "pq", MaxMessages: &two, PageToken: tok})
		require.NoError(t, err)
		for _, m := range page.GetMessages() {
			got = append(got, m.GetMessageId())
		}
		if tok = page.GetNextPageToken(); tok == "" {
			break
		}
		if first == "" {
			first = tok
		}
		require.NotContains(t, tok, "s"+got[len(got)-1], "opaque")
	}
	require.Equal(t, sent, got)

	for name, req := range map[string]*tagqv1.PeekMessageRequest{
		"forged":           {Queue: "pq", MaxMessages: &two, PageToken: "c2Zvbw"},
		"another queue's":  {Queue: "other", MaxMessages: &two, PageToken: first},
		"another tag's":    {Queue: "pq", Tag: "t2", MaxMessages: &two, PageToken: first},
		"with message_ids": {Queue: "pq", MessageIds: sent[:1], PageToken: first},
	} {
		_, err := b.m.PeekMessage(b.ctx, req)
		code, ei := info(t, err)
		require.Equal(t, codes.InvalidArgument, code, name)
		require.Equal(t, "page_token", ei.GetMetadata()["field"], name)
	}
}
