package tagq_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/tagq/tagq/internal/tagqdtest"
)

// addr is a tagqd (embedded store) started for this package's tests.
var addr string

// TestMain runs the tests against a live tagqd and then fails the package
// if any goroutine a test started is still running (a Consumer, Publisher
// or stream that did not stop): goroutines that existed before the tests
// (the harness's) are not counted.
func TestMain(m *testing.M) {
	os.Exit(tagqdtest.Main(func() int {
		before := goleak.IgnoreCurrent()
		code := m.Run()
		if code == 0 {
			if err := goleak.Find(before); err != nil {
				fmt.Fprintf(os.Stderr, "goroutines left running after the tests: %v\n", err)
				return 1
			}
		}
		return code
	}, &addr, nil))
}
