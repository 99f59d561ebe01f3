package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// TestE2E_S14_ErrorsEchoLittleOfABigInput: a 1 MB queue name comes back
// clipped, over gRPC (message and trailer) and REST (the JSON status).
func TestE2E_S14_ErrorsEchoLittleOfABigInput(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	big := strings.Repeat("x", 1<<20)
	_, err := d.q.CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: big}})
	code, r, f := grpcReason(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "INVALID_NAME", r)
	require.Equal(t, "queue.name", f)
	require.Less(t, len(status.Convert(err).Message()), 300)
	// The status with its details is the grpc-status-details-bin trailer.
	require.Less(t, proto.Size(status.Convert(err).Proto()), 2048)

	code2, body := d.rest("POST", "/v1/queues", fmt.Sprintf(`{"name": %q}`, big))
	require.Equal(t, 400, code2)
	r, f = reason(body)
	require.Equal(t, "INVALID_NAME", r)
	require.Equal(t, "queue.name", f)
	require.Less(t, len(fmt.Sprint(body)), 2048)
}

// rawCodec sends []byte requests as they are and decodes answers as
// protobuf.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return proto.Unmarshal(data.Materialize(), v.(proto.Message))
}

// TestE2E_S14_UnreadableProtobufIsMalformedRequest: bytes that are not the
// method's message get INVALID_ARGUMENT with ErrorInfo, not a bare
// INTERNAL from gRPC's decoder.
func TestE2E_S14_UnreadableProtobufIsMalformedRequest(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	raw := []byte{0x0a, 0x10, 'x'} // field 1, 16 bytes long, then the end
	err := d.conn.Invoke(context.Background(), "/tagq.v1.MessageService/SendMessage", &raw, &tagqv1.SendMessageResponse{},
		grpc.ForceCodecV2(rawCodec{}))
	code, r, _ := grpcReason(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "MALFORMED_REQUEST", r)
}

// TestE2E_REST_OnlyJSONRequests: CSRF. A POST (a form's, with no body
// even) or any body that is not application/json is 415 with ErrorInfo
// and changes nothing.
func TestE2E_REST_OnlyJSONRequests(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	d.restOK("POST", "/v1/queues", `{"name": "q"}`)
	d.restOK("POST", "/v1/queues/q/messages", `{"body": "eA=="}`)
	for _, tc := range []struct{ path, ct, body string }{
		{"/v1/queues/q:purge", "", ""},
		{"/v1/queues/q:purge", "application/x-www-form-urlencoded", "a=b"},
		{"/v1/queues", "text/plain", `{"name": "csrf"}`},
	} {
		req, err := http.NewRequest("POST", "http://"+d.http+tc.path, strings.NewReader(tc.body))
		require.NoError(t, err)
		if tc.ct != "" {
			req.Header.Set("Content-Type", tc.ct)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		require.Equal(t, 415, resp.StatusCode, "%s %q: %v", tc.path, tc.ct, body)
		r, _ := reason(body)
		require.Equal(t, "UNSUPPORTED_MEDIA_TYPE", r)
	}
	require.Equal(t, "1", jget(d.restOK("GET", "/v1/queues/q", ""), "queue", "state", "retained_messages"), "not purged")
	require.Len(t, d.restOK("GET", "/v1/queues", "")["queues"], 1)
}

// TestE2E_REST_OversizedBodyIs413: a body over the limit is refused from
// its Content-Length with 413 and ErrorInfo, before tagqd reads it.
func TestE2E_REST_OversizedBodyIs413(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	conn, err := net.Dial("tcp", d.http)
	require.NoError(t, err)
	defer conn.Close()
	// 500 MB announced, a few bytes sent: the answer comes anyway.
	_, err = fmt.Fprintf(conn, "POST /v1/queues/q/messages HTTP/1.1\r\nHost: tagq\r\nContent-Type: application/json\r\n"+
		"Content-Length: 500000000\r\n\r\n{\"body\": \"")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 413, resp.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	r, _ := reason(body)
	require.Equal(t, "REQUEST_TOO_LARGE", r)
	require.EqualValues(t, codes.ResourceExhausted, body["code"])
}

// The embedded store listens on loopback with a password only tagqd
// knows: another local process cannot reach the queues around the API.
func TestE2E_EmbeddedStoreNeedsItsPassword(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	m := regexp.MustCompile(`embedded in-memory store.* addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(d.proc.Stderr())
	require.NotNil(t, m, "tagqd names the embedded store's address at start-up:\n%s", d.proc.Stderr())
	rdb := redis.NewClient(&redis.Options{Addr: m[1], MaxRetries: -1})
	defer rdb.Close()
	err := rdb.Ping(context.Background()).Err()
	require.Error(t, err)
	require.Contains(t, err.Error(), "NOAUTH")
	// tagqd itself works.
	_, err = d.q.CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
}
