package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/tagq/tagq/gen/connect/tagq/v1/tagqv1connect"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// End-to-end tests of the Connect, gRPC-Web and gRPC protocols on the HTTP
// listener: connect-go clients (and buf curl) against a real tagqd.

// protoRecorder is an http.RoundTripper that notes the HTTP version of
// every response, so a test can say which one its calls used.
type protoRecorder struct {
	rt     http.RoundTripper
	mu     sync.Mutex
	protos map[string]int
}

func (p *protoRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.rt.RoundTrip(r)
	if err == nil {
		p.mu.Lock()
		p.protos[resp.Proto]++
		p.mu.Unlock()
	}
	return resp, err
}

func (p *protoRecorder) seen() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.protos {
		out[k] = v
	}
	return out
}

// http1Client speaks HTTP/1.1 only (Go's transport does not try HTTP/2
// without TLS); h2cClient speaks HTTP/2 without TLS (prior knowledge).
func http1Client() (*http.Client, *protoRecorder) {
	rec := &protoRecorder{rt: &http.Transport{}, protos: map[string]int{}}
	return &http.Client{Transport: rec}, rec
}

func h2cClient() (*http.Client, *protoRecorder) {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	rec := &protoRecorder{rt: &http.Transport{Protocols: p}, protos: map[string]int{}}
	return &http.Client{Transport: rec}, rec
}

// connectErr is the code and ErrorInfo of a Connect error.
func connectErr(t *testing.T, err error) (connect.Code, *errdetails.ErrorInfo) {
	t.Helper()
	var ce *connect.Error
	require.ErrorAs(t, err, &ce)
	for _, d := range ce.Details() {
		v, derr := d.Value()
		require.NoError(t, derr)
		if ei, ok := v.(*errdetails.ErrorInfo); ok {
			return ce.Code(), ei
		}
	}
	t.Fatalf("no ErrorInfo in %v", err)
	return 0, nil
}

// withKey is a Connect request carrying key as a bearer API key ("" for
// none).
func withKey[T any](key string, msg *T) *connect.Request[T] {
	r := connect.NewRequest(msg)
	if key != "" {
		r.Header().Set("Authorization", "Bearer "+key)
	}
	return r
}

