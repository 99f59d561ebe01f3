package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// End-to-end tests of authentication and permissions (S18): a real tagqd
// with --auth and a bootstrap admin key, over gRPC and REST.

const e2eAdminKey = "the e2e tests' bootstrap admin key, long enough"

// authd is a tagqd with --auth.
type authd struct {
	*daemon
	a tagqv1.AccessServiceClient
}

// adminKeyFile writes the bootstrap key to a file of the test's own.
func adminKeyFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "admin.key")
	require.NoError(t, os.WriteFile(f, []byte(e2eAdminKey+"\n"), 0o600))
	return f
}

func startAuth(t *testing.T, be backend, extra ...string) *authd {
	t.Helper()
	d := start(t, be, append([]string{"--auth", "--admin-key-file", adminKeyFile(t)}, extra...)...)
	return &authd{daemon: d, a: tagqv1.NewAccessServiceClient(d.conn)}
}

// as is a context whose calls carry key as a bearer API key.
func as(key string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+key)
}

// principal creates a principal with grants (queue, PERMISSION_ name,
// tags...) and returns a key of its.
func (d *authd) principal(t *testing.T, name string, grants ...*tagqv1.PermissionGrant) string {
	t.Helper()
	_, err := d.a.CreatePrincipal(as(e2eAdminKey), &tagqv1.CreatePrincipalRequest{Principal: &tagqv1.Principal{Name: name}})
	require.NoError(t, err)
	for _, g := range grants {
		g.Principal = name
		_, err := d.a.SetPermission(as(e2eAdminKey), &tagqv1.SetPermissionRequest{Grant: g})
		require.NoError(t, err)
	}
	k, err := d.a.IssueKey(as(e2eAdminKey), &tagqv1.IssueKeyRequest{Principal: name})
	require.NoError(t, err)
	return k.GetApiKey()
}

func grant(queue string, p tagqv1.Permission, tags ...string) *tagqv1.PermissionGrant {
	return &tagqv1.PermissionGrant{Queue: queue, Permission: p, Tags: tags}
}

// restAs is rest with an Authorization header (none for "").
func (d *authd) restAs(key, method, path, body string) (int, map[string]any) {
	d.t.Helper()
	return d.restHeaders(map[string]string{"Authorization": "Bearer " + key}, key == "", method, path, body)
}

func (d *authd) restHeaders(h map[string]string, noAuth bool, method, path, body string) (int, map[string]any) {
	d.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://"+d.http+path, r)
	require.NoError(d.t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		if !(noAuth && k == "Authorization") {
			req.Header.Set(k, v)
		}
	}
	return doJSON(d.t, http.DefaultClient, req)
}

func doJSON(t *testing.T, c *http.Client, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := decodeJSON(resp)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// errInfo is the ErrorInfo of a gRPC error.
func errInfo(t *testing.T, err error) (codes.Code, *errdetails.ErrorInfo) {
	t.Helper()
	require.Error(t, err)
	st := status.Convert(err)
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return st.Code(), ei
		}
	}
	t.Fatalf("no ErrorInfo in %v", err)
	return 0, nil
}

