package server

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// S22 over gRPC and REST: a seek answers the tag with its state after it;
// bad input names its field.
func TestSeekTag(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	var ids []string
	for _, body := range []string{"m1", "m2", "m3"} {
		r, err := b.m.SendMessage(b.ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte(body)})
		require.NoError(t, err)
		ids = append(ids, r.GetMessageId())
	}
	got, err := b.m.ReceiveMessage(b.ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(10)})
	require.NoError(t, err)
	require.Len(t, got.GetMessages(), 3)

	res, err := b.q.SeekTag(b.ctx, &tagqv1.SeekTagRequest{Queue: "q", Name: "default",
		Target: &tagqv1.SeekTagRequest_MessageId{MessageId: ids[1]}})
	require.NoError(t, err)
	require.Equal(t, "default", res.GetTag().GetName())
	require.Equal(t, int64(2), res.GetTag().GetState().GetAvailable())
	require.Zero(t, res.GetTag().GetState().GetInFlight(), "in flight dropped")
	require.Equal(t, int64(3), res.GetTag().GetState().GetReceivedTotal())

	// REST: POST …/tags/{name}:seek, the time as RFC 3339.
	code, body := b.do(t, http.MethodPost, "/v1/queues/q/tags/default:seek", `{"time":"1970-01-01T00:00:00Z"}`)
	require.Equal(t, http.StatusOK, code, body)
	var out struct {
		Tag struct {
			Name  string
			State struct{ Available, InFlight string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out), body)
	require.Equal(t, "default", out.Tag.Name)
	require.Equal(t, "3", out.Tag.State.Available)
	code, body = b.do(t, http.MethodPost, "/v1/queues/q/tags/default:seek", `{"messageId":"`+ids[2]+`"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"available":"1"`)
	code, body = b.do(t, http.MethodPost, "/v1/queues/q/tags/default:seek", `{"messageId":"1-1"}`)
	require.Equal(t, http.StatusNotFound, code, body)
	require.Contains(t, body, tags.ReasonMessageNotFound)
	code, body = b.do(t, http.MethodPost, "/v1/queues/q/tags/nope:seek", `{"time":"2020-01-01T00:00:00Z"}`)
	require.Equal(t, http.StatusNotFound, code, body)
	require.Contains(t, body, tags.ReasonTagNotFound)

	// A time in the future: the end; the oldest Timestamp: the start.
	res, err = b.q.SeekTag(b.ctx, &tagqv1.SeekTagRequest{Queue: "q", Name: "default",
		Target: &tagqv1.SeekTagRequest_Time{Time: timestamppb.New(time.Now().Add(time.Hour))}})
	require.NoError(t, err)
	require.Zero(t, res.GetTag().GetState().GetAvailable())
	res, err = b.q.SeekTag(b.ctx, &tagqv1.SeekTagRequest{Queue: "q", Name: "default",
		Target: &tagqv1.SeekTagRequest_Time{Time: &timestamppb.Timestamp{Seconds: -62135596800}}})
	require.NoError(t, err)
	require.Equal(t, int64(3), res.GetTag().GetState().GetAvailable())

	for _, c := range []struct {
		req    *tagqv1.SeekTagRequest
		code   codes.Code
		reason string
		field  string
	}{
		{&tagqv1.SeekTagRequest{Queue: "q", Name: "default"}, codes.InvalidArgument, tags.ReasonInvalidArgumentRange, "time"},
		{&tagqv1.SeekTagRequest{Queue: "q", Name: "default", Target: &tagqv1.SeekTagRequest_Time{
			Time: &timestamppb.Timestamp{Nanos: -1}}}, codes.InvalidArgument, tags.ReasonInvalidArgumentRange, "time"},
		{&tagqv1.SeekTagRequest{Queue: "q", Name: "default", Target: &tagqv1.SeekTagRequest_MessageId{}},
			codes.InvalidArgument, tags.ReasonInvalidArgumentRange, "message_id"},
		{&tagqv1.SeekTagRequest{Queue: "q", Name: "default", Target: &tagqv1.SeekTagRequest_MessageId{MessageId: "x"}},
			codes.InvalidArgument, tags.ReasonInvalidArgumentRange, "message_id"},
		{&tagqv1.SeekTagRequest{Queue: "q", Name: "default", Target: &tagqv1.SeekTagRequest_MessageId{MessageId: "1-1"}},
			codes.NotFound, tags.ReasonMessageNotFound, "message_id"},
		{&tagqv1.SeekTagRequest{Queue: "q", Name: "", Target: &tagqv1.SeekTagRequest_MessageId{MessageId: "1-1"}},
			codes.InvalidArgument, tags.ReasonInvalidName, "name"},
		{&tagqv1.SeekTagRequest{Queue: "nope", Name: "default", Target: &tagqv1.SeekTagRequest_MessageId{MessageId: ids[0]}},
			codes.NotFound, tags.ReasonQueueNotFound, "queue"},
	} {
		_, err := b.q.SeekTag(b.ctx, c.req)
		code, ei := info(t, err)
		require.Equal(t, c.code, code, "%v: %v", c.req, err)
		require.Equal(t, c.reason, ei.GetReason(), "%v: %v", c.req, err)
		require.Equal(t, c.field, ei.GetMetadata()["field"], "%v: %v", c.req, err)
	}
}

// With authentication on, a seek needs HANDLE (receive and settle) on the
// queue, for the tag where receiving is limited to tags.
func TestAuth_SeekTagNeedsHandleOnTheTag(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	_, err := b.q.CreateQueue(as(b.admin), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	for _, name := range []string{"t1", "t2"} {
		_, err = b.q.CreateTag(as(b.admin), &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: name}})
		require.NoError(t, err)
	}
	seek := func(tag string) error {
		_, err := b.q.SeekTag(as(b.user), &tagqv1.SeekTagRequest{Queue: "q", Name: tag,
			Target: &tagqv1.SeekTagRequest_Time{Time: timestamppb.New(time.Unix(0, 0))}})
		return err
	}
	for _, p := range []access.Permission{access.Receive, access.GetInfo, access.Send} {
		require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: "q", Permission: p}))
		code, ei := info(t, seek("t1"))
		require.Equal(t, codes.PermissionDenied, code, p)
		require.Equal(t, "HANDLE", ei.GetMetadata()["permission"], p)
	}
	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: "q", Permission: access.Handle,
		Tags: []string{"t1"}}))
	require.NoError(t, seek("t1"))
	code, ei := info(t, seek("t2"))
	require.Equal(t, codes.PermissionDenied, code)
	require.Equal(t, "t2", ei.GetMetadata()["tag"])
	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: "q", Permission: access.UseQueue}))
	require.NoError(t, seek("t2"))
}
