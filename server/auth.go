package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/status"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// ErrorInfo reasons of refused credentials and permissions (S18).
const (
	ReasonUnauthenticated  = tags.ReasonUnauthenticated
	ReasonPermissionDenied = tags.ReasonPermissionDenied
)

// gatewayCertMD is the metadata key in which the REST gateway passes the
// names of the client certificate the HTTP listener verified. It is
// trusted only on the gateway's in-process connection (gatewayInfo); the
// gateway never forwards a client's header under that name
// (gatewayHeader).
const gatewayCertMD = "x-tagq-gateway-cert-name"

// authn authenticates and authorises calls against the access data.
type authn struct {
	acc   *access.Access
	store tags.Storage
}

type principalKey struct{}

// callerOf is the principal a call was authenticated as (nil with
// authentication off).
func callerOf(ctx context.Context) *access.Principal {
	p, _ := ctx.Value(principalKey{}).(*access.Principal)
	return p
}

func unauthenticated(msg string) error {
	return statusWith(codes.Unauthenticated, ReasonUnauthenticated, msg, "", nil)
}

// denied is PERMISSION_DENIED naming what was missing.
func denied(p *access.Principal, n need) error {
	if n.admin {
		return statusWith(codes.PermissionDenied, ReasonPermissionDenied,
			fmt.Sprintf("principal %q is not an admin: this call needs an admin principal", p.Name), "",
			map[string]string{"principal": p.Name, "permission": "ADMIN"})
	}
	perm := string(access.Needed(n.act))
	md := map[string]string{"principal": p.Name, "permission": perm, "queue": tags.Clip(n.queue, tags.MaxEcho)}
	msg := fmt.Sprintf("principal %q needs %s on queue %q", p.Name, perm, tags.Clip(n.queue, tags.MaxEcho))
	if n.act&(access.ActReceive|access.ActHandle) != 0 && n.tag != "" {
		md["tag"] = tags.Clip(n.tag, tags.MaxEcho)
		msg += fmt.Sprintf(" and tag %q", md["tag"])
	}
	return statusWith(codes.PermissionDenied, ReasonPermissionDenied, msg, "", md)
}