// restInfo is the ErrorInfo (reason, metadata) of a REST error body.
func restInfo(body map[string]any) (string, map[string]any) {
	details, _ := body["details"].([]any)
	for _, d := range details {
		m, _ := d.(map[string]any)
		if m["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" {
			r, _ := m["reason"].(string)
			md, _ := m["metadata"].(map[string]any)
			return r, md
		}
	}
	return "", nil
}

// An operation a level may or may not allow, over gRPC and over REST.
type levelOp struct {
	name string
	need string // the level a refusal names
	grpc func(d *authd, key, queue string, n int) error
	rest func(d *authd, key, queue string, n int) (int, map[string]any)
}

// handleOf sends a message as the admin and receives it: a receipt handle
// of queue's default tag.
func (d *authd) handleOf(t *testing.T, queue string) string {
	t.Helper()
	_, err := d.m.SendMessage(as(e2eAdminKey), &tagqv1.SendMessageRequest{Queue: queue, Body: []byte("h")})
	require.NoError(t, err)
	r, err := d.m.ReceiveMessage(as(e2eAdminKey), &tagqv1.ReceiveMessageRequest{Queue: queue, MaxMessages: i32(1)})
	require.NoError(t, err)
	require.Len(t, r.GetMessages(), 1)
	return r.GetMessages()[0].GetReceiptHandle()
}

var levelOps = []levelOp{
	{name: "send", need: "SEND",
		grpc: func(d *authd, key, q string, _ int) error {
			_, err := d.m.SendMessage(as(key), &tagqv1.SendMessageRequest{Queue: q, Body: []byte("x")})
			return err
		},
		rest: func(d *authd, key, q string, _ int) (int, map[string]any) {
			return d.restAs(key, "POST", "/v1/queues/"+q+"/messages", `{"body": "eA=="}`)
		}},
	{name: "receive", need: "RECEIVE",
		grpc: func(d *authd, key, q string, _ int) error {
			_, err := d.m.ReceiveMessage(as(key), &tagqv1.ReceiveMessageRequest{Queue: q, WaitSeconds: i32(0)})
			return err
		},
		rest: func(d *authd, key, q string, _ int) (int, map[string]any) {
			return d.restAs(key, "POST", "/v1/queues/"+q+"/messages:receive", `{"wait_seconds": 0}`)
		}},
	{name: "handle", need: "HANDLE",
		grpc: func(d *authd, key, q string, _ int) error {
			_, err := d.m.DeleteMessage(as(key), &tagqv1.DeleteMessageRequest{Queue: q, ReceiptHandle: d.handleOf(d.t, q)})
			return err
		},
		rest: func(d *authd, key, q string, _ int) (int, map[string]any) {
			return d.restAs(key, "POST", "/v1/queues/"+q+"/messages:delete", `{"receipt_handle": "`+d.handleOf(d.t, q)+`"}`)
		}},
	{name: "info", need: "GET_QUEUE_INFO",
		grpc: func(d *authd, key, q string, _ int) error {
			_, err := d.q.GetQueue(as(key), &tagqv1.GetQueueRequest{Name: q})
			return err
		},
		rest: func(d *authd, key, q string, _ int) (int, map[string]any) {
			return d.restAs(key, "GET", "/v1/queues/"+q, "")
		}},
	{name: "peek", need: "PEEK",
		grpc: func(d *authd, key, q string, _ int) error {
			_, err := d.m.PeekMessage(as(key), &tagqv1.PeekMessageRequest{Queue: q})
			return err
		},
		rest: func(d *authd, key, q string, _ int) (int, map[string]any) {
			return d.restAs(key, "POST", "/v1/queues/"+q+"/messages:peek", `{}`)
		}},
	{name: "admin", need: "ADMIN_QUEUE",
		grpc: func(d *authd, key, q string, n int) error {
			_, err := d.q.CreateTag(as(key), &tagqv1.CreateTagRequest{Queue: q, Tag: &tagqv1.Tag{Name: fmt.Sprintf("t%d", n)}})
			return err
		},
		rest: func(d *authd, key, q string, n int) (int, map[string]any) {
			return d.restAs(key, "POST", "/v1/queues/"+q+"/tags", fmt.Sprintf(`{"name": "t%d"}`, n))
		}},
	{name: "grant", need: "FULL_CONTROL",
		grpc: func(d *authd, key, q string, _ int) error {
			g := grant(q, tagqv1.Permission_PERMISSION_SEND)
			g.Principal = "bystander"
			_, err := d.a.SetPermission(as(key), &tagqv1.SetPermissionRequest{Grant: g})
			return err
		},
		rest: func(d *authd, key, q string, _ int) (int, map[string]any) {
			return d.restAs(key, "POST", "/v1/permissions", `{"principal": "bystander", "queue": "`+q+`", "permission": "PERMISSION_SEND"}`)
		}},
}

// TestE2E_Auth_PermissionLevels checks each of EMQ's levels against every
// kind of operation, over gRPC and REST: what it allows succeeds, the rest
// is PERMISSION_DENIED naming the permission needed and the queue.
func TestE2E_Auth_PermissionLevels(t *testing.T) {
	// What each level allows (docs.api.xiaomi.com/emq QueuePermission).
	allows := map[tagqv1.Permission]string{
		tagqv1.Permission_PERMISSION_NONE:           "",
		tagqv1.Permission_PERMISSION_SEND:           "send",
		tagqv1.Permission_PERMISSION_RECEIVE:        "receive",
		tagqv1.Permission_PERMISSION_SEND_RECEIVE:   "send receive",
		tagqv1.Permission_PERMISSION_HANDLE:         "receive handle",
		tagqv1.Permission_PERMISSION_SEND_HANDLE:    "send receive handle",
		tagqv1.Permission_PERMISSION_GET_QUEUE_INFO: "info",
		tagqv1.Permission_PERMISSION_USE_QUEUE:      "send receive handle info",
		tagqv1.Permission_PERMISSION_ADMIN_QUEUE:    "send receive handle info peek admin",
		tagqv1.Permission_PERMISSION_PEEK:           "peek",
		tagqv1.Permission_PERMISSION_DELETE_PEEK:    "peek",
		tagqv1.Permission_PERMISSION_FULL_CONTROL:   "send receive handle info peek admin grant",
	}
	eachBackend(t, func(t *testing.T, be backend) {
		d := startAuth(t, be)
		d.principal(t, "bystander")
		for lvl := tagqv1.Permission_PERMISSION_NONE; lvl <= tagqv1.Permission_PERMISSION_FULL_CONTROL; lvl++ {
			name := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(lvl.String(), "PERMISSION_"), "_", "-"))
			q := "lvl-" + name
			_, err := d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: q}})
			require.NoError(t, err)
			key := d.principal(t, "p-"+name, grant(q, lvl))
			allowed := strings.Fields(allows[lvl])
			for i, op := range levelOps {
				want := false
				for _, a := range allowed {
					want = want || a == op.name
				}
				err := op.grpc(d, key, q, 2*i)
				code, body := op.rest(d, key, q, 2*i+1)
				if want {
					require.NoError(t, err, "%s may %s (gRPC)", lvl, op.name)
					require.Equal(t, 200, code, "%s may %s (REST): %v", lvl, op.name, body)
					continue
				}
				c, ei := errInfo(t, err)
				require.Equal(t, codes.PermissionDenied, c, "%s may not %s (gRPC): %v", lvl, op.name, err)
				require.Equal(t, "PERMISSION_DENIED", ei.GetReason())
				require.Equal(t, op.need, ei.GetMetadata()["permission"], "%s %s", lvl, op.name)
				require.Equal(t, q, ei.GetMetadata()["queue"])
				require.Equal(t, 403, code, "%s may not %s (REST): %v", lvl, op.name, body)
				reason, md := restInfo(body)
				require.Equal(t, "PERMISSION_DENIED", reason)
				require.Equal(t, op.need, md["permission"])
				require.Equal(t, q, md["queue"])
			}
		}
	})
}

