package redisstore

import (
	"strings"
	"testing"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/receipt"
)

// Fuzz targets (go test -run='^$' -fuzz='^FuzzX$' -fuzztime=15s
// ./tags/redisstore; .ci/run runs each for a bounded time). Their seeds
// run with the tests.

// FuzzPageAfter: a page token is refused (INVALID_ARGUMENT naming
// page_token, without echoing it) or is exactly the token tagq issues for
// that list and a valid name: no forgery, no second spelling.
func FuzzPageAfter(f *testing.F) {
	s := &Store{handles: receipt.NewCodec(keyA)}
	for _, list := range []string{"queues?prefix=", "tags?queue=q"} {
		f.Add(list, s.PageToken(list, "q1"))
		f.Add(list, s.PageToken(list, strings.Repeat("n", 80)))
		f.Add(list, s.PageToken("other", "q1"))
	}
	f.Add("queues?prefix=", "AQ")
	f.Add("queues?prefix=", "q1")
	f.Fuzz(func(t *testing.T, list, token string) {
		name, err := s.PageAfter(list, token)
		if err != nil {
			e, ok := tags.AsError(err)
			if !ok || e.Kind != tags.KindInvalidArgument || e.Field != "page_token" || (len(token) > 8 && strings.Contains(e.Message, token)) {
				t.Fatalf("token %q refused as %v", token, err)
			}
			return
		}
		if token == "" {
			if name != "" {
				t.Fatalf("no token gave %q", name)
			}
			return
		}
		if !tags.ValidName(name) || s.PageToken(list, name) != token {
			t.Fatalf("accepted %q for list %q as %q, which tagq issues as %q", token, list, name, s.PageToken(list, name))
		}
	})
}
