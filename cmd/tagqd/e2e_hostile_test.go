package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tagq/tagq/gen/connect/tagq/v1/tagqv1connect"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	tagqsqs "github.com/tagq/tagq/sqs"
)

// End-to-end tests of hostile input before authentication and of the cap
// on request bytes in flight (README "Security", "Operating"). The memory
// these save is measured by e2e_memorybars_test.go.

// answerTimeout is how long a test waits for an answer that must come
// without the rest of a request: a server that waited for the body would
// hold the request until its read timeout (60 s).
const answerTimeout = 15 * time.Second

// partialHTTP sends an HTTP/1.1 POST to path announcing a body of length
// bytes and sends only its first bytes; it returns the connection, for the
// answer (or to hold the request open).
func partialHTTP(t *testing.T, addr, path, contentType string, length int, header ...string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n", path, addr, contentType, length)
	for _, h := range header {
		req += h + "\r\n"
	}
	_, err = io.WriteString(c, req+"\r\n"+`{"body": "`)
	require.NoError(t, err)
	return c
}

// sqsHeaders are the header lines of an SQS JSON request of action signed
// with creds now (over a body whose hash it does not know), for
// partialHTTP.
func sqsHeaders(t *testing.T, addr, action string, creds aws.Credentials) []string {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+addr+"/", nil)
	require.NoError(t, err)
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, strings.Repeat("0", 64), "sqs", "us-east-1", time.Now()))
	var out []string
	for k, vs := range req.Header {
		for _, v := range vs {
			out = append(out, k+": "+v)
		}
	}
	return out
}

// scrape is a series' value on tagqd's /metrics at addr (key: a bearer
// API key, with --auth), "" when it has none.
func scrape(t *testing.T, addr, key, series string) string {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

// httpAnswer reads the answer on c, which must come before answerTimeout.
func httpAnswer(t *testing.T, c net.Conn) (int, string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(answerTimeout)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "no answer without the body: the server waits for it")
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// partialGRPC opens a gRPC call of method on a fresh HTTP/2 connection
// (prior knowledge, as gRPC clients speak it) with the given metadata, and
// sends the first bytes of a message announced as length bytes; the
// message's end never comes. It returns the call's status once the server
// ends it, which must be before answerTimeout.
func partialGRPC(t *testing.T, addr, method string, length int, md ...hpack.HeaderField) *status.Status {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, http2.ClientPreface)
	require.NoError(t, err)
	fr := http2.NewFramer(c, c)
	require.NoError(t, fr.WriteSettings())
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range append([]hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: method}, {Name: ":authority", Value: addr}, {Name: "content-type", Value: "application/grpc"},
		{Name: "te", Value: "trailers"}}, md...) {
		require.NoError(t, enc.WriteField(f))
	}
	require.NoError(t, fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true}))
	prefix := []byte{0, byte(length >> 24), byte(length >> 16), byte(length >> 8), byte(length)}
	require.NoError(t, fr.WriteData(1, false, append(prefix, 0x0a, 0x01, 'q')))

	require.NoError(t, c.SetReadDeadline(time.Now().Add(answerTimeout)))
	dec := hpack.NewDecoder(4096, nil)
	fields := map[string]string{}
	for {
		f, err := fr.ReadFrame()
		require.NoError(t, err, "no status without the message: the server waits for it")
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				require.NoError(t, fr.WriteSettingsAck())
			}
		case *http2.HeadersFrame:
			hfs, err := dec.DecodeFull(f.HeaderBlockFragment())
			require.NoError(t, err)
			for _, hf := range hfs {
				fields[hf.Name] = hf.Value
			}
			if code, ok := fields["grpc-status"]; ok {
				var n int
				_, err := fmt.Sscan(code, &n)
				require.NoError(t, err)
				st := &spb.Status{Code: int32(n), Message: fields["grpc-message"]}
				if raw, ok := fields["grpc-status-details-bin"]; ok {
					b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(raw, "="))
					require.NoError(t, err)
					require.NoError(t, proto.Unmarshal(b, st))
				}
				return status.FromProto(st)
			}
		}
	}
}

// reasonOf is a status's ErrorInfo.
func reasonOf(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei
		}
	}
	return nil
}