// TestE2E_Auth_Credentials: no key, a wrong key, a revoked key; health
// open; reflection and /metrics for principals only.
func TestE2E_Auth_Credentials(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := startAuth(t, be)
		_, err := d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "creds"}})
		require.NoError(t, err)
		key := d.principal(t, "reader", grant("creds", tagqv1.Permission_PERMISSION_GET_QUEUE_INFO))

		for name, ctx := range map[string]context.Context{
			"no key":    context.Background(),
			"wrong key": as(key[:len(key)-2] + "xx"),
			"not a key": as("hunter2"),
			"basic":     metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic "+key),
		} {
			_, err := d.q.GetQueue(ctx, &tagqv1.GetQueueRequest{Name: "creds"})
			c, ei := errInfo(t, err)
			require.Equal(t, codes.Unauthenticated, c, name)
			require.Equal(t, "UNAUTHENTICATED", ei.GetReason(), name)
		}
		code, body := d.restAs("", "GET", "/v1/queues/creds", "")
		require.Equal(t, 401, code, "%v", body)
		r, _ := restInfo(body)
		require.Equal(t, "UNAUTHENTICATED", r)
		code, _ = d.restAs(key[:len(key)-2]+"xx", "GET", "/v1/queues/creds", "")
		require.Equal(t, 401, code)

		_, err = d.q.GetQueue(as(key), &tagqv1.GetQueueRequest{Name: "creds"})
		require.NoError(t, err)
		code, _ = d.restAs(key, "GET", "/v1/queues/creds", "")
		require.Equal(t, 200, code)

		// Health answers without credentials; reflection does not.
		_, err = healthpb.NewHealthClient(d.conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
		require.NoError(t, err)
		require.Equal(t, codes.Unauthenticated, reflect(t, d.conn, context.Background()))
		require.Equal(t, codes.OK, reflect(t, d.conn, as(key)))
		// /metrics: a principal's key; /healthz and /readyz: none.
		code, _ = d.restAs("", "GET", "/metrics", "")
		require.Equal(t, 401, code)
		code, _ = d.restAs(key, "GET", "/metrics", "")
		require.Equal(t, 200, code)
		for _, p := range []string{"/healthz", "/readyz"} {
			code, _ = d.restAs("", "GET", p, "")
			require.Equal(t, 200, code, p)
		}

		// A revoked key is refused at once by the tagqd that revoked it.
		keys, err := d.a.ListKeys(as(key), &tagqv1.ListKeysRequest{Principal: "reader"})
		require.NoError(t, err, "a principal lists its own keys")
		require.Len(t, keys.GetKeys(), 1)
		require.NotContains(t, fmt.Sprint(keys), key[len(key)-43:], "no secret in a listing")
		_, err = d.a.RevokeKey(as(key), &tagqv1.RevokeKeyRequest{Principal: "reader", KeyId: keys.GetKeys()[0].GetKeyId()})
		require.NoError(t, err, "a principal revokes its own key")
		_, err = d.q.GetQueue(as(key), &tagqv1.GetQueueRequest{Name: "creds"})
		c, _ := errInfo(t, err)
		require.Equal(t, codes.Unauthenticated, c)
		code, _ = d.restAs(key, "GET", "/v1/queues/creds", "")
		require.Equal(t, 401, code)
	})
}

// With --pprof and --auth, the profiles are an admin's.
func TestE2E_Auth_PprofIsAnAdmins(t *testing.T) {
	t.Parallel()
	d := startAuth(t, backend{name: "embedded"}, "--pprof")
	key := d.principal(t, "curious", grant("*", tagqv1.Permission_PERMISSION_FULL_CONTROL))
	code, _ := d.restAs("", "GET", "/debug/pprof/", "")
	require.Equal(t, 401, code)
	code, body := d.restAs(key, "GET", "/debug/pprof/", "")
	require.Equal(t, 403, code, "%v", body)
	code, _ = d.restAs(e2eAdminKey, "GET", "/debug/pprof/", "")
	require.Equal(t, 200, code)
}

// reflect lists services by reflection and returns the call's code.
func reflect(t *testing.T, conn *grpc.ClientConn, ctx context.Context) codes.Code {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	require.NoError(t, err)
	// A refused call may end the stream before this send arrives: Send
	// then says io.EOF and Recv has the status.
	if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); !errors.Is(err, io.EOF) {
		require.NoError(t, err)
	}
	_, err = s.Recv()
	return status.Code(err)
}

// TestE2E_Auth_KeyRotation: a principal issues a new key over REST, the
// old one is revoked, the new one works.
func TestE2E_Auth_KeyRotation(t *testing.T) {
	t.Parallel()
	d := startAuth(t, backend{name: "embedded"})
	old := d.principal(t, "svc", grant("*", tagqv1.Permission_PERMISSION_GET_QUEUE_INFO))
	_, err := d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "rot"}})
	require.NoError(t, err)
	code, out := d.restAs(old, "POST", "/v1/principals/svc/keys", `{}`)
	require.Equal(t, 200, code, "%v", out)
	fresh, _ := out["api_key"].(string)
	require.NotEmpty(t, fresh)
	oldID := strings.Split(old, "_")[1]
	code, out = d.restAs(fresh, "DELETE", "/v1/principals/svc/keys/"+oldID, "")
	require.Equal(t, 200, code, "%v", out)
	code, _ = d.restAs(old, "GET", "/v1/queues/rot", "")
	require.Equal(t, 401, code)
	code, _ = d.restAs(fresh, "GET", "/v1/queues/rot", "")
	require.Equal(t, 200, code)
	// Another principal's keys are not its business.
	code, out = d.restAs(fresh, "POST", "/v1/principals/admin/keys", `{}`)
	require.Equal(t, 403, code, "%v", out)
}