// TestE2E_Connect_Unary: every protocol connect-go speaks, over HTTP/1.1
// where it can: a queue made, a message sent, received and deleted, and
// the server's errors with their ErrorInfo and BadRequest intact.
func TestE2E_Connect_Unary(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		base := "http://" + d.http
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()

		// Connect (JSON, as buf curl and connect-web send it; and binary) and
		// gRPC-Web over HTTP/1.1.
		h1, rec := http1Client()
		for _, tc := range []struct {
			name string
			opts []connect.ClientOption
		}{
			{"connect-json", []connect.ClientOption{connect.WithProtoJSON()}},
			{"connect-proto", nil},
			{"grpc-web", []connect.ClientOption{connect.WithGRPCWeb()}},
		} {
			queue := "cq-" + tc.name
			q := tagqv1connect.NewQueueServiceClient(h1, base, tc.opts...)
			m := tagqv1connect.NewMessageServiceClient(h1, base, tc.opts...)
			_, err := q.CreateQueue(ctx, connect.NewRequest(&tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: queue, MaxMessageBytes: i32(1024)}}))
			require.NoError(t, err, tc.name)
			sent, err := m.SendMessage(ctx, connect.NewRequest(&tagqv1.SendMessageRequest{Queue: queue, Body: []byte("hello " + tc.name),
				Attributes: map[string]*tagqv1.MessageAttribute{"k": {Value: &tagqv1.MessageAttribute_StringValue{StringValue: "v"}}}}))
			require.NoError(t, err, tc.name)
			got, err := m.ReceiveMessage(ctx, connect.NewRequest(&tagqv1.ReceiveMessageRequest{Queue: queue}))
			require.NoError(t, err, tc.name)
			require.Len(t, got.Msg.GetMessages(), 1, tc.name)
			msg := got.Msg.GetMessages()[0]
			require.Equal(t, sent.Msg.GetMessageId(), msg.GetMessageId(), tc.name)
			require.Equal(t, "hello "+tc.name, string(msg.GetBody()), tc.name)
			require.Equal(t, "v", msg.GetAttributes()["k"].GetStringValue(), tc.name)
			_, err = m.DeleteMessage(ctx, connect.NewRequest(&tagqv1.DeleteMessageRequest{Queue: queue, ReceiptHandle: msg.GetReceiptHandle()}))
			require.NoError(t, err, tc.name)
			peek, err := m.PeekMessage(ctx, connect.NewRequest(&tagqv1.PeekMessageRequest{Queue: queue}))
			require.NoError(t, err, tc.name)
			require.Empty(t, peek.Msg.GetMessages(), tc.name)

			// Bad input: the field named, as over gRPC.
			_, err = m.SendMessage(ctx, connect.NewRequest(&tagqv1.SendMessageRequest{Queue: queue, Body: make([]byte, 1025)}))
			code, info := connectErr(t, err)
			require.Equal(t, connect.CodeInvalidArgument, code, tc.name)
			require.Equal(t, "MESSAGE_TOO_LARGE", info.GetReason(), tc.name)
			require.Equal(t, "body", info.GetMetadata()["field"], tc.name)
			var ce *connect.Error
			require.ErrorAs(t, err, &ce)
			require.Len(t, ce.Details(), 2, "ErrorInfo and BadRequest")
			v, err := ce.Details()[1].Value()
			require.NoError(t, err)
			require.Equal(t, "body", v.(*errdetails.BadRequest).GetFieldViolations()[0].GetField(), tc.name)

			_, err = m.ReceiveMessage(ctx, connect.NewRequest(&tagqv1.ReceiveMessageRequest{Queue: queue, MaxMessages: i32(0)}))
			code, info = connectErr(t, err)
			require.Equal(t, connect.CodeInvalidArgument, code, tc.name)
			require.Equal(t, "INVALID_ARGUMENT_RANGE", info.GetReason(), tc.name)
			require.Equal(t, "max_messages", info.GetMetadata()["field"], tc.name)

			_, err = m.SendMessage(ctx, connect.NewRequest(&tagqv1.SendMessageRequest{Queue: "no-such-queue", Body: []byte("x")}))
			code, info = connectErr(t, err)
			require.Equal(t, connect.CodeNotFound, code, tc.name)
			require.Equal(t, "QUEUE_NOT_FOUND", info.GetReason(), tc.name)
			require.Equal(t, "queue", info.GetMetadata()["field"], tc.name)
		}
		require.Equal(t, map[string]int{"HTTP/1.1": rec.seen()["HTTP/1.1"]}, rec.seen(), "every call over HTTP/1.1")

		// gRPC needs HTTP/2: h2c on the plaintext listener.
		h2, rec2 := h2cClient()
		m := tagqv1connect.NewMessageServiceClient(h2, base, connect.WithGRPC())
		_, err := m.SendMessage(ctx, connect.NewRequest(&tagqv1.SendMessageRequest{Queue: "cq-connect-json", Body: []byte("over grpc")}))
		require.NoError(t, err)
		_, err = m.SendMessage(ctx, connect.NewRequest(&tagqv1.SendMessageRequest{Queue: "no-such-queue", Body: []byte("x")}))
		code, info := connectErr(t, err)
		require.Equal(t, connect.CodeNotFound, code)
		require.Equal(t, "QUEUE_NOT_FOUND", info.GetReason())
		require.Equal(t, map[string]int{"HTTP/2.0": 2}, rec2.seen())
	})
}

