package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/timestamppb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/redisstore"
)

// testBundle is a Server on an in-memory gRPC transport over an
// in-process miniredis, with its REST handler on an httptest server.
type testBundle struct {
	ctx   context.Context
	mr    *miniredis.Miniredis
	srv   *Server
	reg   *prometheus.Registry
	conn  *grpc.ClientConn
	q     tagqv1.QueueServiceClient
	m     tagqv1.MessageServiceClient
	rest  *httptest.Server
	store *redisstore.Store
	logs  *logBuffer // what the server logged, at debug and up
}

// logBuffer collects a logger's output; safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// setup starts a bundle; opts change the server's Config.
func setup(t testing.TB, opts ...func(*Config)) *testBundle { // TB: fuzz targets too
	t.Helper()
	return setupWith(t, func(c *Config, _ redis.UniversalClient) {
		for _, o := range opts {
			o(c)
		}
	})
}

// setupWith starts a bundle; opt changes the server's Config, given the
// Redis client of its store.
func setupWith(t testing.TB, opt func(*Config, redis.UniversalClient)) *testBundle {
	t.Helper()
	ctx := context.Background()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store, err := redisstore.New(ctx, redisstore.Config{Client: rdb, Logger: log})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	reg := prometheus.NewRegistry()
	cfg := Config{Store: store, Logger: log, Registerer: reg}
	opt(&cfg, rdb)
	srv, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(srv.Draining) // stops the readiness loop

	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.GRPC().Serve(lis) }()
	t.Cleanup(srv.GRPC().Stop)
	conn, err := grpc.NewClient("passthrough:///bufconn",
		append(srv.GatewayDialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	h, err := srv.HTTPHandler(ctx, conn)
	require.NoError(t, err)
	rest := httptest.NewServer(h)
	t.Cleanup(rest.Close)
	return &testBundle{ctx: ctx, mr: mr, srv: srv, reg: reg, conn: conn, store: store, rest: rest, logs: logs,
		q: tagqv1.NewQueueServiceClient(conn), m: tagqv1.NewMessageServiceClient(conn)}
}

// do sends a JSON REST request and returns the status code and body.
func (b *testBundle) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	return b.doWith(t, method, path, "application/json", strings.NewReader(body))
}

// doWith sends a REST request with a Content-Type (none when "") and
// returns the status code and body.
func (b *testBundle) doWith(t *testing.T, method, path, contentType string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, b.rest.URL+path, body)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw)
}

// info is err's code and ErrorInfo (which every error must carry).
func info(t *testing.T, err error) (codes.Code, *errdetails.ErrorInfo) {
	t.Helper()
	require.Error(t, err)
	st, ok := status.FromError(err)
	require.True(t, ok, "not a status: %v", err)
	ei := errorInfo(st)
	require.NotNil(t, ei, "no ErrorInfo in %v", err)
	require.Equal(t, Domain, ei.GetDomain())
	return st.Code(), ei
}

func i32(v int32) *int32 { return &v }

func TestNew_RequiresAStore(t *testing.T) {
	t.Parallel()
	_, err := New(Config{})
	require.ErrorContains(t, err, "Store")
}

func TestTags_StartTimeAndFilterMapping(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v := "eu"
	for _, tc := range []struct {
		name  string
		start *timestamppb.Timestamp
	}{{"now", nil}, {"oldest", timestamppb.New(time.Unix(0, 0))}, {"at", timestamppb.New(at)}} {
		_, err := b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: tc.name, StartTime: tc.start,
			Filter: &tagqv1.TagFilter{Operator: tagqv1.TagFilter_OPERATOR_OR, Conditions: []*tagqv1.AttributeCondition{
				{Name: "region", StringValue: &v}, {Name: "urgent"}}}}})
		require.NoError(t, err)
		got, err := b.store.GetTag(b.ctx, "q", tc.name)
		require.NoError(t, err)
		require.True(t, got.Filter.Or)
		require.Equal(t, []tags.Condition{{Name: "region", Value: &v}, {Name: "urgent"}}, got.Filter.Conditions)
		switch tc.name {
		case "now":
			require.Equal(t, tags.StartNow, got.Start.Kind)
		case "oldest":
			require.Equal(t, tags.StartOldest, got.Start.Kind)
		case "at":
			require.Equal(t, tags.StartAt, got.Start.Kind)
			require.True(t, got.Start.At.Equal(at), "start %v, want %v", got.Start.At, at)
		}
		// And back: the API shows the same start time and filter.
		pt, err := b.q.GetTag(b.ctx, &tagqv1.GetTagRequest{Queue: "q", Name: tc.name})
		require.NoError(t, err)
		require.Equal(t, tc.start.AsTime(), pt.GetTag().GetStartTime().AsTime())
		require.Equal(t, tc.start == nil, pt.GetTag().GetStartTime() == nil)
		require.Equal(t, tagqv1.TagFilter_OPERATOR_OR, pt.GetTag().GetFilter().GetOperator())
	}
}

func TestCreateTag_FieldIsPrefixed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	_, err = b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: "t",
		VisibilityTimeoutSeconds: i32(-1)}})
	code, ei := info(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "tag.visibility_timeout_seconds", ei.GetMetadata()["field"])
}