// authenticate finds the caller: a bearer API key in the authorization
// metadata, else a verified client certificate mapped to a principal.
func (a *authn) authenticate(ctx context.Context) (*access.Principal, *access.Snapshot, error) {
	snap, err := a.acc.Current(ctx)
	if err != nil {
		return nil, nil, err
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if name, ok := gatewayPrincipal(ctx, md); ok { // a front that authenticated the caller itself
		if p := snap.Principal(name); p != nil {
			return p, snap, nil
		}
		return nil, nil, unauthenticated(fmt.Sprintf("principal %q does not exist", tags.Clip(name, tags.MaxEcho)))
	}
	if vals := md.Get("authorization"); len(vals) > 0 {
		scheme, token, ok := strings.Cut(vals[0], " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return nil, nil, unauthenticated(`the authorization metadata must be "Bearer <api key>"`)
		}
		p := snap.Authenticate(strings.TrimSpace(token))
		if p == nil {
			return nil, nil, unauthenticated("the API key is not valid: unknown, revoked or mistyped")
		}
		return p, snap, nil
	}
	names := peerCertNames(ctx, md)
	if len(names) > 0 {
		if p := snap.AuthenticateCert(names); p != nil {
			return p, snap, nil
		}
		return nil, nil, unauthenticated(fmt.Sprintf("the client certificate (%s) belongs to no principal", tags.Clip(names[0], tags.MaxEcho)))
	}
	return nil, nil, unauthenticated("no credentials: send the metadata authorization: Bearer <api key>, or a client certificate")
}

// peerCertNames are the names of the caller's verified client
// certificate: from the TLS handshake, or, on the REST gateway's
// connection, those the HTTP listener verified.
func peerCertNames(ctx context.Context, md metadata.MD) []string {
	pr, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	switch info := pr.AuthInfo.(type) {
	case gatewayInfo:
		return md.Get(gatewayCertMD)
	case credentials.TLSInfo:
		if len(info.State.VerifiedChains) > 0 && len(info.State.VerifiedChains[0]) > 0 {
			return certNames(info.State.VerifiedChains[0][0])
		}
	}
	return nil
}

// certNames are the names a client certificate can be mapped by: its
// subject common name, then its DNS, URI and e-mail SANs.
func certNames(c *x509.Certificate) []string {
	var out []string
	if c.Subject.CommonName != "" {
		out = append(out, c.Subject.CommonName)
	}
	out = append(out, c.DNSNames...)
	for _, u := range c.URIs {
		out = append(out, u.String())
	}
	return append(out, c.EmailAddresses...)
}

// check authorises a unary call (or the opening of a stream) by its rule.
func (a *authn) check(ctx context.Context, method string, req any) (context.Context, error) {
	r, ok := methodRules[method]
	if r.open {
		return ctx, nil
	}
	var p *access.Principal
	var snap *access.Snapshot
	if t, ok := ctx.Value(tappedKey{}).(tapped); ok { // authenticated as the call opened
		p, snap = t.p, t.snap
	} else {
		var err error
		if p, snap, err = a.authenticate(ctx); err != nil {
			return ctx, err
		}
	}
	if !ok { // a method no service has (or, failing closed, one without a rule)
		return ctx, statusWith(codes.Unimplemented, codeReasons[codes.Unimplemented], "unknown method "+tags.Clip(method, tags.MaxEcho), "", nil)
	}
	ctx = context.WithValue(ctx, principalKey{}, p)
	if p.Admin {
		return ctx, nil
	}
	var needs []need
	switch {
	case r.admin:
		return ctx, denied(p, need{admin: true})
	case r.selfOr != nil:
		if r.selfOr(req) != p.Name {
			return ctx, denied(p, need{admin: true})
		}
	case r.selfOrNeeds != nil:
		var self bool
		if self, needs = r.selfOrNeeds(req, p.Name); self {
			needs = nil
		}
	case r.needs != nil:
		needs = r.needs(req)
	case r.handles != nil:
		queue, handles := r.handles(req)
		return ctx, a.checkHandles(snap, p, queue, handles)
	}
	for _, n := range needs {
		if n.admin || !snap.Allowed(p, n.queue, n.act, n.tag) {
			return ctx, denied(p, n)
		}
	}
	return ctx, nil
}

// checkHandles: HANDLE on each receipt handle's queue and tag (S3, S18).
// A handle carries no authority, and it names its queue: the permission is
// checked against that queue (and tag, for HANDLE limited to tags) whether
// or not the request names one, so HANDLE on a queue the request names
// never covers a handle of another. A queue named needs HANDLE too (the
// call acts on it). Handles this server did not sign name nothing: the
// engine refuses them (INVALID_RECEIPT_HANDLE).
func (a *authn) checkHandles(snap *access.Snapshot, p *access.Principal, queue string, handles []string) error {
	if queue != "" {
		if perm, _, _ := snap.Effective(p, queue); !perm.Allows(access.ActHandle) {
			return denied(p, need{act: access.ActHandle, queue: queue})
		}
	}
	for _, h := range handles {
		q, t, ok := a.store.HandleTarget(h)
		if ok && !snap.Allowed(p, q, access.ActHandle, t) {
			return denied(p, need{act: access.ActHandle, queue: q, tag: t})
		}
	}
	return nil
}

// unary is the authentication interceptor of unary calls: it runs after
// the access log, metrics and error status (so refusals are logged,
// counted and carry ErrorInfo), before the handler.
func (a *authn) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, err := a.check(ctx, info.FullMethod, req)
	if err != nil {
		return nil, err
	}
	switch info.FullMethod {
	case "/tagq.v1.QueueService/CreateQueue":
		return a.createQueue(ctx, req.(*tagqv1.CreateQueueRequest), func(ctx context.Context) (any, error) { return handler(ctx, req) })
	case "/tagq.v1.QueueService/DeleteQueue":
		resp, err := handler(ctx, req)
		if err == nil {
			err = a.acc.QueueDeleted(ctx, req.(*tagqv1.DeleteQueueRequest).GetName())
		}
		return resp, err
	}
	return handler(ctx, req)
}

// createQueue holds the caller to its queue quota and records it as the
// new queue's creator (its owner, with FULL_CONTROL).
func (a *authn) createQueue(ctx context.Context, req *tagqv1.CreateQueueRequest, create func(context.Context) (any, error)) (any, error) {
	p, name := callerOf(ctx), req.GetQueue().GetName()
	if p == nil || name == "" {
		return create(ctx)
	}
	added, err := a.acc.ReserveQueue(ctx, p, name)
	if err != nil {
		return nil, err
	}
	resp, err := create(ctx)
	if err != nil {
		if added {
			_ = a.acc.ReleaseQueue(context.WithoutCancel(ctx), p, name)
		}
		return nil, err
	}
	if err := a.acc.QueueCreated(context.WithoutCancel(ctx), p, name); err != nil {
		return nil, err
	}
	return resp, nil
}

// stream is the authentication interceptor of streams: the caller is
// authenticated when the stream opens, and Publish and Consume frames are
// checked as they arrive (publishAuth, consumeAuth), their credentials
// included: a key revoked (or a principal deleted) while a stream is open
// refuses its next frame. A Consume stream pushes without frames from the
// client, so it is also checked once per refresh interval and ended
// UNAUTHENTICATED when its credentials no longer hold.
func (a *authn) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, err := a.check(ss.Context(), info.FullMethod, nil)
	if err != nil {
		return err
	}
	p := callerOf(ctx)
	if p == nil { // an open method
		return handler(srv, &ctxStream{ServerStream: ss, ctx: ctx})
	}
	base := streamAuth{ctxStream: ctxStream{ServerStream: ss, ctx: ctx}, a: a, name: p.Name}
	switch info.FullMethod {
	case "/tagq.v1.MessageService/Publish":
		return handler(srv, &publishAuth{streamAuth: base})
	case "/tagq.v1.MessageService/Consume":
		wctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		base.ctx = wctx
		go base.watch(wctx, cancel)
		err := handler(srv, &consumeAuth{streamAuth: base})
		if cause := context.Cause(wctx); status.Code(cause) == codes.Unauthenticated {
			return cause
		}
		return err
	}
	return handler(srv, &base.ctxStream)
}