// TestE2E_Connect_UnreadableRequests: a body that is not the method's
// message is INVALID_ARGUMENT / MALFORMED_REQUEST with ErrorInfo, in JSON
// and in binary, for every service.
func TestE2E_Connect_UnreadableRequests(t *testing.T) {
	t.Parallel()
	d := start(t, backend{name: "embedded"})
	for _, tc := range []struct{ path, ct, body string }{
		{"/tagq.v1.MessageService/SendMessage", "application/json", `{"queue": 5}`},
		{"/tagq.v1.MessageService/SendMessage", "application/json", `{"queue": "q", "body": "not base64!"}`},
		{"/tagq.v1.QueueService/GetQueue", "application/json", `not json`},
		{"/tagq.v1.QueueService/GetQueue", "application/json", ``},
		{"/tagq.v1.QueueService/GetQueue", "application/proto", "\xff\xff"},
		{"/tagq.v1.RedriveService/ListMessageMoves", "application/proto", "\x0a\x05ab"},
		{"/tagq.v1.AccessService/GetPrincipal", "application/json", `{"name": ["x"]}`},
	} {
		req, err := http.NewRequest("POST", "http://"+d.http+tc.path, strings.NewReader(tc.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", tc.ct)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Details []struct {
				Type  string `json:"type"`
				Debug struct {
					Reason string `json:"reason"`
				} `json:"debug"`
			} `json:"details"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		require.Equal(t, 400, resp.StatusCode, "%s %q: %+v", tc.path, tc.body, body)
		require.Equal(t, "invalid_argument", body.Code)
		require.Contains(t, body.Message, "is not a readable tagq.v1.")
		require.Len(t, body.Details, 1, "%+v", body)
		require.Equal(t, "google.rpc.ErrorInfo", body.Details[0].Type)
		require.Equal(t, "MALFORMED_REQUEST", body.Details[0].Debug.Reason)
	}
}

// TestE2E_Connect_Streams: Publish and Consume over Connect and gRPC on
// HTTP/2 without TLS (h2c): a message published, pushed, acked and the ack
// confirmed; and an unreadable frame ends the stream with ErrorInfo.
func TestE2E_Connect_Streams(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h2, rec := h2cClient()
		for _, tc := range []struct {
			name string
			opts []connect.ClientOption
		}{{"connect", nil}, {"grpc", []connect.ClientOption{connect.WithGRPC()}}} {
			queue := "streams-" + tc.name
			_, err := tagqv1connect.NewQueueServiceClient(h2, "http://"+d.http, tc.opts...).
				CreateQueue(ctx, connect.NewRequest(&tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: queue}}))
			require.NoError(t, err)
			m := tagqv1connect.NewMessageServiceClient(h2, "http://"+d.http, tc.opts...)

			pub := m.Publish(ctx)
			require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 7, Queue: queue,
				Entries: []*tagqv1.SendMessageBatchEntry{{Id: "a", Body: []byte("streamed")}}}))
			pr, err := pub.Receive()
			require.NoError(t, err, tc.name)
			require.Equal(t, uint64(7), pr.GetSeq())
			require.Len(t, pr.GetSuccessful(), 1, "%v", pr)
			require.NoError(t, pub.CloseRequest())
			_, err = pub.Receive()
			require.ErrorIs(t, err, io.EOF, "the stream ends OK once the client closes")
			require.NoError(t, pub.CloseResponse())

			con := m.Consume(ctx)
			require.NoError(t, con.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: queue, Confirm: true}}))
			cr, err := con.Receive()
			require.NoError(t, err, tc.name)
			require.Len(t, cr.GetMessages(), 1)
			require.Equal(t, "streamed", string(cr.GetMessages()[0].GetMessage().GetBody()))
			id := cr.GetMessages()[0].GetDeliveryId()
			// Full duplex: the ack goes up while the stream stays open.
			require.NoError(t, con.Send(&tagqv1.ConsumeRequest{Acks: []uint64{id}}))
			cr, err = con.Receive()
			require.NoError(t, err)
			require.Len(t, cr.GetConfirmations(), 1, "%v", cr)
			require.Equal(t, id, cr.GetConfirmations()[0].GetDeliveryId())
			require.Equal(t, tagqv1.ConsumeOperation_CONSUME_OPERATION_ACK, cr.GetConfirmations()[0].GetOperation())
			require.Nil(t, cr.GetConfirmations()[0].GetError())
			require.NoError(t, con.CloseRequest())
			for err == nil {
				_, err = con.Receive()
			}
			require.ErrorIs(t, err, io.EOF)
			require.NoError(t, con.CloseResponse())

			// The server's refusal of a stream comes back with ErrorInfo.
			con = m.Consume(ctx)
			require.NoError(t, con.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "no-such-queue"}}))
			_, err = con.Receive()
			code, info := connectErr(t, err)
			require.Equal(t, connect.CodeNotFound, code, tc.name)
			require.Equal(t, "QUEUE_NOT_FOUND", info.GetReason())
			require.Equal(t, "open.queue", info.GetMetadata()["field"])
			require.NoError(t, con.CloseResponse())
		}
		require.Equal(t, []string{"HTTP/2.0"}, keys(rec.seen()))

		// A frame that is not a PublishRequest: INVALID_ARGUMENT /
		// MALFORMED_REQUEST ends the stream. (Raw Connect streaming framing:
		// flags, length, message.)
		frame := func(flags byte, msg string) []byte {
			return append([]byte{flags, 0, 0, 0, byte(len(msg))}, msg...)
		}
		body := append(frame(0, `{"seq": "1", "queue": 5}`), frame(2, `{}`)...)
		req, err := http.NewRequestWithContext(ctx, "POST", "http://"+d.http+"/tagq.v1.MessageService/Publish", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/connect+json")
		resp, err := h2.Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Greater(t, len(raw), 5)
		require.Equal(t, byte(2), raw[0], "the end-of-stream frame: %q", raw)
		var end struct {
			Error struct {
				Code    string `json:"code"`
				Details []struct {
					Debug struct {
						Reason string `json:"reason"`
					} `json:"debug"`
				} `json:"details"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(raw[5:], &end), "%q", raw)
		require.Equal(t, "invalid_argument", end.Error.Code)
		require.Len(t, end.Error.Details, 1)
		require.Equal(t, "MALFORMED_REQUEST", end.Error.Details[0].Debug.Reason)
	})
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestE2E_Connect_StreamOverHTTP1: a bidirectional stream needs HTTP/2;
// over HTTP/1.1 connect-go's handler refuses it with 505 (and nothing is
// published), while unary calls on the same client work.
func TestE2E_Connect_StreamOverHTTP1(t *testing.T) {
	t.Parallel()
	d := start(t, backend{name: "embedded"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h1, rec := http1Client()
	q := tagqv1connect.NewQueueServiceClient(h1, "http://"+d.http)
	_, err := q.CreateQueue(ctx, connect.NewRequest(&tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "half"}}))
	require.NoError(t, err)
	pub := tagqv1connect.NewMessageServiceClient(h1, "http://"+d.http).Publish(ctx)
	// The server may answer 505 before the client has written its frame:
	// then Send (or CloseRequest) says only io.EOF, and Receive has the
	// answer (connect-go's rule for a stream the server ended).
	if err := pub.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "half",
		Entries: []*tagqv1.SendMessageBatchEntry{{Id: "a", Body: []byte("x")}}}); err != nil {
		require.ErrorIs(t, err, io.EOF)
	}
	if err := pub.CloseRequest(); err != nil {
		require.ErrorIs(t, err, io.EOF)
	}
	_, err = pub.Receive()
	require.Error(t, err)
	require.Contains(t, err.Error(), "505 HTTP Version Not Supported")
	require.NoError(t, pub.CloseResponse())
	require.Equal(t, []string{"HTTP/1.1"}, keys(rec.seen()))
	st, err := q.GetQueue(ctx, connect.NewRequest(&tagqv1.GetQueueRequest{Name: "half"}))
	require.NoError(t, err)
	require.EqualValues(t, 0, st.Msg.GetQueue().GetState().GetRetainedMessages())
}