func TestBackendDown_IsUnavailable(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.HealthInterval = 10 * time.Millisecond })
	code, _ := b.do(t, "GET", "/readyz", "")
	require.Equal(t, 200, code)
	hr, err := healthpb.NewHealthClient(b.conn).Check(b.ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, hr.GetStatus())

	b.mr.Close()
	_, err = b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	code2, ei := info(t, err)
	require.Equal(t, codes.Unavailable, code2)
	require.Equal(t, tags.ReasonBackendUnavailable, ei.GetReason())
	// Readiness follows the storage from the background loop's next reading.
	require.Eventually(t, func() bool {
		hr, err = healthpb.NewHealthClient(b.conn).Check(b.ctx, &healthpb.HealthCheckRequest{})
		require.NoError(t, err)
		return hr.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING
	}, 10*time.Second, 5*time.Millisecond, "gRPC health follows the storage")
	code, body := b.do(t, "GET", "/readyz", "")
	require.Equal(t, 503, code, body)
	code, _ = b.do(t, "GET", "/healthz", "")
	require.Equal(t, 200, code, "alive, though not ready")
	code, body = b.do(t, "GET", "/v1/queues/q", "")
	require.Equal(t, 503, code)
	require.Contains(t, strings.ReplaceAll(body, " ", ""), `"reason":"BACKEND_UNAVAILABLE"`)
}

func TestHealth_ServingUntilDraining(t *testing.T) {
	t.Parallel()
	b := setup(t)
	hc := healthpb.NewHealthClient(b.conn)
	for _, svc := range []string{"", "tagq.v1.QueueService", "tagq.v1.MessageService", "tagq.v1.RedriveService"} {
		r, err := hc.Check(b.ctx, &healthpb.HealthCheckRequest{Service: svc})
		require.NoError(t, err)
		require.Equal(t, healthpb.HealthCheckResponse_SERVING, r.GetStatus(), "service %q", svc)
	}
	b.srv.Draining()
	b.srv.Draining() // twice is fine
	for _, svc := range []string{"", "tagq.v1.MessageService"} {
		r, err := hc.Check(b.ctx, &healthpb.HealthCheckRequest{Service: svc})
		require.NoError(t, err)
		require.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, r.GetStatus(), "service %q", svc)
	}
}

func TestMetrics_CountEveryCallByMethodAndCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "nope"})
	require.Error(t, err)
	code, _ := b.do(t, "GET", "/v1/queues/nope", "") // REST counts as the same gRPC method
	require.Equal(t, 404, code)
	_, err = b.q.ListQueues(b.ctx, &tagqv1.ListQueuesRequest{})
	require.NoError(t, err)

	mfs, err := b.reg.Gather()
	require.NoError(t, err)
	counts := map[string]float64{}
	durations := map[string]uint64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			method := "/" + labels["grpc_service"] + "/" + labels["grpc_method"]
			switch mf.GetName() {
			case "grpc_server_handled_total":
				if v := m.GetCounter().GetValue(); v > 0 { // every method and code starts at 0
					require.Equal(t, "unary", labels["grpc_type"])
					counts[method+" "+labels["grpc_code"]] = v
				}
			case "grpc_server_handling_seconds":
				durations[method] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	require.Equal(t, map[string]float64{
		"/tagq.v1.QueueService/GetQueue NotFound": 2,
		"/tagq.v1.QueueService/ListQueues OK":     1,
	}, counts)
	require.Equal(t, uint64(2), durations["/tagq.v1.QueueService/GetQueue"])

	code, body := b.do(t, "GET", "/metrics", "")
	require.Equal(t, 200, code)
	require.Contains(t, body, `grpc_server_handled_total{grpc_code="OK",grpc_method="ListQueues",grpc_service="tagq.v1.QueueService",grpc_type="unary"} 1`)
	require.Contains(t, body, `grpc_server_handled_total{grpc_code="OK",grpc_method="Consume",grpc_service="tagq.v1.MessageService",grpc_type="bidi_stream"} 0`)
	require.Contains(t, body, "tagq_receives_waiting 0")
	require.Regexp(t, `tagq_build_info\{goversion="go[^"]+",revision="[^"]+",version="[^"]+"\} 1`, body)
}

func TestREST_ServesOpenAPIAndHealth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp, err := http.Get(b.rest.URL + "/openapi.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	code, body := b.do(t, "GET", "/healthz", "")
	require.Equal(t, 200, code)
	require.Equal(t, "ok\n", body)
	code, body = b.do(t, "GET", "/readyz", "")
	require.Equal(t, 200, code)
	require.Equal(t, "ready\n", body)
}

func TestREST_EveryErrorCarriesErrorInfo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		method, path, body string
		code               int
		reason             string
	}{
		{"POST", "/v1/queues", `{"name": `, 400, ReasonMalformedRequest},
		{"POST", "/v1/queues", `{"name": "q", "colour": "blue"}`, 400, ReasonMalformedRequest},
		{"POST", "/v1/queues", `{"name": "has space"}`, 400, tags.ReasonInvalidName},
		{"GET", "/v1/queues/nope", "", 404, tags.ReasonQueueNotFound},
		{"GET", "/v2/elsewhere", "", 404, "NOT_FOUND"},
		{"PUT", "/v1/queues/q", "", 405, "METHOD_NOT_ALLOWED"},
	} {
		code, body := b.do(t, tc.method, tc.path, tc.body)
		require.Equal(t, tc.code, code, "%s %s: %s", tc.method, tc.path, body)
		var st struct {
			Details []struct {
				Type   string `json:"@type"`
				Reason string `json:"reason"`
				Domain string `json:"domain"`
			} `json:"details"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &st), body)
		require.NotEmpty(t, st.Details, body)
		require.Equal(t, "type.googleapis.com/google.rpc.ErrorInfo", st.Details[0].Type)
		require.Equal(t, tc.reason, st.Details[0].Reason, "%s %s: %s", tc.method, tc.path, body)
		require.Equal(t, Domain, st.Details[0].Domain)
	}
}
