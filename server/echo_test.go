package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// S14: an error quotes at most a little of the input it refuses: a 1 MB
// name, id, attribute name, prefix, mask path or URL path gives a status
// (message, ErrorInfo, BadRequest) of a few hundred bytes, at most a few
// KiB where only the server's bounds on any status clip it.
func TestS14_ErrorsEchoAtMostALittleOfTheInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	big := strings.Repeat("x", 1<<20)
	calls := map[string]func() error{
		"CreateQueue name": func() error {
			_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: big}})
			return err
		},
		"GetQueue name": func() error {
			_, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: big})
			return err
		},
		"CreateTag name": func() error {
			_, err := b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: big}})
			return err
		},
		"user attribute name": func() error {
			_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "u",
				UserAttributes: map[string]string{big: "v"}}})
			return err
		},
		"tag filter attribute": func() error {
			_, err := b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: "t",
				Filter: &tagqv1.TagFilter{Conditions: []*tagqv1.AttributeCondition{{Name: big}}}}})
			return err
		},
		"ListQueues prefix": func() error {
			_, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{Prefix: big})
			return err
		},
		"update_mask path": func() error {
			_, err := b.q.UpdateQueue(b.ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: "q"},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{big}}})
			return err
		},
		"message attribute name": func() error {
			_, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"),
				Attributes: map[string]*tagqv1.MessageAttribute{big: {Value: &tagqv1.MessageAttribute_StringValue{StringValue: "v"}}}})
			return err
		},
		"batch entry id": func() error {
			_, err := b.m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "q",
				Entries: []*tagqv1.SendMessageBatchEntry{{Id: big, Body: []byte("x")}}})
			return err
		},
		"peeked message id": func() error {
			_, err := b.m.PeekMessage(b.ctx, &tagqv1.PeekMessageRequest{Queue: "q", MessageIds: []string{big}})
			return err
		},
		"receive queue": func() error {
			_, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: big})
			return err
		},
	}
	// Where the engine quotes input it does so clipped to 100 bytes; the
	// peek by id is bounded by the server's clipping of any status only.
	boundedOnly := map[string]bool{"peeked message id": true}
	for name, call := range calls {
		err := call()
		info(t, err)
		st := status.Convert(err)
		require.Less(t, proto.Size(st.Proto()), 3072, "%s: %d bytes", name, proto.Size(st.Proto()))
		if !boundedOnly[name] {
			require.NotContains(t, st.Message(), strings.Repeat("x", 101), name)
		}
	}

	// A batch's per-entry errors too.
	out, err := b.m.SendMessageBatch(b.ctx, &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("x"), Attributes: map[string]*tagqv1.MessageAttribute{big: {}}}}})
	require.NoError(t, err)
	require.Less(t, proto.Size(out), 1024)

	// REST: the body, the path, an unknown JSON field.
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/queues", fmt.Sprintf(`{"name": %q}`, big)},
		{"GET", "/v1/queues/" + big[:100000], ""},
		{"GET", "/v2/" + big[:100000], ""},
		{"POST", "/v1/queues", fmt.Sprintf(`{"name": "n", %q: 1}`, big)},
	} {
		code, body := b.do(t, tc.method, tc.path, tc.body)
		require.GreaterOrEqual(t, code, 400)
		require.Less(t, len(body), 4096, "%s %s…: %d bytes", tc.method, tc.path[:min(len(tc.path), 20)], len(body))
	}
}
