package access

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/rediserr"
)

// Snapshot is the access data at one version: what a call is checked
// against, with no Redis round trip. It is read-only once made.
type Snapshot struct {
	version    int64
	principals map[string]*Principal
	keys       map[string]*Key
	certs      map[string]*Principal // certificate name -> principal
	grants     map[string][]*Grant   // principal -> grants, exact names first, then longest prefix first
	owners     map[string]string     // queue -> creator
	// verified: key id -> the secret that last matched its hash, so a key
	// in use costs a constant-time comparison, not a SHA-256, per call.
	// Only secrets that matched are kept (a wrong one cannot fill it); a
	// new snapshot starts empty, so a revoked key leaves with it.
	verified sync.Map
}

// Current is the access data, refreshed from Redis when it is older than
// Config.RefreshInterval: one GET of the version, and a full read only when
// it moved. One call refreshes at a time; the others go on with the data
// they have for up to a second interval, then wait for it. When Redis
// cannot be read and the data is older than two intervals, Current fails
// (UNAVAILABLE) rather than decide on data that may have been revoked.
func (a *Access) Current(ctx context.Context) (*Snapshot, error) {
	s := a.snap.Load()
	now := a.now().UnixNano()
	age := now - a.checked.Load()
	if s != nil && age < int64(a.ttl) {
		return s, nil
	}
	if !a.mu.TryLock() {
		if s != nil && age < 2*int64(a.ttl) {
			return s, nil
		}
		a.mu.Lock()
	}
	defer a.mu.Unlock()
	if s = a.snap.Load(); s != nil && a.now().UnixNano()-a.checked.Load() < int64(a.ttl) {
		return s, nil // refreshed while this call waited
	}
	started, gen := a.now().UnixNano(), a.changes.Load()
	fresh, err := a.load(ctx, s)
	if err != nil {
		if s != nil && a.now().UnixNano()-a.checked.Load() < 2*int64(a.ttl) {
			return s, nil
		}
		return nil, rediserr.StorageError(err)
	}
	a.snap.Store(fresh)
	a.checked.Store(started)
	if a.changes.Load() != gen {
		a.checked.Store(0) // a change made here while this read: read again
	}
	return fresh, nil
}

// invalidate makes the next Current read Redis: after a change made here.
func (a *Access) invalidate() {
	a.changes.Add(1)
	a.checked.Store(0)
}

// load reads the version and, when it differs from old's, everything.
func (a *Access) load(ctx context.Context, old *Snapshot) (*Snapshot, error) {
	if old != nil {
		v, err := a.rdb.Get(ctx, a.k.version).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, err
		}
		if v == old.version {
			return old, nil
		}
	}
	var ver *redis.StringCmd
	var ps, ks, gs, os *redis.MapStringStringCmd
	if _, err := a.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
		ver = tx.Get(ctx, a.k.version)
		ps = tx.HGetAll(ctx, a.k.principals)
		ks = tx.HGetAll(ctx, a.k.apiKeys)
		gs = tx.HGetAll(ctx, a.k.grants)
		os = tx.HGetAll(ctx, a.k.owners)
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	s := &Snapshot{principals: map[string]*Principal{}, keys: map[string]*Key{}, certs: map[string]*Principal{},
		grants: map[string][]*Grant{}, owners: os.Val()}
	s.version, _ = strconv.ParseInt(ver.Val(), 10, 64)
	for _, raw := range ps.Val() {
		var p Principal
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			return nil, err
		}
		s.principals[p.Name] = &p
		for _, n := range p.CertNames {
			s.certs[n] = &p
		}
	}
	for _, raw := range ks.Val() {
		var k Key
		if err := json.Unmarshal([]byte(raw), &k); err != nil {
			return nil, err
		}
		s.keys[k.ID] = &k
	}
	for _, raw := range gs.Val() {
		var g Grant
		if err := json.Unmarshal([]byte(raw), &g); err != nil {
			return nil, err
		}
		s.grants[g.Principal] = append(s.grants[g.Principal], &g)
	}
	for _, gs := range s.grants {
		sort.Slice(gs, func(i, j int) bool { return moreSpecific(gs[i].Queue, gs[j].Queue) })
	}
	return s, nil
}

// moreSpecific orders grants as they are matched: exact names first, then
// prefixes, longest first.
func moreSpecific(a, b string) bool {
	pa, pb := strings.HasSuffix(a, "*"), strings.HasSuffix(b, "*")
	if pa != pb {
		return !pa
	}
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a < b
}

// Authenticate returns the principal a bearer token names, or nil when it
// names none (unknown, revoked, wrong secret). The secret is compared in
// constant time.
func (s *Snapshot) Authenticate(token string) *Principal {
	id, secret, ok := parseToken(token)
	if !ok {
		id, secret = bootstrapKey, token
	}
	k := s.keys[id]
	if k == nil {
		return nil
	}
	if v, ok := s.verified.Load(id); ok && sameSecret(v.(string), secret) {
		return s.principals[k.Principal]
	}
	if !matches(secret, k.Hash) {
		return nil
	}
	s.verified.Store(id, secret)
	return s.principals[k.Principal]
}

// AuthenticateCert returns the principal one of a verified client
// certificate's names (subject CN, SANs) maps to, or nil.
func (s *Snapshot) AuthenticateCert(names []string) *Principal {
	for _, n := range names {
		if p := s.certs[n]; p != nil {
			return s.principals[p.Name]
		}
	}
	return nil
}

// Principal is the named principal, or nil.
func (s *Snapshot) Principal(name string) *Principal { return s.principals[name] }

// Effective is what principal p may do on queue: its level, the receive
// tags it is limited to (nil: any), and where that came from ("admin",
// "owner", or the matching grant's queue or prefix; "" when nothing
// matched and the level is NONE).
func (s *Snapshot) Effective(p *Principal, queue string) (Permission, []string, string) {
	if p == nil {
		return None, nil, ""
	}
	if p.Admin {
		return FullControl, nil, "admin"
	}
	if s.owners[queue] == p.Name {
		return FullControl, nil, "owner"
	}
	for _, g := range s.grants[p.Name] {
		if g.Queue == queue || strings.HasSuffix(g.Queue, "*") && strings.HasPrefix(queue, g.Queue[:len(g.Queue)-1]) {
			return g.Permission, g.Tags, g.Queue
		}
	}
	return None, nil, ""
}

// Allowed reports whether p may do act on queue; for ActReceive and
// ActHandle, tag is the tag read (a grant limited to tags allows only
// those; "" is the queue's default tag, which such a grant must name).
func (s *Snapshot) Allowed(p *Principal, queue string, act Action, tag string) bool {
	perm, tagsOnly, _ := s.Effective(p, queue)
	if !perm.Allows(act) {
		return false
	}
	if tagsOnly == nil || act&(ActReceive|ActHandle) == 0 {
		return true
	}
	for _, t := range tagsOnly {
		if t == tag {
			return true
		}
	}
	return false
}
