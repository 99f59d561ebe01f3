package sqs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/redrive"
	"github.com/tagq/tagq/server"
	"github.com/tagq/tagq/tags"
)

// bundle is an SQS endpoint in front of a whole tagq server in process (on
// miniredis): the server's gRPC API reached over a GatewayListener, as
// tagqd wires it.
type bundle struct {
	t     tb
	h     *Handler
	srv   *httptest.Server
	store *tags.Store
	work  *redrive.Worker // the background work, run on demand (bundle.background)
	q     tagqv1.QueueServiceClient
	m     tagqv1.MessageServiceClient
	acc   *access.Access // nil: authentication off
	key   []byte
	// creds sign requests (any, with authentication off).
	creds aws.Credentials
	// srvReg holds the server's metrics and the endpoint's.
	srvReg *prometheus.Registry
}

// tb is what setup needs of a test: testing.TB's part that examples can
// have too (exampleT).
type tb interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	FailNow()
}

const testAdminKey = "admin-key-for-the-sqs-tests-0123456789"

// setup starts the bundle; with auth, authentication is on and creds are
// the bootstrap admin key's SigV4 credentials. opts change the server's
// and the endpoint's configurations before they start.
func setup(t tb, auth bool, opts ...func(*server.Config, *Config)) *bundle {
	t.Helper()
	ctx := context.Background()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := tags.New(ctx, tags.Config{Client: rdb, Logger: log})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	b := &bundle{t: t, store: store, work: redrive.New(redrive.Config{Store: store, Logger: log}), creds: aws.Credentials{AccessKeyID: "anyone", SecretAccessKey: "anything"}}
	cfg := server.Config{Store: store, Logger: log, Registerer: prometheus.NewRegistry()}
	if auth {
		b.acc, err = access.New(access.Config{Client: rdb})
		require.NoError(t, err)
		require.NoError(t, b.acc.Bootstrap(ctx, testAdminKey))
		cfg.Access = b.acc
		b.key, err = LoadSigningKey(ctx, rdb, "tagq", "")
		require.NoError(t, err)
	}
	var ecfg Config
	for _, o := range opts {
		o(&cfg, &ecfg)
	}
	srv, err := server.New(cfg)
	require.NoError(t, err)
	b.srvReg = cfg.Registerer.(*prometheus.Registry)
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.GRPC().Serve(server.GatewayListener(lis)) }()
	t.Cleanup(srv.GRPC().Stop)
	conn, err := grpc.NewClient("passthrough:///gateway", append(srv.GatewayDialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ecfg.Conn, ecfg.Engine, ecfg.Access, ecfg.SigningKey, ecfg.InFlight, ecfg.Registerer = conn, store, b.acc, b.key, srv.InFlight(), srv.Registerer()
	if ecfg.Logger == nil {
		ecfg.Logger = log
	}
	b.h, err = New(ecfg)
	require.NoError(t, err)
	b.srv = httptest.NewServer(b.h)
	t.Cleanup(b.srv.Close)
	b.q, b.m = tagqv1.NewQueueServiceClient(conn), tagqv1.NewMessageServiceClient(conn)
	if auth {
		b.creds = b.credsOf(testAdminKey)
	}
	return b
}

// credsOf fetches an API key's SigV4 credentials from CredentialsPath.
func (b *bundle) credsOf(apiKey string) aws.Credentials {
	b.t.Helper()
	req, err := http.NewRequest("GET", b.srv.URL+CredentialsPath, nil)
	require.NoError(b.t, err)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	require.Equal(b.t, 200, resp.StatusCode)
	var c credentials
	require.NoError(b.t, json.NewDecoder(resp.Body).Decode(&c))
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey}
}

// principal makes a principal with grants (their Principal set to it) and
// returns an API key of its.
func (b *bundle) principal(name string, grants ...access.Grant) string {
	b.t.Helper()
	ctx := context.Background()
	_, err := b.acc.CreatePrincipal(ctx, access.Principal{Name: name})
	require.NoError(b.t, err)
	for _, g := range grants {
		g.Principal = name
		require.NoError(b.t, b.acc.SetGrant(ctx, g))
	}
	_, key, err := b.acc.IssueKey(ctx, name)
	require.NoError(b.t, err)
	return key
}

// reply is an answer: its status and body, decoded as JSON when it is.
type reply struct {
	status int
	body   string
	json   map[string]any
	header http.Header
}

// code is the error code of an error answer (the query code, which the
// JSON protocol carries in x-amzn-query-error).
func (r reply) code() string {
	if q := r.header.Get("X-Amzn-Query-Error"); q != "" {
		c, _, _ := strings.Cut(q, ";")
		return c
	}
	if i := strings.Index(r.body, "<Code>"); i >= 0 {
		rest := r.body[i+len("<Code>"):]
		return rest[:strings.Index(rest, "</Code>")]
	}
	return ""
}

// send signs and sends a request: a JSON one when body starts with "{"
// (action in X-Amz-Target), else a query-protocol form.
func (b *bundle) send(action, path, body string, mutate ...func(*http.Request)) reply {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.srv.URL+path, strings.NewReader(body))
	require.NoError(b.t, err)
	if strings.HasPrefix(body, "{") {
		req.Header.Set("Content-Type", jsonContentType)
		req.Header.Set("X-Amz-Target", targetPrefix+action)
	} else {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	}
	sum := sha256.Sum256([]byte(body))
	require.NoError(b.t, v4.NewSigner().SignHTTP(context.Background(), b.creds, req, hex.EncodeToString(sum[:]), "sqs", "us-east-1", time.Now()))
	for _, m := range mutate {
		m(req)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	out := reply{status: resp.StatusCode, body: string(raw), header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), jsonContentType) {
		require.NoError(b.t, json.Unmarshal(raw, &out.json), "%s", raw)
	}
	return out
}

// call sends a JSON request of action with the members in req.
func (b *bundle) call(action string, req any) reply {
	b.t.Helper()
	raw, err := json.Marshal(req)
	require.NoError(b.t, err)
	return b.send(action, "/", string(raw))
}

// ok is call requiring HTTP 200.
func (b *bundle) ok(action string, req any) map[string]any {
	b.t.Helper()
	r := b.call(action, req)
	require.Equal(b.t, 200, r.status, "%s: %s", action, r.body)
	return r.json
}

// query sends a query-protocol request of action with params.
func (b *bundle) query(action string, params url.Values) reply {
	b.t.Helper()
	if params == nil {
		params = url.Values{}
	}
	params.Set("Action", action)
	params.Set("Version", "2012-11-05")
	return b.send(action, "/", params.Encode())
}

// background does the engine's background work due now: redrive sweeps,
// outbox relays, a step of each running move.
func (b *bundle) background() {
	b.t.Helper()
	require.NoError(b.t, b.work.RunOnce(context.Background()))
}

// url is the queue URL of an SQS name on this endpoint.
func (b *bundle) url(name string) string { return b.srv.URL + "/" + DefaultAccountID + "/" + name }

type obj = map[string]any
