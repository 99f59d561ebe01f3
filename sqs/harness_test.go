package sqs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/redrive"
	"github.com/tagq/tagq/server"
	"github.com/tagq/tagq/tags/redisstore"
)

// bundle is an SQS endpoint in front of a whole tagq server in process (on
// miniredis): the server's methods called in process (Server.InProcess),
// as tagqd wires it.
type bundle struct {
	t     tb
	h     *Handler
	srv   *httptest.Server
	store *redisstore.Store
	work  *redrive.Worker // the background work, run on demand (bundle.background)
	q     tagqv1.QueueServiceClient
	m     tagqv1.MessageServiceClient
	acc   *access.Access       // nil: authentication off
	reg   *prometheus.Registry // the server's metrics and the endpoint's
	key   []byte
	// creds sign requests (any, with authentication off).
	creds aws.Credentials
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
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return setupOn(t, auth, rdb, "", opts...)
}

// setupOn starts the bundle on rdb, its keys under prefix ("": the
// engine's default); opts change the server's and the endpoint's
// configurations before they start (the server's Logger is the
// endpoint's unless an option sets one).
func setupOn(t tb, auth bool, rdb redis.UniversalClient, prefix string, opts ...func(*server.Config, *Config)) *bundle {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Logger: log, Prefix: prefix})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	b := &bundle{t: t, store: store, work: redrive.New(redrive.Config{Store: store, Logger: log}), creds: aws.Credentials{AccessKeyID: "anyone", SecretAccessKey: "anything"}}
	b.reg = prometheus.NewRegistry()
	cfg := server.Config{Store: store, Logger: log, Registerer: b.reg}
	if auth {
		b.acc, err = access.New(access.Config{Client: rdb, Prefix: prefix})
		require.NoError(t, err)
		require.NoError(t, b.acc.Bootstrap(ctx, testAdminKey))
		cfg.Access = b.acc
		kp := prefix
		if kp == "" {
			kp = "tagq"
		}
		b.key, err = LoadSigningKey(ctx, rdb, kp, "")
		require.NoError(t, err)
	}
	var ecfg Config
	for _, o := range opts {
		o(&cfg, &ecfg)
	}
	srv, err := server.New(cfg)
	require.NoError(t, err)
	t.Cleanup(srv.GRPC().Stop)
	conn := srv.InProcess()
	ecfg.Conn, ecfg.Engine, ecfg.Access, ecfg.SigningKey, ecfg.InFlight, ecfg.Registerer = conn, store, b.acc, b.key, srv.InFlight(), srv.Registerer()
	if ecfg.Logger == nil {
		ecfg.Logger = cfg.Logger
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

// series is a gauge's or counter's series on the server's /metrics (the
// endpoint's too), by its labels' values joined with ",".
func (b *bundle) series(t *testing.T, name string) map[string]float64 {
	t.Helper()
	mfs, err := b.reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetValue())
			}
			v := m.GetCounter().GetValue()
			if m.GetGauge() != nil {
				v = m.GetGauge().GetValue()
			}
			out[strings.Join(labels, ",")] = v
		}
	}
	return out
}

// metric is the value of the server's gauge or counter name, of the
// series whose label values include labels (none: a metric of one
// series).
func metric(t *testing.T, b *bundle, name string, labels ...string) float64 {
	t.Helper()
series:
	for key, v := range b.series(t, name) {
		values := map[string]bool{}
		for _, l := range strings.Split(key, ",") {
			values[l] = true
		}
		for _, l := range labels {
			if !values[l] {
				continue series
			}
		}
		return v
	}
	return 0
}