// With --auth, a call without valid credentials is refused before its
// body (REST, Connect) or message (gRPC) is read: each of these sends the
// start of a 50 MB request and never the rest, and gets its refusal.
func TestE2E_Auth_RefusedBeforeTheBodyIsRead(t *testing.T) {
	d := startAuth(t, backend{name: "embedded"})
	const length = 50_000_000
	for _, h := range [][]string{nil, {"Authorization: Bearer tagq_0123456789abcdef_notakeynotakeynotakeynotakeynotakeynota"}} {
		code, body := httpAnswer(t, partialHTTP(t, d.http, "/v1/queues/q/messages", "application/json", length, h...))
		require.Equal(t, 401, code, body)
		require.Contains(t, body, "UNAUTHENTICATED")

		code, body = httpAnswer(t, partialHTTP(t, d.http, "/tagq.v1.MessageService/SendMessage", "application/json", length, h...))
		require.Equal(t, 401, code, body)
		require.Contains(t, body, `"code":"unauthenticated"`)
		require.Contains(t, body, "ErrorInfo")
	}

	// SQS: a signature of no key, or none, is refused before the body
	// (the endpoint's largest) is read.
	const sqsLength = tagqsqs.DefaultMaxRequestBytes - 1
	code, body := httpAnswer(t, partialHTTP(t, d.proc.SQS, "/", "application/x-amz-json-1.0", sqsLength,
		sqsHeaders(t, d.proc.SQS, "SendMessage", anyCreds)...))
	require.Equal(t, 403, code, body)
	require.Contains(t, body, "InvalidClientTokenId")
	code, body = httpAnswer(t, partialHTTP(t, d.proc.SQS, "/", "application/x-amz-json-1.0", sqsLength, "X-Amz-Target: AmazonSQS.SendMessage"))
	require.Equal(t, 403, code, body)
	require.Contains(t, body, "MissingAuthenticationToken")

	st := partialGRPC(t, d.grpc, "/tagq.v1.MessageService/SendMessage", length)
	require.Equal(t, codes.Unauthenticated, st.Code(), st.Message())
	require.Equal(t, "UNAUTHENTICATED", reasonOf(st).GetReason())
	st = partialGRPC(t, d.grpc, "/tagq.v1.MessageService/SendMessageBatch", length,
		hpack.HeaderField{Name: "authorization", Value: "Bearer wrong"})
	require.Equal(t, codes.Unauthenticated, st.Code(), st.Message())
	require.Equal(t, "UNAUTHENTICATED", reasonOf(st).GetReason())

	// The health service needs no credentials; a valid key's call is read.
	_, err := healthpb.NewHealthClient(d.conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	_, err = d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	_, err = d.m.SendMessage(as(e2eAdminKey), &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")})
	require.NoError(t, err)
}

// --max-request-bytes-in-flight: a request held open with a 2 MB body
// under a 1 MB cap (one request alone may go over it) takes the process
// to its cap; every protocol's next call (and an open Publish stream's
// next frame) is refused with RESOURCE_EXHAUSTED, TOO_MANY_REQUEST_BYTES
// and retry_after_ms, calls without a body and the health service still
// answer, and once the held request ends calls go through again.
func TestE2E_RequestBytesInFlightCap(t *testing.T) {
	d := start(t, backend{name: "embedded"}, "--max-request-bytes-in-flight", "1mb")
	ctx := context.Background()
	_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	pub, err := d.m.Publish(ctx)
	require.NoError(t, err)
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{{Id: "1", Body: []byte("x")}}}))
	_, err = pub.Recv() // the stream is open before the process fills up
	require.NoError(t, err)
	cm := tagqv1connect.NewMessageServiceClient(http.DefaultClient, "http://"+d.http)
	send := func() error {
		_, err := d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")})
		return err
	}

	inFlight := func() string { return scrape(t, d.http, "", "tagq_request_bytes_in_flight") }
	require.Equal(t, "0", inFlight())
	held := partialHTTP(t, d.http, "/v1/queues/q/messages", "application/json", 2_000_000)
	require.Eventually(t, func() bool { return inFlight() == "2e+06" }, answerTimeout, 10*time.Millisecond,
		"the held request's body is counted before it is read")
	checkRefusal := func(ei *errdetails.ErrorInfo) {
		t.Helper()
		require.Equal(t, "TOO_MANY_REQUEST_BYTES", ei.GetReason())
		require.Equal(t, "500", ei.GetMetadata()["retry_after_ms"])
		require.Equal(t, fmt.Sprint(1<<20), ei.GetMetadata()["limit"])
	}
	// gRPC, refused as the call opens, with a google.rpc.RetryInfo.
	err = send()
	_, ei := errInfo(t, err)
	checkRefusal(ei)
	var retry *errdetails.RetryInfo
	for _, det := range status.Convert(err).Details() {
		if ri, ok := det.(*errdetails.RetryInfo); ok {
			retry = ri
		}
	}
	require.NotNil(t, retry, "a RetryInfo detail")
	require.Equal(t, 500*time.Millisecond, retry.GetRetryDelay().AsDuration())
	// REST and Connect, refused unread, with Retry-After.
	req, err := http.NewRequest("POST", "http://"+d.http+"/v1/queues/q/messages", strings.NewReader(fmt.Sprintf(`{"body": %q}`, b64("x"))))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 429, resp.StatusCode, string(raw))
	require.Contains(t, string(raw), "TOO_MANY_REQUEST_BYTES")
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	_, err = cm.SendMessage(ctx, connect.NewRequest(&tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")}))
	cc, cei := connectErr(t, err)
	require.Equal(t, connect.CodeResourceExhausted, cc)
	checkRefusal(cei)
	var ce *connect.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "1", ce.Meta().Get("Retry-After"))
	// SQS: RequestThrottled (which the AWS SDKs retry), with Retry-After.
	sq := sqsClient(d.proc.SQS, anyCreds)
	_, err = sq.ListQueues(ctx, &sqs.ListQueuesInput{}, func(o *sqs.Options) { o.RetryMaxAttempts = 1 })
	require.Equal(t, "RequestThrottled", apiCode(err), "%v", err)
	var re *awshttp.ResponseError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "1", re.Response.Header.Get("Retry-After"))
	// An open Publish stream: the frame is answered with the refusal.
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 7, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{{Id: "1", Body: []byte("x")}}}))
	frame, err := pub.Recv()
	require.NoError(t, err)
	require.Equal(t, uint64(7), frame.GetSeq())
	require.Equal(t, "TOO_MANY_REQUEST_BYTES", frame.GetError().GetReason())
	require.Equal(t, int32(codes.ResourceExhausted), frame.GetError().GetCode())
	// No body, no refusal; health answers.
	d.restOK("GET", "/v1/queues/q", "")
	_, err = healthpb.NewHealthClient(d.conn).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)

	require.NoError(t, held.Close())
	require.Eventually(t, func() bool { return send() == nil }, answerTimeout, 10*time.Millisecond)
	d.restOK("POST", "/v1/queues/q/messages", fmt.Sprintf(`{"body": %q}`, b64("y")))
	_, err = cm.SendMessage(ctx, connect.NewRequest(&tagqv1.SendMessageRequest{Queue: "q", Body: []byte("z")}))
	require.NoError(t, err)
	_, err = sq.ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 8, Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{{Id: "1", Body: []byte("w")}}}))
	frame, err = pub.Recv()
	require.NoError(t, err)
	require.Nil(t, frame.GetError())
	require.NoError(t, pub.CloseSend())
}

