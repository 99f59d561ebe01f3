package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tagq/tagq/gen/connect/tagq/v1/tagqv1connect"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Connect and gRPC-Web. The HTTP listener serves every tagq service at
// /tagq.v1.<Service>/<Method> with connect-go's handlers, which speak the
// Connect protocol (what `buf curl` and connect-web use by default),
// gRPC-Web (browsers, no proxy) and gRPC. Each call is forwarded to this
// server's own gRPC server over the REST gateway's in-process connection,
// so authentication, limits, metrics, tracing and the access log apply
// once, in the gRPC server's interceptors, exactly as for REST calls; the
// gRPC status comes back with its details (ErrorInfo, BadRequest) as
// Connect error details.
//
// What is forwarded of a request besides its message: the Authorization
// header (a bearer API key) and the W3C trace headers (forwardedHeaders),
// the client certificate the HTTP listener verified (as the gateway passes
// it, gatewayCertNames), and the deadline (Connect-Timeout-Ms,
// grpc-timeout). No other header reaches the gRPC server, so no client can
// claim the gateway's certificate metadata.
//
// Streams (Publish, Consume) are bidirectional: over Connect and gRPC they
// need HTTP/2 (TLS, or h2c with prior knowledge on a plaintext listener);
// gRPC-Web has no client streaming, so browsers use the unary methods.

// forwardedHeaders are the request headers a Connect call passes on to the
// gRPC server as metadata.
var forwardedHeaders = []string{"Authorization", "Traceparent", "Tracestate", "Baggage"}

// connectHandlers are the Connect handlers of the tagq services, by path
// prefix, each forwarding over conn (as HTTPHandler's gateway does).
func (s *Server) connectHandlers(conn grpc.ClientConnInterface) map[string]http.Handler {
	f := &forwarder{s: s, q: tagqv1.NewQueueServiceClient(conn), m: tagqv1.NewMessageServiceClient(conn),
		r: tagqv1.NewRedriveServiceClient(conn), a: tagqv1.NewAccessServiceClient(conn)}
	opts := connect.WithHandlerOptions(
		connect.WithCodec(connectCodec{name: "proto"}),
		connect.WithCodec(connectCodec{name: "json", json: true}),
		connect.WithCodec(connectCodec{name: "json; charset=utf-8", json: true}),
		// One message: as large as a REST body may be (its JSON). A
		// request that decodes larger than MaxRequestBytes is refused by
		// the forwarding connection (localConn), with ErrorInfo.
		connect.WithReadMaxBytes(int(restBodyLimit(s.maxRequest))),
		// Credentials and bytes in flight, before the body is read.
		connect.WithRequestGate(s.connectGate),
	)
	out := map[string]http.Handler{}
	for _, h := range []func() (string, http.Handler){
		func() (string, http.Handler) { return tagqv1connect.NewQueueServiceHandler(f, opts) },
		func() (string, http.Handler) { return tagqv1connect.NewMessageServiceHandler(f, opts) },
		func() (string, http.Handler) { return tagqv1connect.NewRedriveServiceHandler(f, opts) },
		func() (string, http.Handler) { return tagqv1connect.NewAccessServiceHandler(f, opts) },
	} {
		path, handler := h()
		out[path] = s.connectGuard(handler)
	}
	return out
}

// streamingProcedures are the paths of the streaming methods.
var streamingProcedures = func() map[string]bool {
	out := map[string]bool{}
	for _, fd := range []protoreflect.FileDescriptor{tagqv1.File_tagq_v1_queue_proto, tagqv1.File_tagq_v1_message_proto,
		tagqv1.File_tagq_v1_redrive_proto, tagqv1.File_tagq_v1_access_proto} {
		for i := 0; i < fd.Services().Len(); i++ {
			svc := fd.Services().Get(i)
			for j := 0; j < svc.Methods().Len(); j++ {
				if m := svc.Methods().Get(j); m.IsStreamingClient() || m.IsStreamingServer() {
					out[fmt.Sprintf("/%s/%s", svc.FullName(), m.Name())] = true
				}
			}
		}
	}
	return out
}()

type connectCertKey struct{}

