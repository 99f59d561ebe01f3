package tags

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets (go test -run='^$' -fuzz='^FuzzX$' -fuzztime=15s ./tags;
// .ci/run runs each for a bounded time). Their seeds run with the tests.

// fuzzRing is the codec the handle targets use: B signs, A verifies, and
// L is the legacy key (version 2 handles only).
func fuzzRing() (*handleCodec, []byte) {
	legacy := []byte("L: the key Redis held before ids")
	c := newHandleCodec(keyB, keyA)
	c.setLegacy(legacy)
	return c, legacy
}

// canonical is the handle the codec would issue for h with key k, in the
// version of raw: what an accepted handle must be, byte for byte.
func canonical(raw []byte, k HandleKey, h handle) []byte {
	ms, seq, _ := parseID(h.ID)
	b := []byte{raw[0]}
	if raw[0] == handleVersion {
		b = append(b, byte(len(k.ID)))
		b = append(b, k.ID...)
	}
	return newRingKey(k).sign(appendHandleFields(b, h, ms, seq))
}

// FuzzHandleDecode: any string is refused or is a handle tagq issued: it
// decodes to fields in range, and its bytes are exactly what signing those
// fields with one of the ring's keys gives (no forgery, no second spelling
// of a handle, down to the unused bits of the last base64 character),
// version 2 handles with any key, version 3 ones with the
// key they name. Never a panic.
func FuzzHandleDecode(f *testing.F) {
	c, legacy := fuzzRing()
	for _, h := range []handle{
		{Queue: "orders", Tag: "billing", ID: "1763800000000-0", Gen: 1, FirstMs: 1763800000123},
		{Queue: "q", Tag: "t", ID: "5-18446744073709551615", Gen: 1 << 31, FirstMs: 5},
		{Queue: "", Tag: "", ID: "0-0", Gen: 1, FirstMs: -1},
	} {
		f.Add(c.encode(h))
		f.Add(newHandleCodec(keyA).encode(h))
		f.Add(legacyHandle(legacy, h))
		f.Add(legacyHandle(keyA.Key, h))
		f.Add(newHandleCodec(HandleKey{ID: "nope", Key: keyA.Key}).encode(h)) // a key id not in the ring
	}
	f.Add("")
	f.Add("AwFB")
	f.Add("!!not base64!!")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := c.decode(s)
		if err != nil {
			return
		}
		raw, derr := base64.RawURLEncoding.DecodeString(s)
		if derr != nil {
			t.Fatalf("accepted %q, which is not base64url: %v", s, derr)
		}
		if h.Gen < 1 || h.Gen > 1<<31 {
			t.Fatalf("accepted %q with generation %d", s, h.Gen)
		}
		if ms, _, ok := parseID(h.ID); !ok || ms > 1<<53 {
			t.Fatalf("accepted %q with id %q", s, h.ID)
		}
		candidates := append(append([]HandleKey{}, c.current()...), HandleKey{ID: fingerprintID(legacy), Key: legacy})
		for _, k := range candidates {
			if raw[0] == handleVersion && (len(raw) < 2 || len(raw) < 2+int(raw[1]) || string(raw[2:2+raw[1]]) != k.ID) {
				continue
			}
			if raw[0] == handleVersion && k.ID == fingerprintID(legacy) {
				continue // the legacy key checks version 2 handles only
			}
			if base64.RawURLEncoding.EncodeToString(canonical(raw, k, h)) == s {
				return
			}
		}
		t.Fatalf("accepted %q (%+v), which no key of the ring signed in that form", s, h)
	})
}

