package server

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// A front on the gateway's in-process connection, or calling in process
// (InProcess; the SQS endpoint), names the principal it authenticated;
// the server takes that name there only, and applies its permissions.
func TestAuth_GatewayPrincipal(t *testing.T) {
	t.Parallel()
	b := setupAuth(t)
	for i, front := range []grpc.ClientConnInterface{dialGateway(t, b.srv), b.srv.InProcess()} {
		gw := tagqv1.NewMessageServiceClient(front)
		q := fmt.Sprintf("q%d", i)
		_, err := b.q.CreateQueue(as(b.admin), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: q}})
		require.NoError(t, err)

		send := &tagqv1.SendMessageRequest{Queue: q, Body: []byte("x")}
		_, err = gw.SendMessage(context.Background(), send)
		code, _ := info(t, err)
		require.Equal(t, codes.Unauthenticated, code, "%d: no principal named", i)
		_, err = gw.SendMessage(AsPrincipal(context.Background(), "user"), send)
		code, ei := info(t, err)
		require.Equal(t, codes.PermissionDenied, code, "%d: authenticated as user, who may not send", i)
		require.Equal(t, "user", ei.GetMetadata()["principal"])
		require.NoError(t, b.acc.SetGrant(b.ctx, access.Grant{Principal: "user", Queue: q, Permission: access.Send}))
		_, err = gw.SendMessage(AsPrincipal(context.Background(), "user"), send)
		require.NoError(t, err, "%d", i)

		_, err = gw.SendMessage(AsPrincipal(context.Background(), "nobody"), send)
		code, _ = info(t, err)
		require.Equal(t, codes.Unauthenticated, code, "%d: a principal that does not exist", i)
	}
	require.Contains(t, b.logs.String(), "msg=rpc method=/tagq.v1.MessageService/SendMessage code=PermissionDenied")

	// From a network client (setupWith's connection is no gateway's) the
	// name counts for nothing.
	_, err := b.m.SendMessage(AsPrincipal(context.Background(), admin), &tagqv1.SendMessageRequest{Queue: "q0", Body: []byte("x")})
	code, _ := info(t, err)
	require.Equal(t, codes.Unauthenticated, code)

	// No REST header becomes it.
	for _, h := range []string{"Grpc-Metadata-" + gatewayPrincipalMD, "Grpc-Metadata-X-Tagq-Gateway-Principal", "X-Tagq-Gateway-Principal"} {
		md, ok := gatewayHeader(h)
		require.False(t, ok && md != "", "%s became metadata %q", h, md)
	}
}

const admin = access.AdminPrincipal

// dialGateway is a connection to srv on a GatewayListener, as the REST
// gateway's own: its calls are a gateway peer's.
func dialGateway(t *testing.T, srv *Server) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.GRPC().Serve(GatewayListener(lis)) }()
	conn, err := grpc.NewClient("passthrough:///gateway",
		append(srv.GatewayDialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// The SQS endpoint's mark (AsSQSEndpoint) lets a send carry the
// attributes reserved for it (AWS.SQS.) on a gateway front only, over the
// gateway's connection and in process alike; without the mark, or from a
// network client with it, such a send is refused with RESERVED_ATTRIBUTE
// naming the attribute, a batch's entry too; no REST header becomes it.
func TestSQSEndpoint_MarkTrustedOnGatewayFrontsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
	require.NoError(t, err)
	typed := map[string]*tagqv1.MessageAttribute{"AWS.SQS.DataTypes": {Value: &tagqv1.MessageAttribute_StringValue{StringValue: "n=Number"}}}
	send := &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("x"), Attributes: typed}
	batch := &tagqv1.SendMessageBatchRequest{Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{{Id: "a", Body: []byte("x"), Attributes: typed}}}
	for i, front := range []grpc.ClientConnInterface{dialGateway(t, b.srv), b.srv.InProcess()} {
		m := tagqv1.NewMessageServiceClient(front)
		_, err := m.SendMessage(AsSQSEndpoint(b.ctx), send)
		require.NoError(t, err, "%d: the endpoint's send", i)
		res, err := m.SendMessageBatch(AsSQSEndpoint(b.ctx), batch)
		require.NoError(t, err, "%d", i)
		require.Empty(t, res.GetFailed(), "%d", i)

		_, err = m.SendMessage(b.ctx, send)
		_, ei := info(t, err)
		require.Equal(t, tags.ReasonReservedAttribute, ei.GetReason(), "%d: unmarked", i)
		require.Equal(t, "attributes[AWS.SQS.DataTypes]", ei.GetMetadata()["field"])
	}
	_, err = b.m.SendMessage(AsSQSEndpoint(b.ctx), send)
	_, ei := info(t, err)
	require.Equal(t, tags.ReasonReservedAttribute, ei.GetReason(), "a network client's mark counts for nothing")
	res, err := b.m.SendMessageBatch(AsSQSEndpoint(b.ctx), batch)
	require.NoError(t, err)
	require.Len(t, res.GetFailed(), 1)
	require.Equal(t, tags.ReasonReservedAttribute, res.GetFailed()[0].GetReason())
	for _, h := range []string{"Grpc-Metadata-" + gatewaySQSMD, "Grpc-Metadata-X-Tagq-Gateway-Sqs", "X-Tagq-Gateway-Sqs"} {
		md, ok := gatewayHeader(h)
		require.False(t, ok && md != "", "%s became metadata %q", h, md)
	}
}