// TestE2E_Auth_RevokedOnAnotherReplica: two tagqd on one Redis; a key
// revoked through one is refused by the other within the refresh bound
// (1 s, 2 s at worst).
func TestE2E_Auth_RevokedOnAnotherReplica(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		if be.name == "embedded" {
			t.Skip("replicas need a shared Redis (TAGQ_TEST_REDIS_URL)")
		}
		a := startAuth(t, be)
		b := startAuth(t, be)
		key := a.principal(t, "replicated", grant("*", tagqv1.Permission_PERMISSION_GET_QUEUE_INFO))
		_, err := a.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "rq"}})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := b.q.GetQueue(as(key), &tagqv1.GetQueueRequest{Name: "rq"})
			return err == nil
		}, 5*time.Second, 20*time.Millisecond, "a new key works on the other replica within the bound")
		_, err = a.a.RevokeKey(as(e2eAdminKey), &tagqv1.RevokeKeyRequest{Principal: "replicated", KeyId: strings.Split(key, "_")[1]})
		require.NoError(t, err)
		revoked := time.Now()
		require.Eventually(t, func() bool {
			_, err := b.q.GetQueue(as(key), &tagqv1.GetQueueRequest{Name: "rq"})
			return status.Code(err) == codes.Unauthenticated
		}, 5*time.Second, 20*time.Millisecond)
		// 2 s is the bound; the slack is for a loaded machine.
		require.Less(t, time.Since(revoked), 3*time.Second)
	})
}

// TestE2E_Auth_PrefixAndTags: a grant on a prefix, an exact grant that
// overrides it, and receiving limited to named tags (unary, Consume, and
// handles of another tag).
func TestE2E_Auth_PrefixAndTags(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := startAuth(t, be)
		for _, q := range []string{"orders-eu", "orders-secret", "jobs"} {
			_, err := d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: q}})
			require.NoError(t, err)
		}
		for _, tg := range []string{"billing", "audit"} {
			_, err := d.q.CreateTag(as(e2eAdminKey), &tagqv1.CreateTagRequest{Queue: "jobs", Tag: &tagqv1.Tag{Name: tg}})
			require.NoError(t, err)
		}
		key := d.principal(t, "worker",
			grant("orders-*", tagqv1.Permission_PERMISSION_SEND),
			grant("orders-secret", tagqv1.Permission_PERMISSION_NONE),
			grant("jobs", tagqv1.Permission_PERMISSION_SEND_HANDLE, "billing"))

		send := func(q string) error {
			_, err := d.m.SendMessage(as(key), &tagqv1.SendMessageRequest{Queue: q, Body: []byte("x")})
			return err
		}
		require.NoError(t, send("orders-eu"))
		require.Equal(t, codes.PermissionDenied, status.Code(send("orders-secret")), "the exact grant wins")
		code, _ := d.restAs(key, "POST", "/v1/queues/orders-eu/messages", `{"body": "eA=="}`)
		require.Equal(t, 200, code)
		code, _ = d.restAs(key, "POST", "/v1/queues/orders-secret/messages", `{"body": "eA=="}`)
		require.Equal(t, 403, code)

		perm, err := d.a.GetPermission(as(key), &tagqv1.GetPermissionRequest{Queue: "orders-eu"})
		require.NoError(t, err, "one's own permission needs nothing")
		require.Equal(t, tagqv1.Permission_PERMISSION_SEND, perm.GetPermission())
		require.Equal(t, "orders-*", perm.GetSource())
		code, out := d.restAs(key, "GET", "/v1/permissions:query?queue=orders-secret", "")
		require.Equal(t, 200, code, "%v", out)
		require.Equal(t, "PERMISSION_NONE", out["permission"])
		require.Equal(t, "orders-secret", out["source"])
		code, out = d.restAs(key, "GET", "/v1/permissions?principal=worker", "")
		require.Equal(t, 200, code, "%v", out)
		require.Len(t, out["grants"], 3)
		code, _ = d.restAs(key, "GET", "/v1/permissions", "")
		require.Equal(t, 403, code, "everyone's permissions are an admin's")

		// Tags: billing yes; audit and the default tag (unnamed) no.
		require.NoError(t, send("jobs"))
		recv := func(tag string) error {
			_, err := d.m.ReceiveMessage(as(key), &tagqv1.ReceiveMessageRequest{Queue: "jobs", Tag: tag, WaitSeconds: i32(0)})
			return err
		}
		require.NoError(t, recv("billing"))
		_, ei := errInfo(t, recv("audit"))
		require.Equal(t, "audit", ei.GetMetadata()["tag"])
		require.Equal(t, "RECEIVE", ei.GetMetadata()["permission"])
		require.Equal(t, codes.PermissionDenied, status.Code(recv("")))
		code, _ = d.restAs(key, "POST", "/v1/queues/jobs/messages:receive", `{"tag": "audit"}`)
		require.Equal(t, 403, code)
		code, _ = d.restAs(key, "POST", "/v1/queues/jobs/messages:receive", `{"tag": "billing"}`)
		require.Equal(t, 200, code)

		// A handle of the audit tag (received by the admin) is not the
		// worker's to settle, though it may handle billing's.
		r, err := d.m.ReceiveMessage(as(e2eAdminKey), &tagqv1.ReceiveMessageRequest{Queue: "jobs", Tag: "audit"})
		require.NoError(t, err)
		require.NotEmpty(t, r.GetMessages())
		h := r.GetMessages()[0].GetReceiptHandle()
		_, err = d.m.DeleteMessage(as(key), &tagqv1.DeleteMessageRequest{Queue: "jobs", ReceiptHandle: h})
		_, ei = errInfo(t, err)
		require.Equal(t, "PERMISSION_DENIED", ei.GetReason())
		require.Equal(t, "audit", ei.GetMetadata()["tag"])
		_, err = d.m.DeleteMessageBatch(as(key), &tagqv1.DeleteMessageBatchRequest{Queue: "jobs",
			Entries: []*tagqv1.DeleteMessageBatchEntry{{Id: "a", ReceiptHandle: h}}})
		require.Equal(t, codes.PermissionDenied, status.Code(err))

		// Consume: opening on audit is refused; on billing it delivers.
		ctx, cancel := context.WithTimeout(as(key), 10*time.Second)
		defer cancel()
		s, err := d.m.Consume(ctx)
		require.NoError(t, err)
		require.NoError(t, s.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "jobs", Tag: "audit"}}))
		_, err = s.Recv()
		require.Equal(t, codes.PermissionDenied, status.Code(err))
		s, err = d.m.Consume(ctx)
		require.NoError(t, err)
		require.NoError(t, s.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "jobs", Tag: "billing"}}))
		require.NoError(t, send("jobs"))
		resp, err := s.Recv()
		require.NoError(t, err)
		require.NotEmpty(t, resp.GetMessages())
		require.NoError(t, s.Send(&tagqv1.ConsumeRequest{Acks: []uint64{resp.GetMessages()[0].GetDeliveryId()}}))
		require.NoError(t, s.CloseSend())
		_, err = s.Recv()
		require.ErrorIs(t, err, io.EOF, "a clean end: the ack was allowed")
	})
}

