package tags

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets (go test -run='^$' -fuzz='^FuzzX$' -fuzztime=15s ./tags;
// .ci/run runs each for a bounded time). Their seeds run with the tests.

// The rules of the API, written out independently of the regexps: 1-max
// bytes of A-Z a-z 0-9 _ - and the bytes of extra.
func fuzzCharsOK(s string, max int, extra string) bool {
	if len(s) < 1 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' ||
			strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

func fuzzNameOK(s string) bool     { return fuzzCharsOK(s, 80, "") }
func fuzzAttrNameOK(s string) bool { return fuzzCharsOK(s, 256, ".") }

// maxErrorText bounds an error's message and field however long the
// input: echoes are clipped (MaxEcho bytes, at most 4 bytes of %q each).
const maxErrorText = 4*MaxEcho + 200

func fuzzCheckRefusal(t *testing.T, what string, e *Error, reason, field string) {
	t.Helper()
	if e.Kind != KindInvalidArgument || e.Reason != reason {
		t.Fatalf("%s: refused as %v/%s, want INVALID_ARGUMENT/%s", what, e.Kind, e.Reason, reason)
	}
	if field != "" && e.Field != field {
		t.Fatalf("%s: field %q, want %q", what, e.Field, field)
	}
	if len(e.Message) > maxErrorText || len(e.Field) > maxErrorText {
		t.Fatalf("%s: an error of %d bytes, field of %d", what, len(e.Message), len(e.Field))
	}
}

// FuzzNamesAndAttributes: queue and tag names, message and queue (user)
// attributes and filter conditions are accepted exactly when the API's
// rules say so, and refused with INVALID_ARGUMENT naming the field, the
// reason the rule gives, and an error of bounded size.
func FuzzNamesAndAttributes(f *testing.F) {
	f.Add("orders", "v", false)
	f.Add("trace.id", "\xff", false)
	f.Add("DLQ.sourceQueue", "x", true)
	f.Add("a{b}", "", true)
	f.Add(strings.Repeat("n", 81), strings.Repeat("v", 1025), false)
	f.Add("é", "é", false)
	f.Add("", "", false)
	f.Fuzz(func(t *testing.T, name, value string, binary bool) {
		if e := CheckName("name", "queue", name); (e == nil) != fuzzNameOK(name) {
			t.Fatalf("queue name %q: got %v, rule says ok=%v", name, e, fuzzNameOK(name))
		} else if e != nil {
			fuzzCheckRefusal(t, "queue name", e, ReasonInvalidName, "name")
		}

		a := Attribute{String: value}
		if binary {
			a = Attribute{Binary: true, Bytes: []byte(value)}
		}
		size, e := CheckMessageAttributes(context.Background(), map[string]Attribute{name: a})
		reserved := strings.HasPrefix(name, ReservedAttributePrefix) || strings.HasPrefix(name, SQSAttributePrefix)
		ok := !reserved && fuzzAttrNameOK(name) && (binary || utf8.ValidString(value))
		switch {
		case (e == nil) != ok:
			t.Fatalf("attribute %q=%q (binary %v): got %v, rule says ok=%v", name, value, binary, e, ok)
		case e == nil && size != len(name)+len(value):
			t.Fatalf("attribute %q=%q: size %d, want %d", name, value, size, len(name)+len(value))
		case e != nil:
			reason := ReasonInvalidAttribute
			if reserved {
				reason = ReasonReservedAttribute
			}
			fuzzCheckRefusal(t, "attribute", e, reason, "attributes["+Echo(name)+"]")
		}

		e = checkUserAttributes("user_attributes", map[string]string{name: value})
		ok = name != "" && len(name) <= 256 && utf8.ValidString(name) && len(value) <= 1024
		if (e == nil) != ok {
			t.Fatalf("user attribute %q=%q: got %v, rule says ok=%v", name, value, e, ok)
		} else if e != nil {
			fuzzCheckRefusal(t, "user attribute", e, ReasonInvalidAttribute, "")
		}

		e = checkFilter(&Filter{Conditions: []Condition{{Name: name}}})
		if (e == nil) != fuzzAttrNameOK(name) {
			t.Fatalf("filter on %q: got %v, rule says ok=%v", name, e, fuzzAttrNameOK(name))
		} else if e != nil {
			fuzzCheckRefusal(t, "filter", e, ReasonInvalidFilter, "filter.conditions.name")
		}
	})
}

// ValidName is the rule ^[A-Za-z0-9_-]{1,80}$, by hand.
func FuzzValidName(f *testing.F) {
	rule := regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	for _, s := range []string{"", "a", "orders-1_B", strings.Repeat("x", 80), strings.Repeat("x", 81), "a b", "é", "a\x00", "{q}", "a.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidName(s), rule.MatchString(s); got != want {
			t.Fatalf("ValidName(%q) = %v, the rule says %v", s, got, want)
		}
	})
}