// The SQS endpoint's bodies count in --max-request-bytes-in-flight, from
// before they are read: 24 connections each sending 8 MiB - 1 of a request
// signed by a key that exists (with the wrong secret, so each waits for
// its last byte) and holding it take tagqd's peak RSS up by the 16 MB cap
// lets in, not by 24 x 8 MiB; the others are refused unread
// (RequestThrottled), and what was held is given back once they close.
func TestE2E_SQS_BodiesHeldInFlight(t *testing.T) {
	d := startAuth(t, backend{name: "embedded"}, "--max-request-bytes-in-flight", "16mb")
	creds := sigV4Creds(t, d.daemon, e2eAdminKey)
	creds.SecretAccessKey += "x"
	header := append(sqsHeaders(t, d.proc.SQS, "ListQueues", creds), "Content-Type: application/x-amz-json-1.0")
	const conns, length = 24, 8 << 20
	base := vmHWM(t, d.proc.PID())
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	var held []net.Conn
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range conns {
		c, err := net.Dial("tcp", d.proc.SQS)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		wg.Add(1)
		go func() { // each sends all but its last byte; a refused one fails to
			defer wg.Done()
			_, err := io.WriteString(c, fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n%s\r\n\r\n",
				d.proc.SQS, length, strings.Join(header, "\r\n")))
			for left := length - 1; err == nil && left > 0; left -= len(chunk) {
				_, err = c.Write(chunk[:min(left, len(chunk))])
			}
			if err == nil {
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	peak := vmHWM(t, d.proc.PID())
	refused := scrape(t, d.http, e2eAdminKey, `tagq_requests_refused_in_flight_total{protocol="sqs"}`)
	t.Logf("tagqd peak RSS %d MiB -> %d MiB with %d of %d SQS bodies of 8 MiB held; %s refused", base>>20, peak>>20, len(held), conns, refused)
	require.Equal(t, "22", refused, "two fit in 16 MB; the others are refused")
	require.Equal(t, strconv.FormatFloat(2*length, 'g', -1, 64), scrape(t, d.http, e2eAdminKey, "tagq_request_bytes_in_flight"))
	require.Less(t, peak-base, int64(64<<20), "24 x 8 MiB would be 192 MiB")
	for _, c := range held {
		require.NoError(t, c.Close())
	}
	require.Eventually(t, func() bool { return scrape(t, d.http, e2eAdminKey, "tagq_request_bytes_in_flight") == "0" },
		answerTimeout, 10*time.Millisecond)
}

// sqsPost signs body as an SQS JSON request of action with creds, posts it
// and returns the answer's status and body.
func sqsPost(t *testing.T, addr, action string, body []byte, creds aws.Credentials) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+addr+"/", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	sum := sha256.Sum256(body)
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "sqs", "us-east-1", time.Now()))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// Batches of empty entries are refused before they are decoded, on every
// protocol (a decoder builds 65 to 150 bytes for each 2-byte entry): 10 MB
// of them over gRPC, REST and Connect, and 8 MiB over SQS, each refused
// with BATCH_TOO_LARGE (SQS: TooManyEntriesInBatchRequest), take tagqd's
// peak RSS up by less than 100 MiB all told (they took 0.5-1.2 GB each).
func TestE2E_BatchesBoundedBeforeDecoding(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	_, err := d.q.CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	const entries = 5_000_000
	wire := []byte{0x0a, 0x01, 'q'}
	for range entries {
		wire = append(wire, 0x12, 0x00)
	}
	js := []byte(`{"queue": "q", "entries": [` + strings.Repeat(`{},`, entries-1) + `{}]}`)
	base := vmHWM(t, d.proc.PID())

	conn, err := grpc.NewClient(d.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallSendMsgSize(1<<30)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	err = conn.Invoke(context.Background(), "/tagq.v1.MessageService/SendMessageBatch", &wire, &tagqv1.SendMessageBatchResponse{})
	_, ei := errInfo(t, err)
	require.Equal(t, "BATCH_TOO_LARGE", ei.GetReason())
	require.Equal(t, "entries", ei.GetMetadata()["field"])

	code, body := d.rest("POST", "/v1/queues/q/messages:batchSend", "{"+string(js[len(`{"queue": "q", `):]))
	require.Equal(t, 400, code, body)
	r, field := reason(body)
	require.Equal(t, "BATCH_TOO_LARGE", r)
	require.Equal(t, "entries", field)

	require.NoError(t, postWant(400, "http://"+d.http+"/tagq.v1.MessageService/SendMessageBatch", js,
		map[string]string{"Content-Type": "application/json"}))
	require.NoError(t, postWant(400, "http://"+d.http+"/tagq.v1.MessageService/SendMessageBatch", wire,
		map[string]string{"Content-Type": "application/proto"}))

	sqsBody := []byte(`{"QueueUrl": "http://` + d.proc.SQS + `/000000000000/q", "Entries": [` +
		strings.Repeat(`{},`, tagqsqs.DefaultMaxRequestBytes/3-100) + `{}]}`)
	code, answer := sqsPost(t, d.proc.SQS, "SendMessageBatch", sqsBody, anyCreds)
	require.Equal(t, 400, code, answer)
	require.Contains(t, answer, "TooManyEntriesInBatchRequest")

	peak := vmHWM(t, d.proc.PID())
	t.Logf("tagqd peak RSS %d MiB -> %d MiB after 10 MB batches of empty entries on gRPC, REST, Connect (JSON, protobuf) and 8 MiB on SQS",
		base>>20, peak>>20)
	require.Less(t, peak-base, int64(100<<20))
}
