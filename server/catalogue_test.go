package server

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/tagq/tagq/tags"
)

// TestMain holds every status the server's tests make to the error
// catalogue (proto/tagq/v1/errors.yaml): a reason it does not list, or a
// code it does not give that reason, fails the package.
func TestMain(m *testing.M) {
	allowed := catalogueCodes()
	var mu sync.Mutex
	bad := map[string]bool{}
	catalogueCheck = func(code codes.Code, reason string) {
		if !allowed[reason][code] {
			mu.Lock()
			bad[fmt.Sprintf("%s with %s", reason, codeReasons[code])] = true
			mu.Unlock()
		}
	}
	status := m.Run()
	if len(bad) > 0 {
		var list []string
		for b := range bad {
			list = append(list, b)
		}
		sort.Strings(list)
		fmt.Fprintf(os.Stderr, "statuses the error catalogue (proto/tagq/v1/errors.yaml) does not allow: %v\n", list)
		status = 1
	}
	os.Exit(status)
}

// catalogueCodes is, per reason, the codes the catalogue gives it.
func catalogueCodes() map[string]map[codes.Code]bool {
	byName := map[string]codes.Code{}
	for c, name := range codeReasons {
		byName[name] = c
	}
	out := map[string]map[codes.Code]bool{}
	for _, r := range tags.Reasons {
		out[r.Reason] = map[codes.Code]bool{}
		for _, name := range r.Codes {
			c, ok := byName[name]
			if !ok {
				panic("catalogue: unknown code " + name)
			}
			out[r.Reason][c] = true
		}
	}
	for _, name := range tags.CodeReasons {
		if out[name] == nil {
			out[name] = map[codes.Code]bool{}
		}
		out[name][byName[name]] = true
	}
	return out
}

// The check itself: a reason outside the catalogue, or with another code,
// is refused.
func TestCatalogue_AllowsWhatItListsOnly(t *testing.T) {
	c := catalogueCodes()
	if !c[tags.ReasonQueueNotFound][codes.NotFound] || c[tags.ReasonQueueNotFound][codes.Internal] {
		t.Fatal("QUEUE_NOT_FOUND is NOT_FOUND only")
	}
	if !c[tags.ReasonRedriveCycle][codes.InvalidArgument] || !c[tags.ReasonRedriveCycle][codes.FailedPrecondition] {
		t.Fatal("REDRIVE_CYCLE comes with two codes")
	}
	if c["NOT_IN_THE_CATALOGUE"] != nil {
		t.Fatal("an unknown reason is allowed")
	}
	if !c["CANCELLED"][codes.Canceled] {
		t.Fatal("code reasons are allowed with their code")
	}
}