// TestE2E_Auth_Streams: Publish answers a frame for a forbidden queue with
// PERMISSION_DENIED and goes on; a Consume stream of a principal with
// RECEIVE alone ends PERMISSION_DENIED at its first ack.
func TestE2E_Auth_Streams(t *testing.T) {
	t.Parallel()
	d := startAuth(t, backend{name: "embedded"})
	for _, q := range []string{"pub-ok", "pub-no"} {
		_, err := d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: q}})
		require.NoError(t, err)
	}
	key := d.principal(t, "streamer", grant("pub-ok", tagqv1.Permission_PERMISSION_SEND_RECEIVE))
	ctx, cancel := context.WithTimeout(as(key), 10*time.Second)
	defer cancel()
	p, err := d.m.Publish(ctx)
	require.NoError(t, err)
	entry := []*tagqv1.SendMessageBatchEntry{{Id: "1", Body: []byte("x")}}
	require.NoError(t, p.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "pub-no", Entries: entry}))
	require.NoError(t, p.Send(&tagqv1.PublishRequest{Seq: 2, Queue: "pub-ok", Entries: entry}))
	got := map[uint64]*tagqv1.PublishResponse{}
	for range 2 {
		r, err := p.Recv()
		require.NoError(t, err)
		got[r.GetSeq()] = r
	}
	require.EqualValues(t, codes.PermissionDenied, got[1].GetError().GetCode())
	require.Equal(t, "PERMISSION_DENIED", got[1].GetError().GetReason())
	require.Nil(t, got[2].GetError())
	require.Len(t, got[2].GetSuccessful(), 1)
	require.NoError(t, p.CloseSend())
	_, err = p.Recv()
	require.ErrorIs(t, err, io.EOF)
	q, err := d.q.GetQueue(as(e2eAdminKey), &tagqv1.GetQueueRequest{Name: "pub-no"})
	require.NoError(t, err)
	require.Zero(t, q.GetQueue().GetState().GetRetainedMessages(), "nothing of the refused frame stored")

	c, err := d.m.Consume(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "pub-ok"}}))
	resp, err := c.Recv()
	require.NoError(t, err, "RECEIVE opens the stream")
	require.NotEmpty(t, resp.GetMessages())
	require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Acks: []uint64{resp.GetMessages()[0].GetDeliveryId()}}))
	for {
		_, err = c.Recv()
		if err != nil {
			break
		}
	}
	_, ei := errInfo(t, err)
	require.Equal(t, "PERMISSION_DENIED", ei.GetReason())
	require.Equal(t, "HANDLE", ei.GetMetadata()["permission"])
}

