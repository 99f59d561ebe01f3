package receipt

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tagq/tagq/tags/streamid"
)

// Fuzz targets (go test -run='^$' -fuzz='^FuzzX$' -fuzztime=15s ./tags/receipt;
// .ci/run runs each for a bounded time). Their seeds run with the tests.

// fuzzRing is the codec the handle targets use: B signs, A verifies, and
// L is the legacy key (version 2 handles only).
func fuzzRing() (*Codec, []byte) {
	legacy := []byte("L: the key Redis held before ids")
	c := NewCodec(keyB, keyA)
	c.SetLegacy(legacy)
	return c, legacy
}

// canonical is the handle the codec would issue for h with key k, in the
// version of raw: what an accepted handle must be, byte for byte.
func canonical(raw []byte, k Key, h Handle) []byte {
	ms, seq, _ := streamid.Parse(h.ID)
	b := []byte{raw[0]}
	if raw[0] == version {
		b = append(b, byte(len(k.ID)))
		b = append(b, k.ID...)
	}
	return newRingKey(k).sign(appendFields(b, h, ms, seq))
}

// FuzzHandleDecode: any string is refused or is a handle tagq issued: it
// decodes to fields in range, and its bytes are exactly what signing those
// fields with one of the ring's keys gives (no forgery, no second spelling
// of a handle, down to the unused bits of the last base64 character),
// version 2 handles with any key, version 3 ones with the
// key they name. Never a panic.
func FuzzHandleDecode(f *testing.F) {
	c, legacy := fuzzRing()
	for _, h := range []Handle{
		{Queue: "orders", Tag: "billing", ID: "1763800000000-0", Gen: 1, FirstMs: 1763800000123},
		{Queue: "q", Tag: "t", ID: "5-18446744073709551615", Gen: 1 << 31, FirstMs: 5},
		{Queue: "", Tag: "", ID: "0-0", Gen: 1, FirstMs: -1},
	} {
		f.Add(c.Encode(h))
		f.Add(NewCodec(keyA).Encode(h))
		f.Add(legacyHandle(legacy, h))
		f.Add(legacyHandle(keyA.Key, h))
		f.Add(NewCodec(Key{ID: "nope", Key: keyA.Key}).Encode(h)) // a key id not in the ring
	}
	f.Add("")
	f.Add("AwFB")
	f.Add("!!not base64!!")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := c.Decode(s)
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
		if ms, _, ok := streamid.Parse(h.ID); !ok || ms > 1<<53 {
			t.Fatalf("accepted %q with id %q", s, h.ID)
		}
		candidates := append(append([]Key{}, c.Current()...), Key{ID: FingerprintID(legacy), Key: legacy})
		for _, k := range candidates {
			if raw[0] == version && (len(raw) < 2 || len(raw) < 2+int(raw[1]) || string(raw[2:2+raw[1]]) != k.ID) {
				continue
			}
			if raw[0] == version && k.ID == FingerprintID(legacy) {
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
		h := Handle{Queue: queue, Tag: tag, ID: streamid.Format(ms, seq), Gen: int(gen), FirstMs: int64(ms) + firstDelta}
		s := c.Encode(h)
		got, err := c.Decode(s)
		if err != nil || got != h {
			t.Fatalf("%+v: decoded as %+v, %v", h, got, err)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(s)
		if string(raw[2:2+raw[1]]) != keyB.ID {
			t.Fatalf("%+v: signed by key %q, want %q", h, raw[2:2+raw[1]], keyB.ID)
		}
	})
}

// FuzzParseKeys: a key file is refused with a short error that
// quotes no key, or parses to 1-16 keys with valid, distinct ids and keys
// of at least MinKeyBytes, which written out again parse the same.
func FuzzParseKeys(f *testing.F) {
	k32 := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	f.Add([]byte("# keys\nA:" + k32 + "\nold-1:" + base64.RawURLEncoding.EncodeToString([]byte("fedcba9876543210")) + "\n"))
	f.Add([]byte("A:" + k32 + "\nA:" + k32))
	f.Add([]byte("x:c2hvcnQ="))
	f.Add([]byte(":" + k32))
	f.Add([]byte("\r\n\t a : " + k32 + " \r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := ParseKeys(data)
		if err != nil {
			if len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes: %v", len(err.Error()), err)
			}
			return
		}
		if len(keys) == 0 || len(keys) > MaxKeys {
			t.Fatalf("%d keys", len(keys))
		}
		var out strings.Builder
		seen := map[string]bool{}
		for _, k := range keys {
			if !keyIDRE.MatchString(k.ID) || seen[k.ID] || len(k.Key) < MinKeyBytes {
				t.Fatalf("accepted key %q (%d bytes; seen %v)", k.ID, len(k.Key), seen[k.ID])
			}
			seen[k.ID] = true
			out.WriteString(k.ID + ":" + base64.StdEncoding.EncodeToString(k.Key) + "\n")
		}
		again, err := ParseKeys([]byte(out.String()))
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