// FuzzHandleRoundTrip: every handle the engine can issue decodes to what
// was encoded, with the ring's signing key named in it.
func FuzzHandleRoundTrip(f *testing.F) {
	f.Add("orders", "billing", uint64(1763800000000), uint64(0), uint32(1), int64(123))
	f.Add("q", "t", uint64(1<<53), uint64(1<<63), uint32(1<<31), int64(-1<<62))
	f.Add("", "é\x00", uint64(0), uint64(0), uint32(7), int64(0))
	c, _ := fuzzRing()
	f.Fuzz(func(t *testing.T, queue, tag string, ms, seq uint64, gen uint32, firstDelta int64) {
		if gen == 0 || gen > 1<<31 || ms > 1<<53 {
			t.Skip("not a handle the engine issues")
		}
		h := handle{Queue: queue, Tag: tag, ID: formatID(ms, seq), Gen: int(gen), FirstMs: int64(ms) + firstDelta}
		s := c.encode(h)
		got, err := c.decode(s)
		if err != nil || got != h {
			t.Fatalf("%+v: decoded as %+v, %v", h, got, err)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(s)
		if string(raw[2:2+raw[1]]) != keyB.ID {
			t.Fatalf("%+v: signed by key %q, want %q", h, raw[2:2+raw[1]], keyB.ID)
		}
	})
}

// FuzzParseHandleKeys: a key file is refused with a short error that
// quotes no key, or parses to 1-16 keys with valid, distinct ids and keys
// of at least MinHandleKeyBytes, which written out again parse the same.
func FuzzParseHandleKeys(f *testing.F) {
	k32 := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	f.Add([]byte("# keys\nA:" + k32 + "\nold-1:" + base64.RawURLEncoding.EncodeToString([]byte("fedcba9876543210")) + "\n"))
	f.Add([]byte("A:" + k32 + "\nA:" + k32))
	f.Add([]byte("x:c2hvcnQ="))
	f.Add([]byte(":" + k32))
	f.Add([]byte("\r\n\t a : " + k32 + " \r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := ParseHandleKeys(data)
		if err != nil {
			if len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes: %v", len(err.Error()), err)
			}
			return
		}
		if len(keys) == 0 || len(keys) > maxRingKeys {
			t.Fatalf("%d keys", len(keys))
		}
		var out strings.Builder
		seen := map[string]bool{}
		for _, k := range keys {
			if !keyIDRE.MatchString(k.ID) || seen[k.ID] || len(k.Key) < MinHandleKeyBytes {
				t.Fatalf("accepted key %q (%d bytes; seen %v)", k.ID, len(k.Key), seen[k.ID])
			}
			seen[k.ID] = true
			out.WriteString(k.ID + ":" + base64.StdEncoding.EncodeToString(k.Key) + "\n")
		}
		again, err := ParseHandleKeys([]byte(out.String()))
		if err != nil || len(again) != len(keys) {
			t.Fatalf("written out again: %v, %d keys", err, len(again))
		}
		for i := range keys {
			if again[i].ID != keys[i].ID || !bytes.Equal(again[i].Key, keys[i].Key) {
				t.Fatalf("key %d changed when written out again", i)
			}
		}
	})
}

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
		if e := checkName("name", "queue", name); (e == nil) != fuzzNameOK(name) {
			t.Fatalf("queue name %q: got %v, rule says ok=%v", name, e, fuzzNameOK(name))
		} else if e != nil {
			fuzzCheckRefusal(t, "queue name", e, ReasonInvalidName, "name")
		}

		a := Attribute{String: value}
		if binary {
			a = Attribute{Binary: true, Bytes: []byte(value)}
		}
		size, e := checkMessageAttributes(map[string]Attribute{name: a})
		reserved := strings.HasPrefix(name, ReservedAttributePrefix)
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
			fuzzCheckRefusal(t, "attribute", e, reason, "attributes["+echo(name)+"]")
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

// FuzzPageAfter: a page token is refused (INVALID_ARGUMENT naming
// page_token, without echoing it) or is exactly the token tagq issues for
// that list and a valid name: no forgery, no second spelling.
func FuzzPageAfter(f *testing.F) {
	s := &Store{handles: newHandleCodec(keyA)}
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
			e, ok := AsError(err)
			if !ok || e.Kind != KindInvalidArgument || e.Field != "page_token" || (len(token) > 8 && strings.Contains(e.Message, token)) {
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
		if !fuzzNameOK(name) || s.PageToken(list, name) != token {
			t.Fatalf("accepted %q for list %q as %q, which tagq issues as %q", token, list, name, s.PageToken(list, name))
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