// TestE2E_Auth_HandlesAndDeadLetters: a receipt handle gives a principal
// without HANDLE nothing; dead-lettering into a DLQ needs no permission on
// the DLQ.
func TestE2E_Auth_HandlesAndDeadLetters(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := startAuth(t, be)
		_, err := d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "dlq", DeadLetterQueue: true}})
		require.NoError(t, err)
		_, err = d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "src",
			RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 5}}})
		require.NoError(t, err)
		handler := d.principal(t, "handler", grant("src", tagqv1.Permission_PERMISSION_SEND_HANDLE))
		sender := d.principal(t, "sender", grant("src", tagqv1.Permission_PERMISSION_SEND))

		for i := range 2 {
			_, err = d.m.SendMessage(as(sender), &tagqv1.SendMessageRequest{Queue: "src", Body: []byte(fmt.Sprint(i))})
			require.NoError(t, err)
		}
		r, err := d.m.ReceiveMessage(as(handler), &tagqv1.ReceiveMessageRequest{Queue: "src", MaxMessages: i32(2)})
		require.NoError(t, err)
		require.Len(t, r.GetMessages(), 2)
		h0, h1 := r.GetMessages()[0].GetReceiptHandle(), r.GetMessages()[1].GetReceiptHandle()

		// The sender holds a handle it did not earn: every use is refused.
		_, err = d.m.DeleteMessage(as(sender), &tagqv1.DeleteMessageRequest{Queue: "src", ReceiptHandle: h0})
		_, ei := errInfo(t, err)
		require.Equal(t, "HANDLE", ei.GetMetadata()["permission"])
		_, err = d.m.ChangeMessageVisibility(as(sender), &tagqv1.ChangeMessageVisibilityRequest{Queue: "src", ReceiptHandle: h0})
		require.Equal(t, codes.PermissionDenied, status.Code(err))
		_, err = d.m.DeadMessage(as(sender), &tagqv1.DeadMessageRequest{Queue: "src", ReceiptHandle: h0})
		require.Equal(t, codes.PermissionDenied, status.Code(err))
		code, _ := d.restAs(sender, "POST", "/v1/queues/src/messages:delete", `{"receipt_handle": "`+h0+`"}`)
		require.Equal(t, 403, code)
		tag, err := d.q.GetTag(as(e2eAdminKey), &tagqv1.GetTagRequest{Queue: "src", Name: "default"})
		require.NoError(t, err)
		require.EqualValues(t, 2, tag.GetTag().GetState().GetInFlight(), "nothing settled by the refused calls")

		// The handler dead-letters with no permission on the DLQ.
		_, err = d.m.DeadMessage(as(handler), &tagqv1.DeadMessageRequest{Queue: "src", ReceiptHandle: h0, Reason: "POISON"})
		require.NoError(t, err)
		code, out := d.restAs(handler, "POST", "/v1/queues/src/messages:dead", `{"receipt_handle": "`+h1+`"}`)
		require.Equal(t, 200, code, "%v", out)
		_, err = d.m.PeekMessage(as(handler), &tagqv1.PeekMessageRequest{Queue: "dlq"})
		require.Equal(t, codes.PermissionDenied, status.Code(err), "and still none there")
		require.Eventually(t, func() bool {
			p, err := d.m.PeekMessage(as(e2eAdminKey), &tagqv1.PeekMessageRequest{Queue: "dlq", MaxMessages: i32(10)})
			return err == nil && len(p.GetMessages()) == 2
		}, 10*time.Second, 20*time.Millisecond, "both dead letters reach the DLQ")

		// Setting a redrive policy sends dead letters to the DLQ: that
		// needs SEND on it.
		owner := d.principal(t, "owner", grant("mine", tagqv1.Permission_PERMISSION_ADMIN_QUEUE))
		_, err = d.q.CreateQueue(as(owner), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "mine",
			RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 5}}})
		_, ei = errInfo(t, err)
		require.Equal(t, "SEND", ei.GetMetadata()["permission"])
		require.Equal(t, "dlq", ei.GetMetadata()["queue"])
	})
}

