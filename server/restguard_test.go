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
	s := &Server{maxRequest: 1 << 20}
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