// ctxStream is a stream with the caller in its context.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// streamAuth is a stream of an authenticated principal.
type streamAuth struct {
	ctxStream
	a    *authn
	name string // the principal it opened as
}

// current authenticates the stream's credentials again (from the cache:
// no Redis round trip) and returns its principal now.
func (s *streamAuth) current() (*access.Principal, *access.Snapshot, error) {
	p, snap, err := s.a.authenticate(s.ctx)
	if err != nil {
		return nil, nil, err
	}
	if p.Name != s.name {
		return nil, nil, unauthenticated("the stream's credentials no longer name its principal")
	}
	return p, snap, nil
}

// watch ends the stream (cancel) once its credentials are refused.
func (s *streamAuth) watch(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(s.a.acc.RefreshInterval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, _, err := s.current(); status.Code(err) == codes.Unauthenticated {
			cancel(err)
			return
		}
	}
}

// publishAuth answers a Publish frame for a queue the caller may not send
// to with PERMISSION_DENIED in the frame's response (the stream goes on, as
// for any frame that fails whole), and hands the handler only the frames
// it may store. A frame after the credentials were revoked ends the stream.
type publishAuth struct {
	streamAuth
	sendMu sync.Mutex // the handler's Send and this one's
}

func (s *publishAuth) SendMsg(m any) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.ServerStream.SendMsg(m)
}

func (s *publishAuth) RecvMsg(m any) error {
	for {
		if err := s.ServerStream.RecvMsg(m); err != nil {
			return err
		}
		p, snap, err := s.current()
		if err != nil {
			return err
		}
		req := m.(*tagqv1.PublishRequest)
		n := need{act: access.ActSend, queue: req.GetQueue()}
		if snap.Allowed(p, n.queue, n.act, "") {
			return nil
		}
		if err := s.SendMsg(&tagqv1.PublishResponse{Seq: req.GetSeq(), Error: toStreamError(denied(p, n))}); err != nil {
			return err
		}
	}
}

// consumeAuth checks a Consume stream's open (RECEIVE on its queue and
// tag) and its settlements (HANDLE): a frame not allowed ends the stream
// with PERMISSION_DENIED.
type consumeAuth struct {
	streamAuth
	opened bool
	queue  string
	tag    string
}

func (s *consumeAuth) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	p, snap, err := s.current()
	if err != nil {
		return err
	}
	req := m.(*tagqv1.ConsumeRequest)
	if !s.opened {
		if req.GetOpen() == nil {
			return nil // the handler refuses a stream that does not open
		}
		s.opened = true
		s.queue, s.tag = req.GetOpen().GetQueue(), req.GetOpen().GetTag()
		if n := (need{act: access.ActReceive, queue: s.queue, tag: s.tag}); !snap.Allowed(p, n.queue, n.act, n.tag) {
			return denied(p, n)
		}
	}
	if len(req.GetAcks())+len(req.GetNacks())+len(req.GetExtends())+len(req.GetDeads()) > 0 {
		if n := (need{act: access.ActHandle, queue: s.queue, tag: s.tag}); !snap.Allowed(p, n.queue, n.act, n.tag) {
			return denied(p, n)
		}
	}
	return nil
}

// httpAuthenticated serves next (/metrics) only to an authenticated
// principal (an admin one when admin): a bearer API key in the
// Authorization header, or a client certificate mapped to a principal.
func (a *authn) httpAuthenticated(mux *runtime.ServeMux, next http.Handler, admin bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.authenticateHTTP(r)
		if err == nil && admin && !p.Admin {
			err = denied(p, need{admin: true})
		}
		if err != nil {
			st := toStatus(err)
			restRefuse(mux, w, r, runtime.HTTPStatusFromCode(status.Code(st)), st)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authenticateHTTP authenticates an HTTP request by its headers (and the
// client certificate the listener verified) alone: REST and Connect calls
// are checked so before a byte of their body is read, and again, with
// their permission, by the gRPC server they are forwarded to.
func (a *authn) authenticateHTTP(r *http.Request) (*access.Principal, error) {
	return a.authenticateHeader(r.Context(), r.Header.Get("Authorization"), gatewayCertNames(r.Context(), r))
}

// authenticateHeader authenticates an HTTP request's Authorization header
// value, else the names of its client certificate (as gatewayCertNames
// gives them; nil: none).
func (a *authn) authenticateHeader(ctx context.Context, authorization string, certNames metadata.MD) (*access.Principal, error) {
	md := metadata.MD{}
	if authorization != "" {
		md.Set("authorization", authorization)
	}
	if certNames != nil {
		md = metadata.Join(md, certNames)
	}
	ctx = metadata.NewIncomingContext(ctx, md)
	ctx = peer.NewContext(ctx, &peer.Peer{AuthInfo: gatewayInfo{}})
	p, _, err := a.authenticate(ctx)
	return p, err
}
