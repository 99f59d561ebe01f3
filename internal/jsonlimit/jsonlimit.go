// Package jsonlimit bounds the arrays and objects of a JSON document
// before it is decoded. A decoder builds an element for every item of an
// array and every member of an object it decodes (a struct, a map entry,
// a slice element), often many times the bytes the item took: a batch of
// empty entries, [{},{},…], costs two bytes an entry on the wire and a
// hundred and more once decoded. Check walks the document's bytes (no
// value is built; strings are skipped with bytes.IndexByte) and stops at
// the first array or object over the element count its Shape allows, so
// a caller can refuse the document before decoding it.
//
// What Check does not judge: a document that is not JSON, or is nested
// deeper than MaxDepth, is passed (nil) for the decoder to refuse or
// take; a Shape bounds only the containers it names.
package jsonlimit

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Shape bounds a JSON value (an array or object) and, through Fields and
// Elem, the values inside it.
type Shape struct {
	// Name is the value's name in a Violation's path ("entries").
	Name string
	// Max is the most elements (items of an array, members of an
	// object) the value may hold; 0: no bound.
	Max int
	// Fields are the shapes of an object's members by key, when the
	// object is a record (a protobuf message, a struct). A member not in
	// Fields gets Other.
	Fields map[string]*Shape
	// Other is the shape of a record's members not in Fields (nil: not
	// looked into).
	Other *Shape
	// Elem is the shape of each item of an array, and of each member's
	// value of an object that is a map (Fields nil).
	Elem *Shape
	// Tag is the caller's, for the error it makes of a Violation.
	Tag any
}

// Violation is the first container found over its Shape's Max.
type Violation struct {
	Shape *Shape
	// Path names the container: the names of the shapes on the way, an
	// array's items by index ("entries[3].attributes"; a map's members
	// are not named).
	Path string
}

// MaxDepth is the deepest nesting Check looks into; below it, values
// are skipped (no decoder of a bounded shape builds anything that deep).
const MaxDepth = 64

// Check walks data against s and returns the first array or object
// holding more elements than its shape's Max, or nil: none does, or data
// is not JSON (which the decoder then refuses).
func Check(data []byte, s *Shape) *Violation {
	if s == nil {
		return nil
	}
	w := walker{data: data}
	w.space()
	v, _ := w.value(s, 0)
	return v
}

type walker struct {
	data []byte
	i    int
}

func (w *walker) space() {
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// next is the byte at the walker, or 0 at the end.
func (w *walker) next() byte {
	if w.i < len(w.data) {
		return w.data[w.i]
	}
	return 0
}

// value walks one value at the walker against s (nil: skipped). ok false:
// the document is not JSON (or a violation was found).
func (w *walker) value(s *Shape, depth int) (v *Violation, ok bool) {
	if s == nil || depth >= MaxDepth {
		return nil, w.skip()
	}
	switch w.next() {
	case '[':
		return w.array(s, depth)
	case '{':
		return w.object(s, depth)
	}
	return nil, w.skip()
}

func (w *walker) array(s *Shape, depth int) (*Violation, bool) {
	if w.empty(']') {
		return nil, true
	}
	for n := 0; ; n++ {
		if s.Max > 0 && n >= s.Max {
			return &Violation{Shape: s, Path: s.Name}, false
		}
		w.space()
		if v, ok := w.value(s.Elem, depth+1); !ok {
			if v != nil {
				v.Path = joinPath(s.Name+"["+strconv.Itoa(n)+"]", v.Path)
			}
			return v, false
		}
		if more, ok := w.more(']'); !more {
			return nil, ok
		}
	}
}

// empty moves past a container's start and, when nothing but space comes
// before its end, past that too (true).
func (w *walker) empty(end byte) bool {
	w.i++
	w.space()
	if w.next() == end {
		w.i++
		return true
	}
	return false
}

// more moves past what follows an element: a comma (more true) or the
// container's end (more false); ok false: neither, not JSON.
func (w *walker) more(end byte) (more, ok bool) {
	w.space()
	switch w.next() {
	case ',':
		w.i++
		return true, true
	case end:
		w.i++
		return false, true
	}
	return false, false
}

func (w *walker) object(s *Shape, depth int) (*Violation, bool) {
	if w.empty('}') {
		return nil, true
	}
	for n := 0; ; n++ {
		if s.Max > 0 && n >= s.Max {
			return &Violation{Shape: s, Path: s.Name}, false
		}
		w.space()
		if w.next() != '"' {
			return nil, false
		}
		start := w.i
		if !w.skipString() {
			return nil, false
		}
		child := s.Elem
		if s.Fields != nil {
			child = s.Other
			if f, ok := s.Fields[string(w.data[start+1:w.i-1])]; ok {
				child = f
			} else if bytes.IndexByte(w.data[start+1:w.i-1], '\\') >= 0 {
				// An escaped key names the same member as its plain form.
				var key string
				if json.Unmarshal(w.data[start:w.i], &key) == nil {
					if f, ok := s.Fields[key]; ok {
						child = f
					}
				}
			}
		}
		w.space()
		if w.next() != ':' {
			return nil, false
		}
		w.i++
		w.space()
		if v, ok := w.value(child, depth+1); !ok {
			if v != nil {
				v.Path = joinPath(s.Name, v.Path)
			}
			return v, false
		}
		if more, ok := w.more('}'); !more {
			return nil, ok
		}
	}
}

func joinPath(outer, inner string) string {
	switch {
	case outer == "":
		return inner
	case inner == "":
		return outer
	case inner[0] == '[':
		return outer + inner
	}
	return outer + "." + inner
}

// skipString moves past the string at the walker (at its quote).
func (w *walker) skipString() bool {
	from := w.i + 1
	for {
		j := bytes.IndexByte(w.data[from:], '"')
		if j < 0 {
			w.i = len(w.data)
			return false
		}
		end := from + j
		// The quote ends the string unless an odd run of backslashes
		// escapes it (each backslash looked at once: from moves past it).
		k := end - 1
		for k > w.i && w.data[k] == '\\' {
			k--
		}
		if (end-1-k)%2 == 0 {
			w.i = end + 1
			return true
		}
		from = end + 1
	}
}

// skip moves past one value of any nesting, looking at nothing in it.
func (w *walker) skip() bool {
	depth := 0
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case '"':
			if !w.skipString() {
				return false
			}
		case '[', '{':
			depth++
			w.i++
		case ']', '}':
			if depth == 0 {
				return false
			}
			depth--
			w.i++
		default:
			if depth > 0 { // commas, colons, numbers, literals, spaces
				w.i++
				continue
			}
			start := w.i // a number or a literal, up to a delimiter
			for w.i < len(w.data) && !delimiter(w.data[w.i]) {
				w.i++
			}
			return w.i > start
		}
		if depth == 0 {
			return true
		}
	}
	return false
}

func delimiter(c byte) bool {
	switch c {
	case ',', ':', ']', '}', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
