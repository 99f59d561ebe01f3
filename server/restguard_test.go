package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// restReason is the HTTP status, gRPC code and ErrorInfo reason of a REST
// error answer.
func restReason(t *testing.T, body string) (float64, string, map[string]string) {
	t.Helper()
	var st struct {
		Code    float64 `json:"code"`
		Details []struct {
			Type     string            `json:"@type"`
			Reason   string            `json:"reason"`
			Domain   string            `json:"domain"`
			Metadata map[string]string `json:"metadata"`
		} `json:"details"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &st), body)
	require.NotEmpty(t, st.Details, body)
	require.Equal(t, "type.googleapis.com/google.rpc.ErrorInfo", st.Details[0].Type)
	require.Equal(t, Domain, st.Details[0].Domain)
	return st.Code, st.Details[0].Reason, st.Details[0].Metadata
}

// CSRF: a POST, PUT or PATCH, and any request with a body, needs
// Content-Type: application/json; a browser cannot send that cross-site
// without a preflight. Anything else is 415 and changes nothing.
func TestREST_CSRF_OnlyJSONBodiesAndPosts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	code, body := b.do(t, "POST", "/v1/queues", `{"name": "q"}`)
	require.Equal(t, 200, code, body)
	code, body = b.do(t, "POST", "/v1/queues/q/messages", `{"body": "eA=="}`)
	require.Equal(t, 200, code, body)

	for _, tc := range []struct{ method, path, ct, body string }{
		{"POST", "/v1/queues", "text/plain", `{"name": "csrf"}`},
		{"POST", "/v1/queues", "application/x-www-form-urlencoded", `{"name": "csrf"}`},
		{"POST", "/v1/queues", "multipart/form-data; boundary=x", `{"name": "csrf"}`},
		{"POST", "/v1/queues", "", `{"name": "csrf"}`},
		{"POST", "/v1/queues", "application/json-patch+json", `{"name": "csrf"}`},
		{"POST", "/v1/queues", "application/json; =broken", `{"name": "csrf"}`},
		{"POST", "/v1/queues/q:purge", "", ""},           // a form with no fields
		{"POST", "/v1/queues/q:purge", "text/plain", ""}, // or an empty text/plain one
		{"PATCH", "/v1/queues/q?update_mask=delay_seconds", "text/plain", `{"delay_seconds": 9}`},
		{"DELETE", "/v1/queues/q", "text/plain", `{}`}, // a body, not JSON
		{"GET", "/v1/queues/q", "text/plain", `x`},     // likewise
	} {
		code, body := b.doWith(t, tc.method, tc.path, tc.ct, strings.NewReader(tc.body))
		require.Equal(t, 415, code, "%s %s %q: %s", tc.method, tc.path, tc.ct, body)
		grpcCode, reason, _ := restReason(t, body)
		require.Equal(t, ReasonUnsupportedMediaType, reason)
		require.EqualValues(t, 3, grpcCode, "INVALID_ARGUMENT")
	}
	lst, err := b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{})
	require.NoError(t, err)
	require.Len(t, lst.GetQueues(), 1, "no queue created")
	q, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
	require.EqualValues(t, 1, q.GetQueue().GetState().GetRetainedMessages(), "not purged")
	require.EqualValues(t, 0, q.GetQueue().GetDelaySeconds(), "not updated")

	// JSON with parameters or in capitals is JSON; GET and a body-less
	// DELETE need no Content-Type.
	for _, tc := range []struct{ method, path, ct, body string }{
		{"POST", "/v1/queues/q/messages", "application/json; charset=utf-8", `{"body": "eA=="}`},
		{"POST", "/v1/queues/q/messages", "Application/JSON", `{"body": "eA=="}`},
		{"POST", "/v1/queues/q:purge", "application/json", ""},
		{"GET", "/v1/queues/q", "", ""},
		{"GET", "/healthz", "", ""},
		{"DELETE", "/v1/queues/q", "", ""},
	} {
		code, body := b.doWith(t, tc.method, tc.path, tc.ct, strings.NewReader(tc.body))
		require.Equal(t, 200, code, "%s %s %q: %s", tc.method, tc.path, tc.ct, body)
	}
}

// A REST body over the limit is 413 with ErrorInfo, whether it says its
// length or not, and so is one whose request is over MaxRequestBytes once
// decoded; nothing is stored.
func TestREST_OversizedBodyIs413(t *testing.T) {
	t.Parallel()
	const maxRequest = 64 << 10
	b := setup(t, func(c *Config) { c.MaxRequestBytes = maxRequest })
	limit := restBodyLimit(maxRequest)
	code, body := b.do(t, "POST", "/v1/queues", `{"name": "q", "max_message_bytes": 1048576}`)
	require.Equal(t, 200, code, body)

	tiny := `{"body": "eA=="}`
	pad := strings.Repeat(" ", int(limit))
	for name, req := range map[string]io.Reader{
		"whitespace around a tiny message, with its length": strings.NewReader(pad + tiny),
		"the same, chunked (no length)":                     io.MultiReader(strings.NewReader(pad), strings.NewReader(tiny)),
		"a body of 96 KiB, under the limit as JSON, over MaxRequestBytes decoded": strings.NewReader(
			fmt.Sprintf(`{"body": %q}`, base64.StdEncoding.EncodeToString(make([]byte, 96<<10)))),
	} {
		code, body := b.doWith(t, "POST", "/v1/queues/q/messages", "application/json", req)
		require.Equal(t, 413, code, "%s: %s", name, body)
		grpcCode, reason, md := restReason(t, body)
		require.Equal(t, ReasonRequestTooLarge, reason, name)
		require.EqualValues(t, 8, grpcCode, "RESOURCE_EXHAUSTED")
		require.NotEmpty(t, md["limit"])
	}
	q, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
	require.EqualValues(t, 0, q.GetQueue().GetState().GetRetainedMessages())

	// Just under: fine.
	code, body = b.doWith(t, "POST", "/v1/queues/q/messages", "application/json",
		strings.NewReader(strings.Repeat(" ", int(limit)-len(tiny))+tiny))
	require.Equal(t, 200, code, body)
}

// The default limit takes a full batch of the largest messages as JSON.
func TestREST_BodyLimitFitsTheLargestBatch(t *testing.T) {
	t.Parallel()
	b64 := int64(base64.StdEncoding.EncodedLen(1 << 20))
	require.Greater(t, restBodyLimit(DefaultMaxRequestBytes), 100*(b64+100))
	require.Less(t, restBodyLimit(DefaultMaxRequestBytes), int64(DefaultMaxRequestBytes)*3/2)
}

// deadlineRecorder is a ResponseWriter that records the read deadlines
// set through http.ResponseController.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (d *deadlineRecorder) SetReadDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// A REST call lifts the connection's read deadline (ReadTimeout) once its
// body is read, so a long poll is not cancelled when it passes; a request
// without a body lifts it at once.
func TestREST_ReadDeadlineIsLiftedOnceTheBodyIsRead(t *testing.T) {
	t.Parallel()
	s := &Server{maxRequest: 1 << 20, inflight: &InFlight{}}
	var atHandler, afterRead int
	var rec *deadlineRecorder
	h := s.restGuard(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atHandler = len(rec.deadlines)
		_, _ = io.ReadAll(r.Body)
		afterRead = len(rec.deadlines)
	}))

	rec = &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	req := httptest.NewRequest("POST", "/v1/queues/q/messages:receive", strings.NewReader(`{"wait_seconds": 20}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	require.Equal(t, 0, atHandler, "not before the body is read")
	require.Equal(t, 1, afterRead)
	require.True(t, rec.deadlines[0].IsZero(), "lifted")

	rec = &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/queues", nil))
	require.Equal(t, 1, atHandler)
	require.True(t, rec.deadlines[0].IsZero())
}
