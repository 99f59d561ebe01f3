package server

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/proto"

	"github.com/tagq/tagq/tags"
)

// In-process calls. A front in tagqd's own process (the SQS endpoint)
// calls tagq's unary methods through InProcess: the call runs the
// method's handler through the very interceptor chain and stats handlers
// (tracing) the gRPC server runs it through (Server.unary, Server.stats:
// one definition for both), so it passes the same authentication,
// permissions, errors, metrics, access log and spans; what it skips is
// gRPC's wire: encoding the request, HTTP/2 framing over the in-process
// connection, decoding it, and the same for the answer. The request and
// the answer go by reference, as the gateway's requests do (localcodec.go).
//
// The call is seen by the server as one from the gateway's connection
// (peer gatewayInfo, address "tagqd-inprocess"), so a front may name the
// principal it authenticated (AsPrincipal), and the request bytes in
// flight are left to the front to count (InFlight); the caller's
// outgoing metadata is the call's incoming metadata; the caller's context
// (deadline, cancellation) is the call's, cancelled when the call
// returns, as a gRPC call's is. There is no transport stream: a handler
// setting gRPC headers or trailers (none does) would fail.

// methodHandler is a unary method as its service registered it.
type methodHandler struct {
	impl    any
	handler grpc.MethodHandler
}

// keepMethods keeps the unary methods of a tagq service registered with
// the gRPC server (desc, impl: as registered), for InProcess.
func (s *Server) keepMethods(desc *grpc.ServiceDesc, impl any) {
	for _, m := range desc.Methods {
		s.methods["/"+desc.ServiceName+"/"+m.MethodName] = methodHandler{impl: impl, handler: m.Handler}
	}
}

// chainUnary makes one interceptor of ints, outermost first, as
// grpc.ChainUnaryInterceptor does.
func chainUnary(ints []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return ints[0](ctx, req, info, chainedHandler(ints, 0, info, handler))
	}
}

func chainedHandler(ints []grpc.UnaryServerInterceptor, i int, info *grpc.UnaryServerInfo, final grpc.UnaryHandler) grpc.UnaryHandler {
	if i == len(ints)-1 {
		return final
	}
	return func(ctx context.Context, req any) (any, error) {
		return ints[i+1](ctx, req, info, chainedHandler(ints, i+1, info, final))
	}
}

// InProcess is a connection to this server's tagq services for fronts in
// this process (see above): unary methods only (NewStream fails).
func (s *Server) InProcess() grpc.ClientConnInterface { return inProcessConn{s} }

type inProcessConn struct{ s *Server }

// inProcessPeer is the peer of in-process calls: the gateway's kind.
var inProcessPeer = &peer.Peer{Addr: inProcessAddr{}, LocalAddr: inProcessAddr{},
	AuthInfo: gatewayInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}}

type inProcessAddr struct{}

func (inProcessAddr) Network() string { return "inprocess" }
func (inProcessAddr) String() string  { return "tagqd-inprocess" }

// errNotThisMessage is a request of another type than its method's.
var errNotThisMessage = errors.New("the request is not of its method's message type")

func (c inProcessConn) Invoke(ctx context.Context, method string, req, reply any, _ ...grpc.CallOption) (err error) {
	s := c.s
	mh, ok := s.methods[method]
	if !ok {
		return statusWith(codes.Unimplemented, codeReasons[codes.Unimplemented], "unknown method "+tags.Clip(method, tags.MaxEcho), "", nil)
	}
	in, ok := req.(proto.Message)
	if !ok {
		return statusWith(codes.Internal, codeReasons[codes.Internal], "in-process call of "+method+": the request is not a protobuf message", "", nil)
	}
	// As the gateway's connection refuses a request over MaxRequestBytes
	// (localConn).
	if proto.Size(in) > s.maxRequest {
		return tooLarge(int64(s.maxRequest))
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(metadata.NewIncomingContext(peer.NewContext(ctx, inProcessPeer), md), nil))
	defer cancel()
	var begin time.Time
	if len(s.stats) > 0 {
		begin = time.Now()
		for _, sh := range s.stats {
			ctx = sh.TagRPC(ctx, &stats.RPCTagInfo{FullMethodName: method})
			sh.HandleRPC(ctx, &stats.InHeader{FullMethod: method, RemoteAddr: inProcessPeer.Addr, LocalAddr: inProcessPeer.LocalAddr, Header: md})
			sh.HandleRPC(ctx, &stats.Begin{BeginTime: begin})
		}
		defer func() {
			end := &stats.End{BeginTime: begin, EndTime: time.Now(), Error: err}
			for _, sh := range s.stats {
				sh.HandleRPC(ctx, end)
			}
		}()
	}
	// The method's own handler, with a decoder that leaves its new message
	// be and an interceptor that hands the chain the caller's request
	// instead (no copy): the handler's type assertion takes it, as it was
	// checked to be of the method's type.
	dec := func(v any) error {
		if m, ok := v.(proto.Message); !ok || m.ProtoReflect().Descriptor() != in.ProtoReflect().Descriptor() {
			return errNotThisMessage
		}
		return nil
	}
	resp, err := mh.handler(mh.impl, ctx, dec, func(ctx context.Context, _ any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return s.unary(ctx, req, info, handler)
	})
	if errors.Is(err, errNotThisMessage) {
		return statusWith(codes.Internal, codeReasons[codes.Internal], "in-process call of "+method+": "+err.Error(), "", nil)
	}
	if err != nil {
		return err
	}
	out, ok := reply.(proto.Message)
	res, isMsg := resp.(proto.Message)
	if !ok || !isMsg || out.ProtoReflect().Descriptor() != res.ProtoReflect().Descriptor() {
		return statusWith(codes.Internal, codeReasons[codes.Internal], "in-process call of "+method+": the answer is not of the reply's type", "", nil)
	}
	moveFields(out.ProtoReflect(), res.ProtoReflect())
	return nil
}

func (inProcessConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, statusWith(codes.Unimplemented, codeReasons[codes.Unimplemented], "in-process calls are unary only", "", nil)
}
