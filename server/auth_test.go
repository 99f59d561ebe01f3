package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Every method of every service the server registers (tagq's, health,
// reflection) has an access rule, and the table names no other method.
func TestEveryMethodHasARule(t *testing.T) {
	t.Parallel()
	b := setup(t)
	served := map[string]bool{}
	for svc, info := range b.srv.GRPC().GetServiceInfo() {
		for _, m := range info.Methods {
			name := "/" + svc + "/" + m.Name
			served[name] = true
			_, ok := methodRules[name]
			require.True(t, ok, "%s has no entry in methodRules", name)
		}
	}
	for name := range methodRules {
		require.True(t, served[name], "methodRules names %s, which no service serves", name)
	}
	require.Contains(t, served, "/tagq.v1.AccessService/IssueKey")
	require.Contains(t, served, "/grpc.health.v1.Health/Check")
	require.Contains(t, served, "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
}

// authBundle is a server with authentication on, an admin key and a key
// of a principal "user".
type authBundle struct {
	*testBundle
	acc         *access.Access
	admin, user string // bearer keys
}

const testAdminKey = "a bootstrap admin key for the server's tests"

func setupAuth(t *testing.T) *authBundle {
	t.Helper()
	var acc *access.Access
	b := setupWith(t, func(c *Config, rdb redis.UniversalClient) {
		var err error
		acc, err = access.New(access.Config{Client: rdb})
		require.NoError(t, err)
		c.Access = acc
	})
	ctx := context.Background()
	require.NoError(t, acc.Bootstrap(ctx, testAdminKey))
	_, err := acc.CreatePrincipal(ctx, access.Principal{Name: "user"})
	require.NoError(t, err)
	_, user, err := acc.IssueKey(ctx, "user")
	require.NoError(t, err)
	return &authBundle{testBundle: b, acc: acc, admin: testAdminKey, user: user}
}

func as(key string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+key)
}

func TestAuth_UnaryCalls(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	_, err := b.q.CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	code, ei := info(t, err)
	require.Equal(t, codes.Unauthenticated, code)
	require.Equal(t, ReasonUnauthenticated, ei.GetReason())

	_, err = b.q.CreateQueue(as("tagq_0123456789abcdef_wrongwrongwrongwrongwrongwrongwrongwrongwro"), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	code, _ = info(t, err)
	require.Equal(t, codes.Unauthenticated, code)

	_, err = b.q.CreateQueue(as(b.admin), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)

	_, err = b.m.SendMessage(as(b.user), &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")})
	code, ei = info(t, err)
	require.Equal(t, codes.PermissionDenied, code)
	require.Equal(t, ReasonPermissionDenied, ei.GetReason())
	require.Equal(t, map[string]string{"principal": "user", "permission": "SEND", "queue": "q"}, ei.GetMetadata())

	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: "q", Permission: access.Send}))
	_, err = b.m.SendMessage(as(b.user), &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x")})
	require.NoError(t, err)
	_, err = b.m.ReceiveMessage(as(b.user), &tagqv1.ReceiveMessageRequest{Queue: "q"})
	_, ei = info(t, err)
	require.Equal(t, "RECEIVE", ei.GetMetadata()["permission"])

	// Health needs no credentials.
	_, err = healthpb.NewHealthClient(b.conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	// Any principal lists: the queues it holds a permission on.
	l, err := b.q.ListQueues(as(b.user), &tagqv1.ListQueuesRequest{})
	require.NoError(t, err)
	require.Len(t, l.GetQueues(), 1)
	_, err = b.q.ListQueues(context.Background(), &tagqv1.ListQueuesRequest{})
	code, _ = info(t, err)
	require.Equal(t, codes.Unauthenticated, code)
}

func queueNames(l *tagqv1.ListQueuesResponse) []string {
	var out []string
	for _, q := range l.GetQueues() {
		out = append(out, q.GetName())
	}
	return out
}

// A principal that is not an admin lists the queues it holds a permission
// on (by name, by prefix, as creator), paging through them with tokens of
// its own listing; an admin lists them all.
func TestAuth_ListQueuesPerPrincipal(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	for _, n := range []string{"a-1", "a-2", "b-1", "b-2", "b-3", "c-1", "none-1", "z-1"} {
		_, err := b.q.CreateQueue(as(b.admin), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: n}})
		require.NoError(t, err)
	}
	grants := []access.Grant{
		{Principal: "user", Queue: "a-2", Permission: access.GetInfo},
		{Principal: "user", Queue: "b-*", Permission: access.Send},
		{Principal: "user", Queue: "b-2", Permission: access.None}, // an exact NONE wins over the prefix
		{Principal: "user", Queue: "z-1", Permission: access.Receive, Tags: []string{"t"}},
	}
	for _, g := range grants {
		require.NoError(t, b.acc.SetGrant(b.ctx, g))
	}
	_, err := b.q.CreateQueue(as(b.admin), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "own-1"}})
	require.NoError(t, err)
	require.NoError(t, b.acc.QueueCreated(b.ctx, &access.Principal{Name: "user"}, "own-1")) // as if the user made it

	l, err := b.q.ListQueues(as(b.user), &tagqv1.ListQueuesRequest{})
	require.NoError(t, err)
	require.Equal(t, []string{"a-2", "b-1", "b-3", "own-1", "z-1"}, queueNames(l))
	require.Empty(t, l.GetNextPageToken())

	// Paging: two at a time, the tokens of this principal's listing.
	var got []string
	tok := ""
	for range 10 {
		l, err = b.q.ListQueues(as(b.user), &tagqv1.ListQueuesRequest{PageSize: 2, PageToken: tok})
		require.NoError(t, err)
		require.LessOrEqual(t, len(l.GetQueues()), 2)
		got = append(got, queueNames(l)...)
		if tok = l.GetNextPageToken(); tok == "" {
			break
		}
	}
	require.Equal(t, []string{"a-2", "b-1", "b-3", "own-1", "z-1"}, got)
	l, err = b.q.ListQueues(as(b.user), &tagqv1.ListQueuesRequest{PageSize: 2})
	require.NoError(t, err)
	_, err = b.q.ListQueues(as(b.admin), &tagqv1.ListQueuesRequest{PageSize: 2, PageToken: l.GetNextPageToken()})
	_, ei := info(t, err)
	require.Equal(t, "page_token", ei.GetMetadata()["field"], "a principal's token is not the admin's listing's")

	l, err = b.q.ListQueues(as(b.user), &tagqv1.ListQueuesRequest{Prefix: "b"})
	require.NoError(t, err)
	require.Equal(t, []string{"b-1", "b-3"}, queueNames(l))

	l, err = b.q.ListQueues(as(b.admin), &tagqv1.ListQueuesRequest{})
	require.NoError(t, err)
	require.Len(t, l.GetQueues(), 9)
}

