package access

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags"
)

// Config configures an Access.
type Config struct {
	// Client reaches the Redis the queues live in. Required.
	Client redis.UniversalClient
	// Prefix starts every key, as the store's. Default "tagq".
	Prefix string
	// RefreshInterval is how old the cached access data may get before a
	// call checks Redis for a change (one GET per interval per process). A
	// change made through another process (a revoked key, a new grant)
	// takes effect here within RefreshInterval, or at worst twice that
	// while a refresh is in progress; one made through this process at
	// once. Default 1s.
	RefreshInterval time.Duration
	// DefaultMaxQueues is how many queues a principal with no max_queues
	// of its own may create. Default 100.
	DefaultMaxQueues int32
	// Now is the clock of the cache's age; tests drive it. Default
	// time.Now.
	Now func() time.Time
	// Acks, installed on Client, makes every change wait until that many
	// Redis replicas have it (S20). Nil: changes are acknowledged once the
	// master has them.
	Acks *durable.Acks
}

// DefaultRefreshInterval is the default Config.RefreshInterval.
const DefaultRefreshInterval = time.Second

// Access is the store of principals, API keys and permissions, with an
// in-process cache of all of it. It is safe for concurrent use.
type Access struct {
	rdb       redis.UniversalClient
	k         keys
	ttl       time.Duration
	maxQueues int32
	now       func() time.Time
	acks      *durable.Acks

	snap    atomic.Pointer[Snapshot]
	checked atomic.Int64 // Now() in unix ns when snap was last known current; 0: check at once
	changes atomic.Int64 // changes made through this process (invalidate)
	mu      sync.Mutex   // one refresh at a time
}

