// Package streamid reads and writes Redis stream ids ("ms-seq"), which
// tagq's message ids are, and which receipt handles and wake-ups carry.
package streamid

import (
	"strconv"
	"strings"
)

// Parse splits id into its milliseconds and sequence number (ok false:
// not an id).
func Parse(id string) (ms, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}

// Format is the id of ms and seq.
func Format(ms, seq uint64) string {
	return strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq, 10)
}

// After says whether id a comes after id b in a stream.
func After(a, b string) bool {
	am, as, _ := Parse(a)
	bm, bs, _ := Parse(b)
	return am > bm || (am == bm && as > bs)
}
