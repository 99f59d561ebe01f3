package sqs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/server"
)

// answerTimeout is how long a test waits for an answer that must come
// without the rest of its request's body.
const answerTimeout = 15 * time.Second

// partial sends a JSON request of action signed with creds (at date),
// announcing a body of length bytes of which it sends only the first
// few, and returns the connection, to read the answer from or to hold the
// body open.
func (b *bundle) partial(t *testing.T, action string, creds aws.Credentials, date time.Time, length int) net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(b.srv.URL, "http://")
	req, err := http.NewRequest("POST", b.srv.URL+"/", nil)
	require.NoError(t, err)
	req.Header.Set("Content-Type", jsonContentType)
	req.Header.Set("X-Amz-Target", targetPrefix+action)
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, strings.Repeat("0", 64), "sqs", "us-east-1", date))
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", addr, length)
	for k, vs := range req.Header {
		for _, v := range vs {
			head += k + ": " + v + "\r\n"
		}
	}
	_, err = io.WriteString(c, head+"\r\n"+`{"QueueNamePrefix": "`)
	require.NoError(t, err)
	return c
}

// answer reads the answer on c, which must come before answerTimeout.
func answer(t *testing.T, c net.Conn) reply {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(answerTimeout)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "no answer without the body: the endpoint waits for it")
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, body: string(raw), header: resp.Header}
}

// With authentication on, what a request's headers say is checked before
// a byte of its body is read: a signature of no key, of the wrong
// service, or dated out of the window is refused while its 8 MiB body is
// still coming; each refusal is counted by code.
func TestHandler_HeadersCheckedBeforeTheBody(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	const length = DefaultMaxRequestBytes - 1
	nobody := aws.Credentials{AccessKeyID: "nosuchkey", SecretAccessKey: "x"}
	r := answer(t, b.partial(t, "ListQueues", nobody, time.Now(), length))
	require.Equal(t, 403, r.status, r.body)
	require.Equal(t, "InvalidClientTokenId", r.code(), r.body)

	r = answer(t, b.partial(t, "ListQueues", b.creds, time.Now().Add(-MaxClockSkew-time.Minute), length))
	require.Equal(t, "SignatureDoesNotMatch", r.code(), r.body)
	require.Contains(t, r.body, "expired")

	c := b.partial(t, "ListQueues", b.creds, time.Now(), length)
	// A request without a signature is refused as well (its header only).
	r = b.send("ListQueues", "/", "{}", func(req *http.Request) { req.Header.Del("Authorization") })
	require.Equal(t, "MissingAuthenticationToken", r.code(), r.body)
	require.NoError(t, c.Close())

	require.Equal(t, map[string]float64{"InvalidClientTokenId": 1, "SignatureDoesNotMatch": 1, "MissingAuthenticationToken": 1,
		"IncompleteSignature": 0}, b.series(t, "tagq_sqs_auth_failures_total"))
	// A signature that is wrong only in its secret: the body is read
	// (within the cap), then refused.
	wrong := b.creds
	wrong.SecretAccessKey += "x"
	b.creds = wrong
	r = b.call("ListQueues", obj{})
	require.Equal(t, "SignatureDoesNotMatch", r.code(), r.body)
	require.EqualValues(t, 2, b.series(t, "tagq_sqs_auth_failures_total")["SignatureDoesNotMatch"])
}

// Bodies are held in the server's request bytes in flight from before
// they are read until they are answered: a body held open under a
// 1,000-byte cap takes the process to it, and the next request is refused
// unread with RequestThrottled and Retry-After, in either protocol and
// without a length too; once the held one ends, requests go through.
func TestHandler_BodiesHeldInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t, false, func(s *server.Config, _ *Config) { s.MaxRequestBytesInFlight = 1000 })
	b.ok("CreateQueue", obj{"QueueName": "q"})
	held := b.partial(t, "ListQueues", b.creds, time.Now(), 2000)
	inFlight := func() float64 { return b.series(t, "tagq_request_bytes_in_flight")[""] }
	require.Eventually(t, func() bool { return inFlight() == 2000 }, answerTimeout, 5*time.Millisecond,
		"the held body is counted before it is read")

	r := b.call("SendMessage", obj{"QueueUrl": b.url("q"), "MessageBody": "x"})
	require.Equal(t, 403, r.status, r.body)
	require.Equal(t, "RequestThrottled", r.code(), r.body)
	require.Contains(t, r.body, "TOO_MANY_REQUEST_BYTES")
	require.Equal(t, "1", r.header.Get("Retry-After"))
	r = b.query("SendMessage", url.Values{"QueueUrl": {b.url("q")}, "MessageBody": {"x"}})
	require.Equal(t, 403, r.status, r.body)
	require.Equal(t, "RequestThrottled", r.code(), r.body)
	require.Equal(t, "1", r.header.Get("Retry-After"))
	// Without a length (chunked), refused as it is read.
	r = b.send("SendMessage", "/", fmt.Sprintf(`{"QueueUrl": %q, "MessageBody": "x"}`, b.url("q")), func(req *http.Request) {
		req.Body = io.NopCloser(io.MultiReader(req.Body))
		req.ContentLength = -1
	})
	require.Equal(t, "RequestThrottled", r.code(), r.body)
	require.EqualValues(t, 3, b.series(t, "tagq_requests_refused_in_flight_total")["sqs"])

	require.NoError(t, held.Close())
	require.Eventually(t, func() bool { return inFlight() == 0 }, answerTimeout, 5*time.Millisecond, "given back once it ends")
	b.ok("SendMessage", obj{"QueueUrl": b.url("q"), "MessageBody": "x"})
	require.Zero(t, inFlight(), "and once answered")
}
