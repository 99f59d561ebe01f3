package jsonlimit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// batch is the shape of a batch request: at most 3 entries, each with at
// most 2 attributes.
func batch() *Shape {
	attrs := &Shape{Name: "attributes", Max: 2}
	entry := &Shape{Fields: map[string]*Shape{"attributes": attrs}}
	entries := &Shape{Name: "entries", Max: 3, Elem: entry}
	return &Shape{Fields: map[string]*Shape{"entries": entries, "queue": nil}}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`{"entries":[{},{},{}]}`:                              "",
		`{"entries":[{},{},{},{}]}`:                           "entries",
		` { "entries" : [ {} , {} , {} , {} ] } `:             "entries",
		`{"entries":[]}`:                                      "",
		`{"entries":null}`:                                    "",
		`{"queue":"q","other":[1,2,3,4,5]}`:                   "", // not bounded
		`{"entries":[{"attributes":{"a":{},"b":{}}}]}`:        "",
		`{"entries":[{},{"attributes":{"a":1,"b":2,"c":3}}]}`: "entries[1].attributes",
		`{"entr\u0069es":[1,2,3,4]}`:                          "entries", // an escaped key is the same member
		`{"entries":["]]]",",,,","\"","\\"]}`:                 "entries", // brackets and commas in strings are not items
		`{"entries":["]]]",",,,","\""]}`:                      "",
		`{"entries":[[1,2,3,4,5],[],{}]}`:                     "",        // items' insides are not entries
		`{"entries":[1,2,3,4`:                                 "entries", // found before the syntax error
		`{"entries":[1 2]}`:                                   "",
		`[{},{},{},{}]`:                                       "",
		`"entries"`:                                           "",
		``:                                                    "",
	} {
		v := Check([]byte(doc), batch())
		if want == "" {
			require.Nil(t, v, doc)
			continue
		}
		require.NotNil(t, v, doc)
		require.Equal(t, want, v.Path, doc)
	}
}

// A document of a hundred thousand empty entries is refused at the
// fourth, without walking the rest.
func TestCheck_StopsAtTheBound(t *testing.T) {
	doc := []byte(`{"entries":[` + strings.Repeat(`{},`, 100000) + `{}]}`)
	s := batch()
	var v *Violation
	allocs := testing.AllocsPerRun(10, func() { v = Check(doc, s) })
	require.NotNil(t, v)
	require.Equal(t, "entries", v.Path)
	require.LessOrEqual(t, allocs, 2.0)
}

// Nesting deeper than MaxDepth is skipped, not followed (no stack
// overflow on a million brackets).
func TestCheck_Deep(t *testing.T) {
	t.Parallel()
	any := &Shape{Max: 2}
	any.Elem, any.Other = any, any
	doc := strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000)
	require.Nil(t, Check([]byte(doc), any))
	require.NotNil(t, Check([]byte(`[[1,2,3]]`), any))
}

// FuzzCheck: on any valid JSON, a shape bounding every container at 3
// finds a violation exactly when a decoded container (within MaxDepth)
// holds more than 3 elements; on any input, Check returns.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,3,4]}`, `[[],[{}],{"x":"]"}]`, `{"a":{"b":{"c":1,"d":2,"e":3,"f":4}}}`, `"\\"`, `1`, `[1,2,`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		every := &Shape{Max: 3}
		every.Elem, every.Other = every, every
		v := Check([]byte(doc), every)
		if !json.Valid([]byte(doc)) {
			return
		}
		dec := json.NewDecoder(strings.NewReader(doc))
		over, err := overThree(dec, 0)
		if err != nil {
			return // valid, but json.Decoder's tokens disagree (more than one value)
		}
		if over != (v != nil) {
			t.Fatalf("%q: a container over 3: %v; Check found %v", doc, over, v)
		}
	})
}

// overThree reads one value from dec and reports whether a container in
// it (within MaxDepth) holds more than 3 items or members (duplicate keys
// count: a decoder may build each).
func overThree(dec *json.Decoder, depth int) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return false, nil
	}
	over, n := false, 0
	for dec.More() {
		if d == '{' {
			if _, err := dec.Token(); err != nil { // the key
				return false, err
			}
		}
		n++
		sub, err := overThree(dec, depth+1)
		if err != nil {
			return false, err
		}
		over = over || sub
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return false, err
	}
	return over || depth < MaxDepth && n > 3, nil
}
