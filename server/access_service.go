package server

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// ReasonAuthDisabled: an AccessService call to a tagqd without --auth.
const ReasonAuthDisabled = tags.ReasonAuthDisabled

// accessService is the AccessService over the access store. Who may call
// what is methodRules' business (the auth interceptor), not this one's.
type accessService struct {
	tagqv1.UnimplementedAccessServiceServer
	acc *access.Access // nil: authentication off
}

func (s *accessService) on() error {
	if s.acc == nil {
		return statusWith(codes.FailedPrecondition, ReasonAuthDisabled, "authentication is off: start tagqd with --auth", "", nil)
	}
	return nil
}

func (s *accessService) CreatePrincipal(ctx context.Context, req *tagqv1.CreatePrincipalRequest) (*tagqv1.CreatePrincipalResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	in := req.GetPrincipal()
	if in == nil {
		return nil, missing("principal")
	}
	p, err := s.acc.CreatePrincipal(ctx, access.Principal{Name: in.GetName(), Admin: in.GetKind() == tagqv1.Principal_KIND_ADMIN,
		CertNames: in.GetCertNames(), MaxQueues: in.MaxQueues})
	if err != nil {
		return nil, withField(err, "principal.")
	}
	return &tagqv1.CreatePrincipalResponse{Principal: toPrincipal(p, 0)}, nil
}

func (s *accessService) GetPrincipal(ctx context.Context, req *tagqv1.GetPrincipalRequest) (*tagqv1.GetPrincipalResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	p, n, err := s.acc.GetPrincipal(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return &tagqv1.GetPrincipalResponse{Principal: toPrincipal(p, n)}, nil
}

func (s *accessService) ListPrincipals(ctx context.Context, _ *tagqv1.ListPrincipalsRequest) (*tagqv1.ListPrincipalsResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	ps, err := s.acc.ListPrincipals(ctx)
	if err != nil {
		return nil, err
	}
	out := &tagqv1.ListPrincipalsResponse{}
	for _, p := range ps {
		out.Principals = append(out.Principals, toPrincipal(p, 0))
	}
	return out, nil
}

func (s *accessService) DeletePrincipal(ctx context.Context, req *tagqv1.DeletePrincipalRequest) (*tagqv1.DeletePrincipalResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	if err := s.acc.DeletePrincipal(ctx, req.GetName()); err != nil {
		return nil, err
	}
	return &tagqv1.DeletePrincipalResponse{}, nil
}

func (s *accessService) IssueKey(ctx context.Context, req *tagqv1.IssueKeyRequest) (*tagqv1.IssueKeyResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	k, token, err := s.acc.IssueKey(ctx, req.GetPrincipal())
	if err != nil {
		return nil, err
	}
	return &tagqv1.IssueKeyResponse{Key: toKey(k), ApiKey: token}, nil
}

func (s *accessService) ListKeys(ctx context.Context, req *tagqv1.ListKeysRequest) (*tagqv1.ListKeysResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	ks, err := s.acc.ListKeys(ctx, req.GetPrincipal())
	if err != nil {
		return nil, err
	}
	out := &tagqv1.ListKeysResponse{}
	for _, k := range ks {
		out.Keys = append(out.Keys, toKey(k))
	}
	return out, nil
}

func (s *accessService) RevokeKey(ctx context.Context, req *tagqv1.RevokeKeyRequest) (*tagqv1.RevokeKeyResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	if err := s.acc.RevokeKey(ctx, req.GetPrincipal(), req.GetKeyId()); err != nil {
		return nil, err
	}
	return &tagqv1.RevokeKeyResponse{}, nil
}

func (s *accessService) SetPermission(ctx context.Context, req *tagqv1.SetPermissionRequest) (*tagqv1.SetPermissionResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	in := req.GetGrant()
	if in == nil {
		return nil, missing("grant")
	}
	g := access.Grant{Principal: in.GetPrincipal(), Queue: in.GetQueue(), Permission: fromPermission(in.GetPermission()), Tags: in.GetTags()}
	if err := s.acc.SetGrant(ctx, g); err != nil {
		return nil, withField(err, "grant.")
	}
	return &tagqv1.SetPermissionResponse{Grant: toGrant(&g)}, nil
}

func (s *accessService) RevokePermission(ctx context.Context, req *tagqv1.RevokePermissionRequest) (*tagqv1.RevokePermissionResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	if err := s.acc.RevokeGrant(ctx, req.GetPrincipal(), req.GetQueue()); err != nil {
		return nil, err
	}
	return &tagqv1.RevokePermissionResponse{}, nil
}

func (s *accessService) GetPermission(ctx context.Context, req *tagqv1.GetPermissionRequest) (*tagqv1.GetPermissionResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	if err := access.CheckQueueName("queue", req.GetQueue()); err != nil {
		return nil, err
	}
	name := req.GetPrincipal()
	if name == "" {
		if p := callerOf(ctx); p != nil {
			name = p.Name
		}
	}
	// Read through the cache, so the answer is what calls are checked
	// against now.
	snap, err := s.acc.Current(ctx)
	if err != nil {
		return nil, err
	}
	p := snap.Principal(name)
	if p == nil {
		name = tags.Clip(name, tags.MaxEcho)
		return nil, statusWith(codes.NotFound, access.ReasonPrincipalNotFound, fmt.Sprintf("principal %q does not exist", name), "",
			map[string]string{"principal": name})
	}
	perm, tagsOnly, source := snap.Effective(p, req.GetQueue())
	return &tagqv1.GetPermissionResponse{Permission: toPermission(perm), Tags: tagsOnly, Source: source, Principal: p.Name}, nil
}

func (s *accessService) ListPermissions(ctx context.Context, req *tagqv1.ListPermissionsRequest) (*tagqv1.ListPermissionsResponse, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	gs, err := s.acc.ListGrants(ctx, req.GetPrincipal(), req.GetQueue())
	if err != nil {
		return nil, err
	}
	out := &tagqv1.ListPermissionsResponse{}
	for _, g := range gs {
		out.Grants = append(out.Grants, toGrant(g))
	}
	return out, nil
}

func toPrincipal(p *access.Principal, created int64) *tagqv1.Principal {
	kind := tagqv1.Principal_KIND_USER
	if p.Admin {
		kind = tagqv1.Principal_KIND_ADMIN
	}
	return &tagqv1.Principal{Name: p.Name, Kind: kind, CertNames: p.CertNames, MaxQueues: p.MaxQueues,
		CreateTime: timestamppb.New(p.CreateTime), CreatedQueues: created}
}

func toKey(k *access.Key) *tagqv1.ApiKey {
	return &tagqv1.ApiKey{KeyId: k.ID, Principal: k.Principal, CreateTime: timestamppb.New(k.CreateTime)}
}

func toGrant(g *access.Grant) *tagqv1.PermissionGrant {
	return &tagqv1.PermissionGrant{Principal: g.Principal, Queue: g.Queue, Permission: toPermission(g.Permission), Tags: g.Tags}
}

// The proto enum's names are the levels' with a PERMISSION_ prefix.
func toPermission(p access.Permission) tagqv1.Permission {
	return tagqv1.Permission(tagqv1.Permission_value["PERMISSION_"+string(p)])
}

func fromPermission(p tagqv1.Permission) access.Permission {
	if p == tagqv1.Permission_PERMISSION_UNSPECIFIED {
		return ""
	}
	lvl, _ := access.ParsePermission(p.String())
	return lvl
}