// New makes an Access. It touches Redis only when first used.
func New(cfg Config) (*Access, error) {
	if cfg.Client == nil {
		return nil, errors.New("access: Config.Client is required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "tagq"
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.DefaultMaxQueues <= 0 {
		cfg.DefaultMaxQueues = 100
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Access{rdb: cfg.Client, k: newKeys(cfg.Prefix), ttl: cfg.RefreshInterval, maxQueues: cfg.DefaultMaxQueues, now: cfg.Now,
		acks: cfg.Acks}, nil
}

// txPipelined runs fn's commands as a transaction, acknowledged once
// Config.Acks's replicas have it (a transaction cannot carry its WAIT
// through the hook the other changes go through).
func (a *Access) txPipelined(ctx context.Context, fn func(redis.Pipeliner) error) error {
	if a.acks.Replicas() > 0 {
		_, err := a.acks.TxPipelined(ctx, a.k.version, fn)
		return err
	}
	_, err := a.rdb.TxPipelined(ctx, fn)
	return err
}

// RefreshInterval is Config.RefreshInterval: how stale the cached data
// may get.
func (a *Access) RefreshInterval() time.Duration { return a.ttl }

// Principal is an identity that calls tagq: a user (its permissions are
// grants per queue) or an admin (everything, the AccessService included).
type Principal struct {
	Name  string `json:"name"`
	Admin bool   `json:"admin,omitempty"`
	// CertNames are the client-certificate names (subject CN, or a DNS,
	// URI or e-mail SAN) that authenticate as this principal over mTLS.
	CertNames []string `json:"cert_names,omitempty"`
	// MaxQueues caps the queues it may create; nil: Config.DefaultMaxQueues.
	// Admins have no cap.
	MaxQueues  *int32    `json:"max_queues,omitempty"`
	CreateTime time.Time `json:"create_time"`
}

// Key is an API key as stored: never its secret.
type Key struct {
	ID         string    `json:"id"`
	Principal  string    `json:"principal"`
	Hash       []byte    `json:"hash"`
	CreateTime time.Time `json:"create_time"`
}

// Grant is a principal's level on a queue (Queue is a name) or on every
// queue whose name starts with a prefix (Queue is "<prefix>*"; "*" alone is
// every queue). Tags, when set, limit receiving (and handling what was
// received) to those tags.
type Grant struct {
	Principal  string     `json:"principal"`
	Queue      string     `json:"queue"`
	Permission Permission `json:"permission"`
	Tags       []string   `json:"tags,omitempty"`
}

// ErrorInfo reasons of the AccessService.
const (
	ReasonPrincipalNotFound      = tags.ReasonPrincipalNotFound
	ReasonPrincipalAlreadyExists = tags.ReasonPrincipalAlreadyExists
	ReasonKeyNotFound            = tags.ReasonKeyNotFound
	ReasonPermissionNotFound     = tags.ReasonPermissionNotFound
	ReasonInvalidPermission      = tags.ReasonInvalidPermission
	ReasonQuotaExceeded          = tags.ReasonQuotaExceeded
)

var (
	nameRe    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	patternRe = regexp.MustCompile(`^([A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{0,79}\*)$`)
)

func invalid(reason, field, format string, args ...any) error {
	return &tags.Error{Kind: tags.KindInvalidArgument, Reason: reason, Field: field, Message: fmt.Sprintf(format, args...)}
}

func notFound(reason, format string, args ...any) error {
	return &tags.Error{Kind: tags.KindNotFound, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

func checkName(field, s string) error {
	if !nameRe.MatchString(s) {
		return invalid(tags.ReasonInvalidName, field, "%s must be 1-80 characters of [A-Za-z0-9_-], got %q", field, tags.Clip(s, tags.MaxEcho))
	}
	return nil
}

// CheckQueueName validates a queue name.
func CheckQueueName(field, s string) error { return checkName(field, s) }

// CheckQueuePattern validates a grant's queue: a name, or a prefix and "*".
func CheckQueuePattern(field, s string) error {
	if !patternRe.MatchString(s) {
		return invalid(tags.ReasonInvalidName, field,
			"%s must be a queue name or a prefix ending in * (e.g. orders-*), got %q", field, tags.Clip(s, tags.MaxEcho))
	}
	return nil
}

// CreatePrincipal stores a new principal.
func (a *Access) CreatePrincipal(ctx context.Context, p Principal) (*Principal, error) {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	if err := checkName("name", p.Name); err != nil {
		return nil, err
	}
	for i, n := range p.CertNames {
		if n == "" || len(n) > 256 {
			return nil, invalid(tags.ReasonInvalidName, fmt.Sprintf("cert_names[%d]", i), "a certificate name has 1-256 bytes")
		}
	}
	if p.MaxQueues != nil && *p.MaxQueues < 0 {
		return nil, invalid(tags.ReasonInvalidArgumentRange, "max_queues", "max_queues must not be negative")
	}
	p.CreateTime = a.now().UTC().Truncate(time.Millisecond)
	raw, _ := json.Marshal(p)
	var added *redis.BoolCmd
	if err := a.txPipelined(ctx, func(tx redis.Pipeliner) error {
		added = tx.HSetNX(ctx, a.k.principals, p.Name, raw)
		tx.Incr(ctx, a.k.version)
		return nil
	}); err != nil {
		return nil, rediserr.StorageError(err)
	}
	a.invalidate()
	if !added.Val() {
		return nil, &tags.Error{Kind: tags.KindAlreadyExists, Reason: ReasonPrincipalAlreadyExists,
			Message: fmt.Sprintf("principal %q exists", p.Name), Metadata: map[string]string{"principal": p.Name}}
	}
	return &p, nil
}

// GetPrincipal reads a principal from Redis (not the cache) and the number
// of queues it created.
func (a *Access) GetPrincipal(ctx context.Context, name string) (*Principal, int64, error) {
	if err := checkName("name", name); err != nil {
		return nil, 0, err
	}
	var get *redis.StringCmd
	var n *redis.IntCmd
	_, err := a.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
		get = tx.HGet(ctx, a.k.principals, name)
		n = tx.SCard(ctx, a.k.created(name))
		return nil
	})
	if errors.Is(err, redis.Nil) || errors.Is(get.Err(), redis.Nil) {
		return nil, 0, principalNotFound(name)
	}
	if err != nil {
		return nil, 0, rediserr.StorageError(err)
	}
	var p Principal
	if err := json.Unmarshal([]byte(get.Val()), &p); err != nil {
		return nil, 0, rediserr.StorageError(err)
	}
	return &p, n.Val(), nil
}

func principalNotFound(name string) error {
	e := notFound(ReasonPrincipalNotFound, "principal %q does not exist", tags.Clip(name, tags.MaxEcho)).(*tags.Error)
	e.Metadata = map[string]string{"principal": tags.Clip(name, tags.MaxEcho)}
	return e
}

// ListPrincipals lists every principal by name.
func (a *Access) ListPrincipals(ctx context.Context) ([]*Principal, error) {
	out, err := hashValues(ctx, a, a.k.principals, func(*Principal) bool { return true })
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// hashValues decodes the JSON values of a hash, keeping those keep takes.
func hashValues[T any](ctx context.Context, a *Access, hash string, keep func(*T) bool) ([]*T, error) {
	all, err := a.rdb.HGetAll(ctx, hash).Result()
	if err != nil {
		return nil, rediserr.StorageError(err)
	}
	var out []*T
	for _, raw := range all {
		v := new(T)
		if err := json.Unmarshal([]byte(raw), v); err != nil {
			return nil, rediserr.StorageError(err)
		}
		if keep(v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// DeletePrincipal removes a principal with its keys, grants and queue
// ownerships (the queues stay).
func (a *Access) DeletePrincipal(ctx context.Context, name string) error {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	if err := checkName("name", name); err != nil {
		return err
	}
	n, err := scripts.deletePrincipal.Run(ctx, a.rdb, []string{a.k.principals, a.k.apiKeys, a.k.grants, a.k.owners,
		a.k.created(name), a.k.version}, name).Int()
	if err != nil {
		return rediserr.StorageError(err)
	}
	a.invalidate()
	if n == 0 {
		return principalNotFound(name)
	}
	return nil
}

// IssueKey makes a new API key for a principal and returns it with the
// bearer token, which exists nowhere else: only its hash is stored.
func (a *Access) IssueKey(ctx context.Context, principal string) (*Key, string, error) {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	if err := checkName("principal", principal); err != nil {
		return nil, "", err
	}
	id, token, err := newToken()
	if err != nil {
		return nil, "", err
	}
	_, secret, _ := parseToken(token)
	k := Key{ID: id, Principal: principal, Hash: hashSecret(secret), CreateTime: a.now().UTC().Truncate(time.Millisecond)}
	if err := a.setIf(ctx, principal, a.k.apiKeys, id, k); err != nil {
		return nil, "", err
	}
	return &k, token, nil
}

// setIf sets field of hash to v's JSON if principal exists.
func (a *Access) setIf(ctx context.Context, principal, hash, field string, v any) error {
	raw, _ := json.Marshal(v)
	n, err := scripts.setIfPrincipal.Run(ctx, a.rdb, []string{a.k.principals, hash, a.k.version}, principal, field, raw).Int()
	if err != nil {
		return rediserr.StorageError(err)
	}
	a.invalidate()
	if n == 0 {
		return principalNotFound(principal)
	}
	return nil
}

// ListKeys lists a principal's keys (ids and times, never secrets).
func (a *Access) ListKeys(ctx context.Context, principal string) ([]*Key, error) {
	if _, _, err := a.GetPrincipal(ctx, principal); err != nil {
		return nil, err
	}
	out, err := hashValues(ctx, a, a.k.apiKeys, func(k *Key) bool { return k.Principal == principal })
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreateTime.Before(out[j].CreateTime) })
	return out, nil
}

// RevokeKey deletes a principal's key: calls with it are refused from the
// next refresh on (at once on this process).
func (a *Access) RevokeKey(ctx context.Context, principal, id string) error {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	n, err := scripts.revokeKey.Run(ctx, a.rdb, []string{a.k.apiKeys, a.k.version}, id, principal).Int()
	if err != nil {
		return rediserr.StorageError(err)
	}
	a.invalidate()
	if n == 0 {
		return notFound(ReasonKeyNotFound, "principal %q has no key %q", tags.Clip(principal, tags.MaxEcho), tags.Clip(id, tags.MaxEcho))
	}
	return nil
}

// SetGrant sets principal's level on a queue or prefix, replacing the one
// it had there.
func (a *Access) SetGrant(ctx context.Context, g Grant) error {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	if err := checkName("principal", g.Principal); err != nil {
		return err
	}
	if err := CheckQueuePattern("queue", g.Queue); err != nil {
		return err
	}
	if !g.Permission.Valid() {
		return invalid(ReasonInvalidPermission, "permission", "permission %q is not one of %v", tags.Clip(string(g.Permission), tags.MaxEcho), Levels)
	}
	for i, t := range g.Tags {
		if err := checkName(fmt.Sprintf("tags[%d]", i), t); err != nil {
			return err
		}
	}
	return a.setIf(ctx, g.Principal, a.k.grants, grantField(g.Principal, g.Queue), g)
}

// RevokeGrant removes principal's grant on exactly that queue or prefix.
func (a *Access) RevokeGrant(ctx context.Context, principal, queue string) error {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	n, err := scripts.revokeGrant.Run(ctx, a.rdb, []string{a.k.grants, a.k.version}, grantField(principal, queue)).Int()
	if err != nil {
		return rediserr.StorageError(err)
	}
	a.invalidate()
	if n == 0 {
		return notFound(ReasonPermissionNotFound, "principal %q has no permission on %q", tags.Clip(principal, tags.MaxEcho), tags.Clip(queue, tags.MaxEcho))
	}
	return nil
}

// ListGrants lists grants, of one principal and/or on one queue pattern
// when given ("" matches all), by principal then queue.
func (a *Access) ListGrants(ctx context.Context, principal, queue string) ([]*Grant, error) {
	out, err := hashValues(ctx, a, a.k.grants, func(g *Grant) bool {
		return (principal == "" || g.Principal == principal) && (queue == "" || g.Queue == queue)
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Principal != out[j].Principal {
			return out[i].Principal < out[j].Principal
		}
		return out[i].Queue < out[j].Queue
	})
	return out, nil
}

// Bootstrap makes sure the principal "admin" exists as an admin and that
// token (the operator's bootstrap key) authenticates as it, replacing an
// earlier bootstrap key.
func (a *Access) Bootstrap(ctx context.Context, token string) error {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	if len(token) < MinBootstrapKey || strings.TrimSpace(token) != token {
		return fmt.Errorf("the bootstrap admin key must have at least %d characters and no surrounding spaces", MinBootstrapKey)
	}
	p := Principal{Name: AdminPrincipal, Admin: true, CreateTime: a.now().UTC().Truncate(time.Millisecond)}
	praw, _ := json.Marshal(p)
	k := Key{ID: bootstrapKey, Principal: AdminPrincipal, Hash: hashSecret(token), CreateTime: p.CreateTime}
	kraw, _ := json.Marshal(k)
	if err := scripts.bootstrap.Run(ctx, a.rdb, []string{a.k.principals, a.k.apiKeys, a.k.version},
		AdminPrincipal, praw, bootstrapKey, kraw).Err(); err != nil {
		return rediserr.StorageError(err)
	}
	a.invalidate()
	return nil
}

// AdminPrincipal is the principal the bootstrap key authenticates as.
const AdminPrincipal = "admin"

// ReserveQueue counts queue against principal's quota before it creates
// it: QUOTA_EXCEEDED (RESOURCE_EXHAUSTED) when the principal has created
// its maximum. added says whether the queue was newly counted: call
// ReleaseQueue if the create then fails and added is true.
func (a *Access) ReserveQueue(ctx context.Context, p *Principal, queue string) (added bool, err error) {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	if p.Admin {
		return false, nil
	}
	max := a.maxQueues
	if p.MaxQueues != nil {
		max = *p.MaxQueues
	}
	n, err := scripts.reserveQueue.Run(ctx, a.rdb, []string{a.k.created(p.Name)}, queue, max).Int()
	if err != nil {
		return false, rediserr.StorageError(err)
	}
	if n < 0 {
		return false, &tags.Error{Kind: tags.KindResourceExhausted, Reason: ReasonQuotaExceeded,
			Message:  fmt.Sprintf("principal %q has created its maximum of %d queues", p.Name, max),
			Metadata: map[string]string{"principal": p.Name, "limit": fmt.Sprint(max), "quota": "max_queues"}}
	}
	return n == 1, nil
}

// ReleaseQueue undoes ReserveQueue after a create that failed.
func (a *Access) ReleaseQueue(ctx context.Context, p *Principal, queue string) error {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	if err := a.rdb.SRem(ctx, a.k.created(p.Name), queue).Err(); err != nil {
		return rediserr.StorageError(err)
	}
	return nil
}

// QueueCreated records principal as the creator (owner) of queue.
func (a *Access) QueueCreated(ctx context.Context, p *Principal, queue string) error {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	err := a.txPipelined(ctx, func(tx redis.Pipeliner) error {
		tx.HSet(ctx, a.k.owners, queue, p.Name)
		tx.SAdd(ctx, a.k.created(p.Name), queue) // admins too: the count is reported
		tx.Incr(ctx, a.k.version)
		return nil
	})
	a.invalidate()
	if err != nil {
		return rediserr.StorageError(err)
	}
	return nil
}

// QueueDeleted forgets queue's owner, and its place in the owner's quota.
func (a *Access) QueueDeleted(ctx context.Context, queue string) error {
	ctx = durable.Mark(ctx) // S20: acknowledged once replicated (where the client has the hook)
	owner, err := a.rdb.HGet(ctx, a.k.owners, queue).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return rediserr.StorageError(err)
	}
	err = a.txPipelined(ctx, func(tx redis.Pipeliner) error {
		tx.HDel(ctx, a.k.owners, queue)
		tx.SRem(ctx, a.k.created(owner), queue)
		tx.Incr(ctx, a.k.version)
		return nil
	})
	a.invalidate()
	if err != nil {
		return rediserr.StorageError(err)
	}
	return nil
}