// The gateway's certificate metadata counts only on the gateway's own
// connection: a network client sending it is not authenticated by it.
func TestAuth_GatewayMetadataIgnoredFromNetworkClients(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	_, err := b.acc.CreatePrincipal(b.ctx, access.Principal{Name: "certuser", Admin: true, CertNames: []string{"cert-admin"}})
	require.NoError(t, err)
	ctx := metadata.AppendToOutgoingContext(context.Background(), gatewayCertMD, "cert-admin")
	_, err = b.q.ListQueues(ctx, &tagqv1.ListQueuesRequest{})
	code, _ := info(t, err)
	require.Equal(t, codes.Unauthenticated, code)

	// Over REST, no header becomes that metadata (the e2e test shows it
	// against tagqd, whose gateway connection is a GatewayListener's).
	for _, h := range []string{"Grpc-Metadata-" + gatewayCertMD, "Grpc-Metadata-X-Tagq-Gateway-Cert-Name", "X-Tagq-Gateway-Cert-Name"} {
		md, ok := gatewayHeader(h)
		require.False(t, ok && md != "", "%s became metadata %q", h, md)
	}
	md, ok := gatewayHeader("Grpc-Metadata-Trace")
	require.True(t, ok, "other metadata headers pass as before")
	require.Equal(t, "Trace", md)
}