// connectGuard is what every Connect call passes before its handler: the
// client certificate the HTTP listener verified goes into the context (for
// outgoing and connectGate), a unary call's body is counted in flight
// (connectGate admits it), and the http.Server's timeouts are fitted to
// the call. A unary call's read deadline (ReadTimeout, which bounds slow
// bodies) is lifted once its body is read, as for REST, so a long poll
// outlasts it; a stream is read and written for as long as it lives, so
// neither deadline applies to it (a client that stops reading is held by
// flow control, as on the gRPC listener). A stream's messages are counted
// by the gRPC server it is forwarded to (Publish frames).
func (s *Server) connectGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		ctx := r.Context()
		if md := gatewayCertNames(ctx, r); md != nil {
			ctx = context.WithValue(ctx, connectCertKey{}, md)
		}
		if streamingProcedures[r.URL.Path] {
			_ = rc.SetReadDeadline(time.Time{})
			_ = rc.SetWriteDeadline(time.Time{})
		} else {
			body := s.newBody(r.Body, r.ContentLength, func() { _ = rc.SetReadDeadline(time.Time{}) })
			body.busy = s.connectBusy(ctx)
			defer body.release()
			r.Body = body
			ctx = context.WithValue(ctx, restBodyKey{}, body)
			if m := s.predecodeConnect(r, body); m != nil {
				defer localRequests.forget(m)
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// connectGate runs on a Connect call's headers, before its body is read
// (connect.WithRequestGate): with authentication on, a caller without
// credentials of a principal is refused (the gRPC server checks them again
// with the permission the call needs); a unary call whose body does not
// fit in flight is refused (TOO_MANY_REQUEST_BYTES).
func (s *Server) connectGate(ctx context.Context, _ connect.Spec, _ connect.Peer, h http.Header) (context.Context, error) {
	if s.auth != nil {
		names, _ := ctx.Value(connectCertKey{}).(metadata.MD)
		if _, err := s.auth.authenticateHeader(ctx, h.Get("Authorization"), names); err != nil {
			return ctx, s.connectError(ctx, err)
		}
	}
	if body, ok := ctx.Value(restBodyKey{}).(*restBody); ok && !body.admit() {
		s.refused.WithLabelValues("connect").Inc()
		return ctx, s.connectBusy(ctx)
	}
	return ctx, nil
}

// connectBusy is the Connect error of a call refused for request bytes in
// flight, with a Retry-After header.
func (s *Server) connectBusy(ctx context.Context) error {
	err := s.connectError(ctx, s.inflight.refusal())
	var ce *connect.Error
	if errors.As(err, &ce) {
		ce.Meta().Set("Retry-After", RetryAfterHeader)
	}
	return err
}

// outgoing is ctx with the metadata a Connect call with request headers h
// passes to the gRPC server.
func outgoing(ctx context.Context, h http.Header) context.Context {
	md := metadata.MD{}
	for _, k := range forwardedHeaders {
		if v := h.Values(k); len(v) > 0 {
			md.Append(k, v...)
		}
	}
	if names, ok := ctx.Value(connectCertKey{}).(metadata.MD); ok {
		md = metadata.Join(md, names)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// forward makes a unary Connect call as a gRPC call.
func forward[Req, Res any](ctx context.Context, s *Server, req *connect.Request[Req],
	call func(context.Context, *Req, ...grpc.CallOption) (*Res, error)) (*connect.Response[Res], error) {
	res, err := call(outgoing(ctx, req.Header()), req.Msg)
	if err != nil {
		return nil, s.connectError(ctx, err)
	}
	return connect.NewResponse(res), nil
}

// forwardStream makes a bidirectional Connect stream a gRPC stream: the
// client's messages go up until it closes its side, the server's come
// down until the gRPC call ends, and its status ends the Connect stream.
func forwardStream[Req, Res any](ctx context.Context, s *Server, down *connect.BidiStream[Req, Res],
	open func(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[Req, Res], error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	up, err := open(outgoing(ctx, down.RequestHeader()))
	if err != nil {
		return s.connectError(ctx, err)
	}
	// The request side. It may outlive this call by a moment: Receive
	// returns once connect-go closes the request body, after we return.
	failed := make(chan error, 1) // the client's stream failed (an unreadable message, say)
	go func() {
		for {
			m, err := down.Receive()
			if errors.Is(err, io.EOF) {
				_ = up.CloseSend()
				return
			}
			if err != nil {
				failed <- err
				cancel() // ends the gRPC call: Recv below returns
				return
			}
			if up.Send(m) != nil {
				return // the call has ended: Recv below returns its status
			}
		}
	}()
	for {
		m, err := up.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			select {
			case ferr := <-failed:
				return s.connectError(ctx, clientStreamStatus(ferr))
			default:
			}
			return s.connectError(ctx, err)
		}
		if err := down.Send(m); err != nil {
			return err // the client is gone: nobody reads the status
		}
	}
}

// clientStreamStatus is the status that ends a stream whose request side
// failed with err (connect-go's error reading it).
func clientStreamStatus(err error) error {
	code := codes.Code(connect.CodeOf(err))
	msg := "the request stream failed: " + connectMessage(err)
	if code == codes.InvalidArgument {
		return statusWith(code, ReasonMalformedRequest, msg, "", nil)
	}
	return withErrorInfo(status.New(code, msg), "")
}

func connectMessage(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return err.Error()
}

// connectError is err, a gRPC status, as a Connect error: its code,
// message and details. A status without ErrorInfo gets one as the
// gateway's do (gatewayStatus); a request the forwarding connection
// refused as too large is REQUEST_TOO_LARGE.
func (s *Server) connectError(ctx context.Context, err error) error {
	st := status.Convert(err)
	if st.Code() == codes.ResourceExhausted && errorInfo(st) == nil {
		err = tooLarge(int64(s.maxRequest))
	}
	st = status.Convert(s.gatewayStatus(ctx, err))
	ce := connect.NewError(connect.Code(st.Code()), errors.New(st.Message()))
	for _, d := range st.Proto().GetDetails() {
		if detail, err := connect.NewErrorDetail(d); err == nil {
			ce.AddDetail(detail)
		}
	}
	return ce
}

// connectCodec is connect-go's proto (binary) or JSON codec, except that
// it marks a unary request it cannot read rather than failing, as the
// gRPC server's codec does (requestCodec): the gRPC server then refuses it
// with INVALID_ARGUMENT / MALFORMED_REQUEST and ErrorInfo, where
// connect-go would answer its own decoding error without details.
type connectCodec struct {
	name string
	json bool
}

func (c connectCodec) Name() string { return c.name }

func (c connectCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a protobuf message", v)
	}
	if c.json {
		return protojson.Marshal(m)
	}
	return proto.Marshal(m)
}

func (c connectCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a protobuf message", v)
	}
	marked, err := takeMarked(data, m)
	switch {
	case marked: // decoded by predecodeConnect
	case !c.json:
		if !boundedProto(data, m) { // a repeated field over its limit: not decoded (repeated.go)
			err = proto.Unmarshal(data, m)
		}
	case len(data) == 0:
		err = errors.New("an empty body is not a JSON object")
	case boundedJSON(data, m):
	default:
		// Unknown fields are skipped, as connect-go's codec does (and
		// unlike REST): Connect clients may be built from newer protos.
		err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, m)
	}
	if err != nil {
		return markUnreadable(m, err)
	}
	return nil
}

// forwarder implements the tagq services' Connect handlers by forwarding
// each call to the gRPC server. (A new RPC in the protos fails the build
// here until it is added.)
type forwarder struct {
	s *Server
	q tagqv1.QueueServiceClient
	m tagqv1.MessageServiceClient
	r tagqv1.RedriveServiceClient
	a tagqv1.AccessServiceClient
}

var (
	_ tagqv1connect.QueueServiceHandler   = (*forwarder)(nil)
	_ tagqv1connect.MessageServiceHandler = (*forwarder)(nil)
	_ tagqv1connect.RedriveServiceHandler = (*forwarder)(nil)
	_ tagqv1connect.AccessServiceHandler  = (*forwarder)(nil)
)

// QueueService.

func (f *forwarder) CreateQueue(ctx context.Context, r *connect.Request[tagqv1.CreateQueueRequest]) (*connect.Response[tagqv1.CreateQueueResponse], error) {
	return forward(ctx, f.s, r, f.q.CreateQueue)
}

func (f *forwarder) GetQueue(ctx context.Context, r *connect.Request[tagqv1.GetQueueRequest]) (*connect.Response[tagqv1.GetQueueResponse], error) {
	return forward(ctx, f.s, r, f.q.GetQueue)
}

func (f *forwarder) ListQueues(ctx context.Context, r *connect.Request[tagqv1.ListQueuesRequest]) (*connect.Response[tagqv1.ListQueuesResponse], error) {
	return forward(ctx, f.s, r, f.q.ListQueues)
}

func (f *forwarder) UpdateQueue(ctx context.Context, r *connect.Request[tagqv1.UpdateQueueRequest]) (*connect.Response[tagqv1.UpdateQueueResponse], error) {
	return forward(ctx, f.s, r, f.q.UpdateQueue)
}

func (f *forwarder) DeleteQueue(ctx context.Context, r *connect.Request[tagqv1.DeleteQueueRequest]) (*connect.Response[tagqv1.DeleteQueueResponse], error) {
	return forward(ctx, f.s, r, f.q.DeleteQueue)
}

func (f *forwarder) PurgeQueue(ctx context.Context, r *connect.Request[tagqv1.PurgeQueueRequest]) (*connect.Response[tagqv1.PurgeQueueResponse], error) {
	return forward(ctx, f.s, r, f.q.PurgeQueue)
}

func (f *forwarder) CreateTag(ctx context.Context, r *connect.Request[tagqv1.CreateTagRequest]) (*connect.Response[tagqv1.CreateTagResponse], error) {
	return forward(ctx, f.s, r, f.q.CreateTag)
}

func (f *forwarder) GetTag(ctx context.Context, r *connect.Request[tagqv1.GetTagRequest]) (*connect.Response[tagqv1.GetTagResponse], error) {
	return forward(ctx, f.s, r, f.q.GetTag)
}

func (f *forwarder) ListTags(ctx context.Context, r *connect.Request[tagqv1.ListTagsRequest]) (*connect.Response[tagqv1.ListTagsResponse], error) {
	return forward(ctx, f.s, r, f.q.ListTags)
}

func (f *forwarder) DeleteTag(ctx context.Context, r *connect.Request[tagqv1.DeleteTagRequest]) (*connect.Response[tagqv1.DeleteTagResponse], error) {
	return forward(ctx, f.s, r, f.q.DeleteTag)
}

func (f *forwarder) SeekTag(ctx context.Context, r *connect.Request[tagqv1.SeekTagRequest]) (*connect.Response[tagqv1.SeekTagResponse], error) {
	return forward(ctx, f.s, r, f.q.SeekTag)
}

func (f *forwarder) GetQueueRates(ctx context.Context, r *connect.Request[tagqv1.GetQueueRatesRequest]) (*connect.Response[tagqv1.GetQueueRatesResponse], error) {
	return forward(ctx, f.s, r, f.q.GetQueueRates)
}

// MessageService.

func (f *forwarder) SendMessage(ctx context.Context, r *connect.Request[tagqv1.SendMessageRequest]) (*connect.Response[tagqv1.SendMessageResponse], error) {
	return forward(ctx, f.s, r, f.m.SendMessage)
}

func (f *forwarder) SendMessageBatch(ctx context.Context, r *connect.Request[tagqv1.SendMessageBatchRequest]) (*connect.Response[tagqv1.SendMessageBatchResponse], error) {
	return forward(ctx, f.s, r, f.m.SendMessageBatch)
}

func (f *forwarder) ReceiveMessage(ctx context.Context, r *connect.Request[tagqv1.ReceiveMessageRequest]) (*connect.Response[tagqv1.ReceiveMessageResponse], error) {
	return forward(ctx, f.s, r, f.m.ReceiveMessage)
}

func (f *forwarder) DeleteMessage(ctx context.Context, r *connect.Request[tagqv1.DeleteMessageRequest]) (*connect.Response[tagqv1.DeleteMessageResponse], error) {
	return forward(ctx, f.s, r, f.m.DeleteMessage)
}

func (f *forwarder) DeleteMessageBatch(ctx context.Context, r *connect.Request[tagqv1.DeleteMessageBatchRequest]) (*connect.Response[tagqv1.DeleteMessageBatchResponse], error) {
	return forward(ctx, f.s, r, f.m.DeleteMessageBatch)
}

func (f *forwarder) ChangeMessageVisibility(ctx context.Context, r *connect.Request[tagqv1.ChangeMessageVisibilityRequest]) (*connect.Response[tagqv1.ChangeMessageVisibilityResponse], error) {
	return forward(ctx, f.s, r, f.m.ChangeMessageVisibility)
}

func (f *forwarder) ChangeMessageVisibilityBatch(ctx context.Context, r *connect.Request[tagqv1.ChangeMessageVisibilityBatchRequest]) (*connect.Response[tagqv1.ChangeMessageVisibilityBatchResponse], error) {
	return forward(ctx, f.s, r, f.m.ChangeMessageVisibilityBatch)
}

func (f *forwarder) PeekMessage(ctx context.Context, r *connect.Request[tagqv1.PeekMessageRequest]) (*connect.Response[tagqv1.PeekMessageResponse], error) {
	return forward(ctx, f.s, r, f.m.PeekMessage)
}

func (f *forwarder) DeadMessage(ctx context.Context, r *connect.Request[tagqv1.DeadMessageRequest]) (*connect.Response[tagqv1.DeadMessageResponse], error) {
	return forward(ctx, f.s, r, f.m.DeadMessage)
}

func (f *forwarder) DeadMessageBatch(ctx context.Context, r *connect.Request[tagqv1.DeadMessageBatchRequest]) (*connect.Response[tagqv1.DeadMessageBatchResponse], error) {
	return forward(ctx, f.s, r, f.m.DeadMessageBatch)
}

func (f *forwarder) Publish(ctx context.Context, s *connect.BidiStream[tagqv1.PublishRequest, tagqv1.PublishResponse]) error {
	return forwardStream(ctx, f.s, s, f.m.Publish)
}

func (f *forwarder) Consume(ctx context.Context, s *connect.BidiStream[tagqv1.ConsumeRequest, tagqv1.ConsumeResponse]) error {
	return forwardStream(ctx, f.s, s, f.m.Consume)
}

// RedriveService.

func (f *forwarder) StartMessageMove(ctx context.Context, r *connect.Request[tagqv1.StartMessageMoveRequest]) (*connect.Response[tagqv1.StartMessageMoveResponse], error) {
	return forward(ctx, f.s, r, f.r.StartMessageMove)
}

func (f *forwarder) ListMessageMoves(ctx context.Context, r *connect.Request[tagqv1.ListMessageMovesRequest]) (*connect.Response[tagqv1.ListMessageMovesResponse], error) {
	return forward(ctx, f.s, r, f.r.ListMessageMoves)
}

func (f *forwarder) CancelMessageMove(ctx context.Context, r *connect.Request[tagqv1.CancelMessageMoveRequest]) (*connect.Response[tagqv1.CancelMessageMoveResponse], error) {
	return forward(ctx, f.s, r, f.r.CancelMessageMove)
}

// AccessService.

func (f *forwarder) CreatePrincipal(ctx context.Context, r *connect.Request[tagqv1.CreatePrincipalRequest]) (*connect.Response[tagqv1.CreatePrincipalResponse], error) {
	return forward(ctx, f.s, r, f.a.CreatePrincipal)
}

func (f *forwarder) GetPrincipal(ctx context.Context, r *connect.Request[tagqv1.GetPrincipalRequest]) (*connect.Response[tagqv1.GetPrincipalResponse], error) {
	return forward(ctx, f.s, r, f.a.GetPrincipal)
}

func (f *forwarder) ListPrincipals(ctx context.Context, r *connect.Request[tagqv1.ListPrincipalsRequest]) (*connect.Response[tagqv1.ListPrincipalsResponse], error) {
	return forward(ctx, f.s, r, f.a.ListPrincipals)
}

func (f *forwarder) DeletePrincipal(ctx context.Context, r *connect.Request[tagqv1.DeletePrincipalRequest]) (*connect.Response[tagqv1.DeletePrincipalResponse], error) {
	return forward(ctx, f.s, r, f.a.DeletePrincipal)
}

func (f *forwarder) IssueKey(ctx context.Context, r *connect.Request[tagqv1.IssueKeyRequest]) (*connect.Response[tagqv1.IssueKeyResponse], error) {
	return forward(ctx, f.s, r, f.a.IssueKey)
}

func (f *forwarder) ListKeys(ctx context.Context, r *connect.Request[tagqv1.ListKeysRequest]) (*connect.Response[tagqv1.ListKeysResponse], error) {
	return forward(ctx, f.s, r, f.a.ListKeys)
}

func (f *forwarder) RevokeKey(ctx context.Context, r *connect.Request[tagqv1.RevokeKeyRequest]) (*connect.Response[tagqv1.RevokeKeyResponse], error) {
	return forward(ctx, f.s, r, f.a.RevokeKey)
}

func (f *forwarder) SetPermission(ctx context.Context, r *connect.Request[tagqv1.SetPermissionRequest]) (*connect.Response[tagqv1.SetPermissionResponse], error) {
	return forward(ctx, f.s, r, f.a.SetPermission)
}

func (f *forwarder) RevokePermission(ctx context.Context, r *connect.Request[tagqv1.RevokePermissionRequest]) (*connect.Response[tagqv1.RevokePermissionResponse], error) {
	return forward(ctx, f.s, r, f.a.RevokePermission)
}

func (f *forwarder) GetPermission(ctx context.Context, r *connect.Request[tagqv1.GetPermissionRequest]) (*connect.Response[tagqv1.GetPermissionResponse], error) {
	return forward(ctx, f.s, r, f.a.GetPermission)
}

func (f *forwarder) ListPermissions(ctx context.Context, r *connect.Request[tagqv1.ListPermissionsRequest]) (*connect.Response[tagqv1.ListPermissionsResponse], error) {
	return forward(ctx, f.s, r, f.a.ListPermissions)
}
