package sqs

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// exampleT is a test's stand-in for examples, which have none: a failure
// panics (the example fails), cleanups run at stop.
type exampleT struct{ cleanups []func() }

func (e *exampleT) Helper()                           {}
func (e *exampleT) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleT) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleT) Logf(string, ...any)               {}
func (e *exampleT) FailNow()                          { panic("example setup failed") }

// SQSEndpoint starts an endpoint in front of a whole tagq server (as the
// tests' setup) for the examples, and returns its URL and a stop.
func SQSEndpoint() (string, func()) {
	t := &exampleT{}
	b := setup(t, false)
	return b.srv.URL, func() {
		for i := len(t.cleanups) - 1; i >= 0; i-- {
			t.cleanups[i]()
		}
	}
}

// The README's aws-sdk-go-v2 snippet is the example's code, but for the
// endpoint's address.
func TestReadmeGoSnippet(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	sec := string(raw)[strings.Index(string(raw), "\n## SQS compatibility"):]
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(sec)
	require.NotNil(t, m, "the SQS section has a go block")
	example, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	snippet := strings.ReplaceAll(m[1], `aws.String("http://localhost:9324")`, "aws.String(endpoint)")
	require.Contains(t, norm(string(example)), norm(snippet))
}
