package tagq_test

import (
	"os"
	"testing"

	"github.com/tagq/tagq/internal/tagqdtest"
)

// addr is a tagqd (embedded store) started for this package's tests.
var addr string

func TestMain(m *testing.M) { os.Exit(tagqdtest.Main(m.Run, &addr, nil)) }