// TestE2E_Connect_Auth: with --auth, a Connect call carries its API key in
// the Authorization header and is held to its principal's permissions; no
// key is UNAUTHENTICATED; and no header claims the gateway's certificate
// metadata.
func TestE2E_Connect_Auth(t *testing.T) {
	t.Parallel()
	d := startAuth(t, backend{name: "embedded"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "mine"}})
	require.NoError(t, err)
	_, err = d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "theirs"}})
	require.NoError(t, err)
	key := d.principal(t, "sender", grant("mine", tagqv1.Permission_PERMISSION_SEND))

	h1, _ := http1Client()
	h2, _ := h2cClient()
	for _, tc := range []struct {
		name   string
		client *http.Client
		opts   []connect.ClientOption
	}{{"connect", h1, nil}, {"grpc-web", h1, []connect.ClientOption{connect.WithGRPCWeb()}}, {"grpc", h2, []connect.ClientOption{connect.WithGRPC()}}} {
		m := tagqv1connect.NewMessageServiceClient(tc.client, "http://"+d.http, tc.opts...)
		send := func(key, queue string, header ...string) error {
			r := withKey(key, &tagqv1.SendMessageRequest{Queue: queue, Body: []byte("x")})
			for i := 0; i+1 < len(header); i += 2 {
				r.Header().Add(header[i], header[i+1])
			}
			_, err := m.SendMessage(ctx, r)
			return err
		}
		require.NoError(t, send(key, "mine"), tc.name)
		code, info := connectErr(t, send("", "mine"))
		require.Equal(t, connect.CodeUnauthenticated, code, tc.name)
		require.Equal(t, "UNAUTHENTICATED", info.GetReason())
		code, _ = connectErr(t, send("not a key of anyone's, but long enough", "mine"))
		require.Equal(t, connect.CodeUnauthenticated, code, tc.name)
		code, info = connectErr(t, send(key, "theirs"))
		require.Equal(t, connect.CodePermissionDenied, code, tc.name)
		require.Equal(t, "PERMISSION_DENIED", info.GetReason())
		require.Equal(t, "sender", info.GetMetadata()["principal"])
		// The gateway's certificate metadata, claimed by a header (and by
		// gRPC metadata of that name, which is a header too).
		for _, h := range []string{"X-Tagq-Gateway-Cert-Name", "Grpc-Metadata-X-Tagq-Gateway-Cert-Name"} {
			code, _ = connectErr(t, send("", "mine", h, "sender", h, "admin"))
			require.Equal(t, connect.CodeUnauthenticated, code, "%s %s", tc.name, h)
		}
	}

	// A stream's key is checked when it opens and on each frame.
	pub := tagqv1connect.NewMessageServiceClient(h2, "http://"+d.http).Publish(ctx)
	pub.RequestHeader().Set("Authorization", "Bearer "+key)
	require.NoError(t, pub.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "theirs", Entries: []*tagqv1.SendMessageBatchEntry{{Id: "a", Body: []byte("x")}}}))
	pr, err := pub.Receive()
	require.NoError(t, err)
	require.Equal(t, "PERMISSION_DENIED", pr.GetError().GetReason(), "%v", pr)
	require.NoError(t, pub.CloseRequest())
	require.NoError(t, pub.CloseResponse())
	con := tagqv1connect.NewMessageServiceClient(h2, "http://"+d.http).Consume(ctx)
	if err := con.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "mine"}}); err != nil {
		// The server may refuse the stream before the frame is written:
		// Send then fails with io.EOF, and Receive has the server's error.
		require.ErrorIs(t, err, io.EOF)
	}
	_, err = con.Receive()
	code, _ := connectErr(t, err)
	require.Equal(t, connect.CodeUnauthenticated, code, "no key")
	require.NoError(t, con.CloseResponse())
}