// TestE2E_Auth_QuotaAndOwner: a principal's queue quota, and FULL_CONTROL
// for a queue's creator.
func TestE2E_Auth_QuotaAndOwner(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		d := startAuth(t, be)
		_, err := d.a.CreatePrincipal(as(e2eAdminKey), &tagqv1.CreatePrincipalRequest{Principal: &tagqv1.Principal{Name: "team", MaxQueues: i32(1)}})
		require.NoError(t, err)
		_, err = d.a.SetPermission(as(e2eAdminKey), &tagqv1.SetPermissionRequest{Grant: &tagqv1.PermissionGrant{Principal: "team",
			Queue: "team-*", Permission: tagqv1.Permission_PERMISSION_ADMIN_QUEUE}})
		require.NoError(t, err)
		k, err := d.a.IssueKey(as(e2eAdminKey), &tagqv1.IssueKeyRequest{Principal: "team"})
		require.NoError(t, err)
		team := k.GetApiKey()
		other := d.principal(t, "other")

		_, err = d.q.CreateQueue(as(team), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "elsewhere"}})
		require.Equal(t, codes.PermissionDenied, status.Code(err))
		_, err = d.q.CreateQueue(as(team), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "team-a"}})
		require.NoError(t, err)
		_, err = d.q.CreateQueue(as(team), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "team-b"}})
		c, ei := errInfo(t, err)
		require.Equal(t, codes.ResourceExhausted, c)
		require.Equal(t, "QUOTA_EXCEEDED", ei.GetReason())
		code, body := d.restAs(team, "POST", "/v1/queues", `{"name": "team-c"}`)
		require.Equal(t, 429, code, "%v", body)
		r, _ := restInfo(body)
		require.Equal(t, "QUOTA_EXCEEDED", r)
		p, err := d.a.GetPrincipal(as(team), &tagqv1.GetPrincipalRequest{Name: "team"})
		require.NoError(t, err, "a principal reads itself")
		require.EqualValues(t, 1, p.GetPrincipal().GetCreatedQueues())

		// The creator grants on its queue (FULL_CONTROL), not on others'.
		_, err = d.a.SetPermission(as(team), &tagqv1.SetPermissionRequest{Grant: &tagqv1.PermissionGrant{Principal: "other",
			Queue: "team-a", Permission: tagqv1.Permission_PERMISSION_SEND}})
		require.NoError(t, err)
		_, err = d.m.SendMessage(as(other), &tagqv1.SendMessageRequest{Queue: "team-a", Body: []byte("x")})
		require.NoError(t, err)
		_, err = d.a.SetPermission(as(team), &tagqv1.SetPermissionRequest{Grant: &tagqv1.PermissionGrant{Principal: "other",
			Queue: "team-*", Permission: tagqv1.Permission_PERMISSION_SEND}})
		require.Equal(t, codes.PermissionDenied, status.Code(err), "prefixes are an admin's")

		// Deleting frees the quota.
		_, err = d.q.DeleteQueue(as(team), &tagqv1.DeleteQueueRequest{Name: "team-a"})
		require.NoError(t, err)
		_, err = d.q.CreateQueue(as(team), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "team-b"}})
		require.NoError(t, err)
		// Principals are an admin's to manage.
		_, err = d.a.CreatePrincipal(as(team), &tagqv1.CreatePrincipalRequest{Principal: &tagqv1.Principal{Name: "x"}})
		require.Equal(t, codes.PermissionDenied, status.Code(err))
		// It lists the queues it holds a permission on: the one it made.
		l, err := d.q.ListQueues(as(team), &tagqv1.ListQueuesRequest{})
		require.NoError(t, err)
		require.Len(t, l.GetQueues(), 1)
		require.Equal(t, "team-b", l.GetQueues()[0].GetName())
		l, err = d.q.ListQueues(as(e2eAdminKey), &tagqv1.ListQueuesRequest{})
		require.NoError(t, err)
		require.Len(t, l.GetQueues(), 1)
	})
}

// TestE2E_Auth_ClientCertificates: an mTLS client certificate names a
// principal, over gRPC and through the REST gateway; a certificate of no
// principal is refused; the gateway's certificate metadata cannot be
// forged by a gRPC client or a REST header.
func TestE2E_Auth_ClientCertificates(t *testing.T) {
	t.Parallel()
	certs := newCerts(t)
	d := startProc(t, append(certs.TLSArgs(true), "--auth", "--admin-key-file", adminKeyFile(t))...)
	stranger, err := certs.CA.Client("unmapped", "nobody-in-particular")
	require.NoError(t, err)

	conn := func(cert tlsCert) *grpc.ClientConn {
		c, err := grpc.NewClient(d.GRPC, grpc.WithTransportCredentials(tlsCreds(certs.CA.Pool, cert)))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	admin := tagqv1.NewAccessServiceClient(conn(certs.Client.TLS))
	_, err = admin.CreatePrincipal(as(e2eAdminKey), &tagqv1.CreatePrincipalRequest{Principal: &tagqv1.Principal{
		Name: "certified", CertNames: []string{certs.Client.Cert.Subject.CommonName}}})
	require.NoError(t, err)
	_, err = admin.SetPermission(as(e2eAdminKey), &tagqv1.SetPermissionRequest{Grant: &tagqv1.PermissionGrant{
		Principal: "certified", Queue: "cert-*", Permission: tagqv1.Permission_PERMISSION_FULL_CONTROL}})
	require.NoError(t, err)

	// gRPC: the certificate alone authenticates.
	q := tagqv1.NewQueueServiceClient(conn(certs.Client.TLS))
	_, err = q.CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "cert-grpc"}})
	require.NoError(t, err)
	_, err = q.CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "other"}})
	require.Equal(t, codes.PermissionDenied, status.Code(err), "as the principal, with its permissions")
	_, err = tagqv1.NewQueueServiceClient(conn(stranger.TLS)).GetQueue(context.Background(), &tagqv1.GetQueueRequest{Name: "cert-grpc"})
	require.Equal(t, codes.Unauthenticated, status.Code(err), "a certificate of no principal")
	// A gRPC client cannot claim the gateway's certificate metadata.
	forged := metadata.AppendToOutgoingContext(context.Background(), "x-tagq-gateway-cert-name", certs.Client.Cert.Subject.CommonName)
	_, err = tagqv1.NewQueueServiceClient(conn(stranger.TLS)).GetQueue(forged, &tagqv1.GetQueueRequest{Name: "cert-grpc"})
	require.Equal(t, codes.Unauthenticated, status.Code(err))

	// REST: the certificate the HTTP listener verified goes through the gateway.
	hc := httpsClient(certs.CA.Pool, certs.Client.TLS)
	code, out, err := restCall(hc, "POST", "https://"+d.HTTP+"/v1/queues", `{"name": "cert-rest"}`)
	require.NoError(t, err)
	require.Equal(t, 200, code, "%v", out)
	code, _, err = restCall(hc, "GET", "https://"+d.HTTP+"/metrics", "")
	require.NoError(t, err)
	require.Equal(t, 200, code)
	sc := httpsClient(certs.CA.Pool, stranger.TLS)
	code, _, err = restCall(sc, "GET", "https://"+d.HTTP+"/v1/queues/cert-rest", "")
	require.NoError(t, err)
	require.Equal(t, 401, code)
	// Nor can a REST client, by a header the gateway would pass on.
	for _, h := range []string{"Grpc-Metadata-X-Tagq-Gateway-Cert-Name", "X-Tagq-Gateway-Cert-Name"} {
		req, err := http.NewRequest("GET", "https://"+d.HTTP+"/v1/queues/cert-rest", nil)
		require.NoError(t, err)
		req.Header.Set(h, certs.Client.Cert.Subject.CommonName)
		code, _ := doJSON(t, sc, req)
		require.Equal(t, 401, code, h)
	}
	// A bearer key wins over the certificate.
	code, _, err = restCallAuth(sc, "GET", "https://"+d.HTTP+"/v1/queues/cert-rest", e2eAdminKey)
	require.NoError(t, err)
	require.Equal(t, 200, code)
}

