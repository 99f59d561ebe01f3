package receipt

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tagq/tagq/tags/streamid"
)

// legacyHandle is a handle as tagq made it before key ids (version 2):
// the same fields without the key id, signed with key.
func legacyHandle(key []byte, h Handle) string {
	ms, seq, _ := streamid.Parse(h.ID)
	b := appendFields([]byte{versionNoKeyID}, h, ms, seq)
	b = newRingKey(Key{Key: key}).sign(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// handleKeyID is the key id a handle names.
func handleKeyID(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	require.NoError(t, err)
	require.Equal(t, byte(version), b[0])
	return string(b[2 : 2+b[1]])
}

var (
	keyA = Key{ID: "A", Key: []byte("key A: 32 bytes of key material!")}
	keyB = Key{ID: "B", Key: []byte("key B: 32 bytes of key material!")}
)

func TestHandleCodec_RotationAndLegacy(t *testing.T) {
	h := Handle{Queue: "q", Tag: "t", ID: "1763800000000-3", Gen: 2, FirstMs: 1763800000100}
	c := NewCodec(keyA)
	byA := c.Encode(h)
	require.Equal(t, "A", handleKeyID(t, byA))
	legacy := legacyHandle(keyA.Key, h)

	c.Set([]Key{keyB, keyA}) // rotate: B signs, A verifies only
	for _, s := range []string{byA, legacy} {
		got, err := c.Decode(s)
		require.NoError(t, err)
		require.Equal(t, h, got)
	}
	byB := c.Encode(h)
	require.Equal(t, "B", handleKeyID(t, byB))

	c.Set([]Key{keyB}) // A retired
	for _, s := range []string{byA, legacy} {
		_, err := c.Decode(s)
		require.ErrorIs(t, err, ErrMalformed)
	}
	_, err := c.Decode(byB)
	require.NoError(t, err)

	// A handle naming B but signed by A (its id rewritten) is refused even
	// while both keys are listed: the id picks the key.
	c.Set([]Key{keyB, keyA})
	raw, _ := base64.RawURLEncoding.DecodeString(byA)
	raw[2] = 'B'
	_, err = c.Decode(base64.RawURLEncoding.EncodeToString(raw))
	require.ErrorIs(t, err, ErrMalformed)
}

// A ring of several keys costs no allocation per handle over a ring of
// one: signing and checking are per message (the hot path).
func TestHandleCodec_RingAddsNoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not stable under the race detector")
	}
	h := Handle{Queue: "orders", Tag: "billing", ID: "1763800000000-0", Gen: 1, FirstMs: 1763800000123}
	allocs := func(keys ...Key) (enc, dec float64) {
		c := NewCodec(keys...)
		s := c.Encode(h)
		enc = testing.AllocsPerRun(200, func() { _ = c.Encode(h) })
		dec = testing.AllocsPerRun(200, func() {
			if _, err := c.Decode(s); err != nil {
				t.Fatal(err)
			}
		})
		return enc, dec
	}
	enc1, dec1 := allocs(keyA)
	others := []Key{{ID: "x1", Key: []byte("0123456789abcdef")}, {ID: "x2", Key: []byte("fedcba9876543210")}}
	encN, decN := allocs(append([]Key{keyA}, others...)...)
	require.Equal(t, enc1, encN)
	require.Equal(t, dec1, decN)
	// Checking with the ring's last key (a handle from before a rotation).
	c := NewCodec(append(others, keyA)...)
	c.Set([]Key{keyA})
	s := c.Encode(h)
	c.Set(append(others, keyA))
	require.Equal(t, dec1, testing.AllocsPerRun(200, func() { _, _ = c.Decode(s) }))
	// Fewer than before key ids (4 and 6: each MAC sum escaped): encode the
	// buffer, base64 and its string; decode the bytes and the strings.
	t.Logf("allocations: encode %v, decode %v", enc1, dec1)
	require.LessOrEqual(t, enc1, 3.0)
	require.LessOrEqual(t, dec1, 5.0)
}

func TestParseHandleKeys(t *testing.T) {
	k32 := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	k16url := base64.RawURLEncoding.EncodeToString([]byte{0xfb, 0xff, 0xfe, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	keys, err := ParseKeys([]byte("# rotated 2026-11-23\n\n2026-11: " + k32 + "\n  old_1:" + k16url + "  \n"))
	require.NoError(t, err)
	require.Equal(t, []Key{
		{ID: "2026-11", Key: []byte("0123456789abcdef0123456789abcdef")},
		{ID: "old_1", Key: []byte{0xfb, 0xff, 0xfe, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
	}, keys)

	short := base64.StdEncoding.EncodeToString([]byte("too short"))
	for name, c := range map[string]struct{ file, want string }{
		"empty":         {"", "no key in the file"},
		"comments only": {"# nothing\n", "no key in the file"},
		"no colon":      {k32 + "\n", "line 1: not id:base64key"},
		"bad id":        {"a b:" + k32, `line 1: key id "a b" is not`},
		"long id":       {strings.Repeat("i", 17) + ":" + k32, "is not 1-16"},
		"not base64":    {"a:" + k32 + "!", "line 1 (key a): the key is not base64"},
		"short key":     {"a:" + k32 + "\nb:" + short, "line 2 (key b): the key is 9 bytes, at least 16"},
		"duplicate id":  {"a:" + k32 + "\na:" + k32, "line 2: key id a is used twice"},
		"too many":      {strings.Repeat("x:"+k32+"\n", 1) + manyKeys(MaxKeys, k32), "more than 16 keys"},
	} {
		_, err := ParseKeys([]byte(c.file))
		require.ErrorContains(t, err, c.want, name)
		require.NotContains(t, err.Error(), k32, "%s: the key is never in an error", name)
	}
}

func manyKeys(n int, key string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("k" + string(rune('a'+i)) + ":" + key + "\n")
	}
	return b.String()
}
