package access

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// BenchmarkCheck is what authenticating and authorising one call costs a
// tagqd with authentication on: the cached snapshot, the key's SHA-256 and
// the grant lookup (no Redis round trip). go test -run - -bench Check ./access/
func BenchmarkCheck(b *testing.B) {
	m := miniredis.RunT(b)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	a, err := New(Config{Client: rdb})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.CreatePrincipal(ctx, Principal{Name: "app"}); err != nil {
		b.Fatal(err)
	}
	for _, g := range []Grant{{Principal: "app", Queue: "orders-*", Permission: SendHandle},
		{Principal: "app", Queue: "orders-secret", Permission: None}, {Principal: "app", Queue: "jobs", Permission: Handle}} {
		if err := a.SetGrant(ctx, g); err != nil {
			b.Fatal(err)
		}
	}
	_, token, err := a.IssueKey(ctx, "app")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s, err := a.Current(ctx)
			if err != nil {
				b.Fatal(err)
			}
			p := s.Authenticate(token)
			if p == nil || !s.Allowed(p, "orders-eu", ActSend, "") {
				b.Fatal("refused")
			}
		}
	})
}
