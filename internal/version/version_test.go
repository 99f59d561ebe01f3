package version

import (
	"regexp"
	"testing"
)

// A build that recorded its commit names it; one that recorded none says
// why it cannot, in the same shape.
func TestInfo_String(t *testing.T) {
	for _, tc := range []struct {
		info Info
		want string
	}{
		{Info{Version: "v1.2.3", Revision: "0123abc", GoVersion: "go1.26.0"}, "v1.2.3 (revision 0123abc, go1.26.0)"},
		{Info{Version: "dev", Revision: "unknown", GoVersion: "go1.26.0"},
			"dev (revision unknown: no VCS stamp (go run or -buildvcs=false or no git checkout), go1.26.0)"},
	} {
		if got := tc.info.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	// This test binary was built without a stamp or with one: either way
	// the line has the shape both commands print.
	if got := Get().String(); !regexp.MustCompile(`^\S+ \(revision [^,]+, go\S+\)$`).MatchString(got) {
		t.Errorf("Get().String() = %q", got)
	}
}