// TestE2E_Connect_ClientCertificates: with mTLS, the certificate the HTTP
// listener verified authenticates a Connect call (over HTTP/2 and
// HTTP/1.1), as it does a REST call.
func TestE2E_Connect_ClientCertificates(t *testing.T) {
	t.Parallel()
	certs := newCerts(t)
	d := startProc(t, append(certs.TLSArgs(true), "--auth", "--admin-key-file", adminKeyFile(t))...)
	stranger, err := certs.CA.Client("unmapped", "nobody-in-particular")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := func(cert tls.Certificate, h2 bool) *http.Client {
		return &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: h2,
			TLSClientConfig: &tls.Config{RootCAs: certs.CA.Pool, Certificates: []tls.Certificate{cert}}}}
	}
	base := "https://" + d.HTTP
	admin := tagqv1connect.NewAccessServiceClient(client(certs.Client.TLS, true), base)
	_, err = admin.CreatePrincipal(ctx, withKey(e2eAdminKey, &tagqv1.CreatePrincipalRequest{Principal: &tagqv1.Principal{
		Name: "certified", CertNames: []string{certs.Client.Cert.Subject.CommonName}}}))
	require.NoError(t, err)
	_, err = admin.SetPermission(ctx, withKey(e2eAdminKey, &tagqv1.SetPermissionRequest{Grant: &tagqv1.PermissionGrant{
		Principal: "certified", Queue: "cert-*", Permission: tagqv1.Permission_PERMISSION_FULL_CONTROL}}))
	require.NoError(t, err)

	for _, h2 := range []bool{true, false} {
		q := tagqv1connect.NewQueueServiceClient(client(certs.Client.TLS, h2), base)
		_, err = q.CreateQueue(ctx, connect.NewRequest(&tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "cert-" + map[bool]string{true: "h2", false: "h1"}[h2]}}))
		require.NoError(t, err, "the certificate alone authenticates (h2 %v)", h2)
		_, err = q.CreateQueue(ctx, connect.NewRequest(&tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "other"}}))
		code, _ := connectErr(t, err)
		require.Equal(t, connect.CodePermissionDenied, code, "as the principal, with its permissions")

		r := connect.NewRequest(&tagqv1.GetQueueRequest{Name: "cert-h2"})
		r.Header().Set("X-Tagq-Gateway-Cert-Name", certs.Client.Cert.Subject.CommonName)
		_, err = tagqv1connect.NewQueueServiceClient(client(stranger.TLS, h2), base).GetQueue(ctx, r)
		code, _ = connectErr(t, err)
		require.Equal(t, connect.CodeUnauthenticated, code, "a certificate of no principal, and a forged header")
	}
}