// Listing permissions: one's own, yes; everyone's, or another's, no.
func TestAuth_ListPermissions(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: "mine", Permission: access.AdminQueue}))
	_, err := b.acc.CreatePrincipal(b.ctx, access.Principal{Name: "other"})
	require.NoError(t, err)
	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "other", Queue: "theirs", Permission: access.Send}))
	require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "other", Queue: "mine", Permission: access.Send}))
	a := tagqv1.NewAccessServiceClient(b.conn)

	own, err := a.ListPermissions(as(b.user), &tagqv1.ListPermissionsRequest{Principal: "user"})
	require.NoError(t, err)
	require.Len(t, own.GetGrants(), 1)
	for _, req := range []*tagqv1.ListPermissionsRequest{{}, {Principal: "other"}, {Queue: "theirs"}, {Queue: "*"}} {
		_, err := a.ListPermissions(as(b.user), req)
		code, _ := info(t, err)
		require.Equal(t, codes.PermissionDenied, code, "%v", req)
	}
	onMine, err := a.ListPermissions(as(b.user), &tagqv1.ListPermissionsRequest{Queue: "mine"})
	require.NoError(t, err, "ADMIN_QUEUE on the queue lists who may use it")
	require.Len(t, onMine.GetGrants(), 2)
	all, err := a.ListPermissions(as(b.admin), &tagqv1.ListPermissionsRequest{})
	require.NoError(t, err)
	require.Len(t, all.GetGrants(), 3)

	// Another's permission on a queue: ADMIN_QUEUE there; one's own: always.
	_, err = a.GetPermission(as(b.user), &tagqv1.GetPermissionRequest{Principal: "other", Queue: "theirs"})
	code, _ := info(t, err)
	require.Equal(t, codes.PermissionDenied, code)
	got, err := a.GetPermission(as(b.user), &tagqv1.GetPermissionRequest{Principal: "other", Queue: "mine"})
	require.NoError(t, err)
	require.Equal(t, tagqv1.Permission_PERMISSION_SEND, got.GetPermission())
	got, err = a.GetPermission(as(b.user), &tagqv1.GetPermissionRequest{Queue: "theirs"})
	require.NoError(t, err)
	require.Equal(t, tagqv1.Permission_PERMISSION_NONE, got.GetPermission())
}

// An unknown method is UNIMPLEMENTED for a principal, UNAUTHENTICATED
// without credentials.
func TestAuth_UnknownMethod(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	err := b.conn.Invoke(context.Background(), "/tagq.v1.QueueService/NoSuchCall", &tagqv1.GetQueueRequest{}, &tagqv1.GetQueueResponse{})
	code, _ := info(t, err)
	require.Equal(t, codes.Unauthenticated, code)
	err = b.conn.Invoke(as(b.user), "/tagq.v1.QueueService/NoSuchCall", &tagqv1.GetQueueRequest{}, &tagqv1.GetQueueResponse{})
	code, _ = info(t, err)
	require.Equal(t, codes.Unimplemented, code)
}

// A key revoked through another tagqd (another Access on the same Redis)
// is refused here once the cache's refresh interval has passed on its
// clock, and not before; one revoked through this tagqd, at once.
func TestAuth_RevocationWithinTheRefreshInterval(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	var here, other *access.Access
	b := setupWith(t, func(c *Config, rdb redis.UniversalClient) {
		var err error
		here, err = access.New(access.Config{Client: rdb, Now: clock})
		require.NoError(t, err)
		other, err = access.New(access.Config{Client: rdb, Now: clock})
		require.NoError(t, err)
		c.Access = here
	})
	_, err := other.CreatePrincipal(b.ctx, access.Principal{Name: "app", Admin: true})
	require.NoError(t, err)
	k1, key1, err := other.IssueKey(b.ctx, "app")
	require.NoError(t, err)
	_, key2, err := other.IssueKey(b.ctx, "app")
	require.NoError(t, err)
	list := func(key string) codes.Code {
		_, err := b.q.ListQueues(as(key), &tagqv1.ListQueuesRequest{})
		return status.Code(err)
	}
	require.Equal(t, codes.OK, list(key1))

	require.NoError(t, other.RevokeKey(b.ctx, "app", k1.ID))
	require.Equal(t, codes.OK, list(key1), "the revocation is not seen here yet")
	advance(access.DefaultRefreshInterval - time.Millisecond)
	require.Equal(t, codes.OK, list(key1))
	advance(time.Millisecond)
	require.Equal(t, codes.Unauthenticated, list(key1), "refused once the interval passed")

	// Through this tagqd's AccessService: at once, no clock needed.
	a := tagqv1.NewAccessServiceClient(b.conn)
	keys, err := a.ListKeys(as(key2), &tagqv1.ListKeysRequest{Principal: "app"})
	require.NoError(t, err)
	require.Len(t, keys.GetKeys(), 1)
	_, err = a.RevokeKey(as(key2), &tagqv1.RevokeKeyRequest{Principal: "app", KeyId: keys.GetKeys()[0].GetKeyId()})
	require.NoError(t, err)
	require.Equal(t, codes.Unauthenticated, list(key2))
}

// Without authentication the AccessService says so.
func TestAuth_AccessServiceNeedsAuth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := tagqv1.NewAccessServiceClient(b.conn).IssueKey(context.Background(), &tagqv1.IssueKeyRequest{Principal: "x"})
	code, ei := info(t, err)
	require.Equal(t, codes.FailedPrecondition, code)
	require.Equal(t, ReasonAuthDisabled, ei.GetReason())
}