type tlsCert = tls.Certificate

func restCallAuth(c *http.Client, method, url, key string) (int, map[string]any, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := decodeJSON(resp)
	return resp.StatusCode, out, err
}

// TestE2E_Auth_LoopbackRule: tagqd refuses a non-loopback address without
// --auth (naming the flag), and serves one with --insecure or --auth.
func TestE2E_Auth_LoopbackRule(t *testing.T) {
	t.Parallel()
	out, err := runTagqd("--grpc-addr", "0.0.0.0:0", "--http-addr", "127.0.0.1:0")
	require.Equal(t, 2, exitCode(err), out)
	require.Contains(t, out, "--grpc-addr 0.0.0.0:0 is not a loopback address")
	require.Contains(t, out, "--insecure")
	out, err = runTagqd("--grpc-addr", "127.0.0.1:0", "--http-addr", ":0")
	require.Equal(t, 2, exitCode(err), out)
	require.Contains(t, out, "--http-addr :0")

	short := filepath.Join(t.TempDir(), "short.key")
	require.NoError(t, os.WriteFile(short, []byte("too short"), 0o600))
	out, err = runTagqd("--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--auth", "--admin-key-file", short)
	require.Equal(t, 1, exitCode(err), out)
	require.Contains(t, out, "--admin-key-file")
	require.Contains(t, out, "at least 32 characters")

	d := startProc(t, "--grpc-addr", "0.0.0.0:0", "--http-addr", "0.0.0.0:0", "--insecure")
	conn, err := grpc.NewClient(d.GRPC, grpc.WithTransportCredentials(insecureCreds()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = tagqv1.NewQueueServiceClient(conn).CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "open"}})
	require.NoError(t, err, "--insecure: no authentication")
	a := startProc(t, "--grpc-addr", "0.0.0.0:0", "--http-addr", "0.0.0.0:0", "--auth", "--admin-key-file", adminKeyFile(t))
	conn2, err := grpc.NewClient(a.GRPC, grpc.WithTransportCredentials(insecureCreds()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn2.Close() })
	_, err = tagqv1.NewQueueServiceClient(conn2).CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "closed"}})
	require.Equal(t, codes.Unauthenticated, status.Code(err))
}

func insecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }

// decodeJSON reads a JSON answer (nil for another content type).
func decodeJSON(resp *http.Response) (map[string]any, error) {
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("%w: %s", err, raw)
		}
	}
	return out, nil
}

// A key revoked while its streams are open: the Publish stream's next
// frame is refused, and the Consume stream, which the client may never
// write to again, ends UNAUTHENTICATED within the refresh interval.
func TestE2E_Auth_RevokedWhileStreaming(t *testing.T) {
	t.Parallel()
	d := startAuth(t, backend{name: "embedded"})
	_, err := d.q.CreateQueue(as(e2eAdminKey), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "live"}})
	require.NoError(t, err)
	key := d.principal(t, "streamer", grant("live", tagqv1.Permission_PERMISSION_SEND_HANDLE))
	ctx, cancel := context.WithTimeout(as(key), 20*time.Second)
	defer cancel()

	p, err := d.m.Publish(ctx)
	require.NoError(t, err)
	entry := []*tagqv1.SendMessageBatchEntry{{Id: "1", Body: []byte("x")}}
	require.NoError(t, p.Send(&tagqv1.PublishRequest{Seq: 1, Queue: "live", Entries: entry}))
	r, err := p.Recv()
	require.NoError(t, err)
	require.Nil(t, r.GetError())
	c, err := d.m.Consume(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: "live"}}))
	got, err := c.Recv()
	require.NoError(t, err)
	require.Len(t, got.GetMessages(), 1)

	_, err = d.a.RevokeKey(as(e2eAdminKey), &tagqv1.RevokeKeyRequest{Principal: "streamer", KeyId: strings.Split(key, "_")[1]})
	require.NoError(t, err)
	revoked := time.Now()

	require.NoError(t, p.Send(&tagqv1.PublishRequest{Seq: 2, Queue: "live", Entries: entry}))
	_, err = p.Recv()
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)

	for {
		_, err := c.Recv()
		if err != nil {
			require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
			break
		}
	}
	// The bound is the refresh interval (1 s); the slack is for a loaded machine.
	require.Less(t, time.Since(revoked), 5*time.Second)
	q, err := d.q.GetQueue(as(e2eAdminKey), &tagqv1.GetQueueRequest{Name: "live"})
	require.NoError(t, err)
	require.EqualValues(t, 1, q.GetQueue().GetState().GetRetainedMessages(), "the refused frame stored nothing")
}