// TestE2E_Connect_BufCurl: `buf curl` with its default protocol (Connect)
// calls tagqd and shows its error details. Needs the buf CLI that `make
// tools` installs (CI does).
func TestE2E_Connect_BufCurl(t *testing.T) {
	t.Parallel()
	buf, err := filepath.Abs("../../tools/node_modules/.bin/buf")
	require.NoError(t, err)
	if _, err := os.Stat(buf); err != nil {
		t.Skip("no buf CLI: run make tools")
	}
	d := start(t, backend{name: "embedded"})

	// The README's example, as written but for the address.
	var script []string
	for _, block := range readmeBlocks(t, "API")["API"] {
		if strings.Contains(block, "buf curl") {
			script = append(script, block)
		}
	}
	require.Len(t, script, 1, "README's Connect example")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.ReplaceAll(script[0], "localhost:8080", d.http))
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(buf)+string(os.PathListSeparator)+os.Getenv("PATH"))
	readme, err := cmd.CombinedOutput()
	require.NoError(t, err, "README's Connect example:\n%s", readme)
	require.Contains(t, string(readme), `"body":"aGVsbG8="`, "the message sent, received with curl")

	curl := func(method, body string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, buf, "curl", "--schema", "../../proto", "--protocol", "connect",
			"-d", body, "http://"+d.http+"/tagq.v1."+method)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	out, errOut, err := curl("QueueService/CreateQueue", `{"queue": {"name": "curled"}}`)
	require.NoError(t, err, errOut)
	require.Contains(t, out, `"name": "curled"`)
	out, errOut, err = curl("MessageService/SendMessage", `{"queue": "curled", "body": "`+b64("by buf curl")+`"}`)
	require.NoError(t, err, errOut)
	require.Contains(t, out, `"messageId"`)
	out, errOut, err = curl("MessageService/ReceiveMessage", `{"queue": "curled"}`)
	require.NoError(t, err, errOut)
	require.Contains(t, out, b64("by buf curl"))

	// A stream: buf curl speaks h2c to an http:// address for it.
	out, errOut, err = curl("MessageService/Publish", `{"seq": "3", "queue": "curled", "entries": [{"id": "a", "body": "eA=="}]}`)
	require.NoError(t, err, errOut)
	require.Contains(t, out, `"seq": "3"`)
	require.Contains(t, out, `"successful"`)

	_, errOut, err = curl("MessageService/SendMessage", `{"queue": "nowhere", "body": "eA=="}`)
	require.Error(t, err)
	require.Contains(t, errOut, `"code": "not_found"`)
	require.Contains(t, errOut, `"type": "google.rpc.ErrorInfo"`)
	require.Contains(t, errOut, `"reason": "QUEUE_NOT_FOUND"`)
	require.Contains(t, errOut, `"field": "queue"`)
}

// TestE2E_Connect_StreamsEndOnShutdown: on SIGTERM, Connect streams end as
// gRPC ones do, UNAVAILABLE / SERVER_SHUTTING_DOWN with ErrorInfo (the
// Consume stream having had its drain grace), and tagqd exits promptly.
func TestE2E_Connect_StreamsEndOnShutdown(t *testing.T) {
	t.Parallel()
	d := start(t, backend{name: "embedded"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h2, _ := h2cClient()
	_, err := tagqv1connect.NewQueueServiceClient(h2, "http://"+d.http).
		CreateQueue(ctx, connect.NewRequest(&tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "bye"}}))
	require.NoError(t, err)
	_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "bye", Body: []byte("x")})
	require.NoError(t, err)
	m := tagqv1connect.NewMessageServiceClient(h2, "http://"+d.http)
	con := m.Consume(ctx)
	require.NoError(t, con.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "bye"}}))
	cr, err := con.Receive()
	require.NoError(t, err)
	require.Len(t, cr.GetMessages(), 1)

	took, err := d.stop()
	require.NoError(t, err)
	require.Less(t, took, maxShutdown)
	for err == nil {
		_, err = con.Receive()
	}
	code, info := connectErr(t, err)
	require.Equal(t, connect.CodeUnavailable, code, "%v", err)
	require.Equal(t, "SERVER_SHUTTING_DOWN", info.GetReason())
	require.NoError(t, con.CloseResponse())
}
