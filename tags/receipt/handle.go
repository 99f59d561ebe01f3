// Package receipt makes and checks tagq's receipt handles: what a
// handle names, its binary layout, and the HMAC key ring that signs and
// verifies handles (and the server's page tokens). It knows nothing of
// Redis: tags keeps the ring's keys (a key file, a fixed key, or the key
// kept in Redis) and swaps them in with Set.
package receipt

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"

	"github.com/tagq/tagq/tags/streamid"
)

// A receipt handle names queue, tag, message and receive generation (the
// tag's receive count when it was issued), signed so that a forged or
// garbled handle is refused before anything touches Redis (S3). It also
// carries the tag's first receive time of the message, which with the id
// names the message's member of the tag's in-flight set (see
// scripts/lib.lua): the same for every handle of one stay in flight.
//
// Layout before base64url: version(1) len(key id)(1) key id gen(uvarint)
// ms(uvarint) seq(uvarint) first-ms(varint, first receive ms minus ms)
// len(queue)(uvarint) queue len(tag)(uvarint) tag mac(8). The key id names
// the key of the ring (see keys.go) that made the MAC, so a handle
// signed before a rotation still verifies while its key is listed.
// Version 2 handles (before key ids: no key id, the rest the same) are
// checked against every key of the ring, and the key Redis held when a
// Store on a key file started.
type Handle struct {
	Queue   string
	Tag     string
	ID      string
	Gen     int
	FirstMs int64
}

const (
	version        = 3
	versionNoKeyID = 2
	// MACLen is the bytes of a handle's MAC (of a page token's too).
	MACLen = 8
)

// ErrMalformed is Decode's error for anything but a handle the ring signed.
var ErrMalformed = errors.New("malformed")

// strictBase64 refuses a last character with bits set that carry nothing.
var strictBase64 = base64.RawURLEncoding.Strict()

// Encode makes h's handle, signed by the ring's signing key.
func (c *Codec) Encode(h Handle) string {
	ring := c.ring.Load()
	k := ring.keys[0]
	ms, seq, _ := streamid.Parse(h.ID)
	// Room for the header, the varints and the whole SHA-256 that k.sign
	// appends before cutting it to the MAC: one allocation.
	b := make([]byte, 0, 2+len(k.id)+4*binary.MaxVarintLen64+2*binary.MaxVarintLen32+len(h.Queue)+len(h.Tag)+sha256.Size)
	b = append(b, version, byte(len(k.id)))
	b = append(b, k.id...)
	b = appendFields(b, h, ms, seq)
	b = k.sign(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// appendFields appends what follows the key id (see handle).
func appendFields(b []byte, h Handle, ms, seq uint64) []byte {
	b = binary.AppendUvarint(b, uint64(h.Gen))
	b = binary.AppendUvarint(b, ms)
	b = binary.AppendUvarint(b, seq)
	b = binary.AppendVarint(b, h.FirstMs-int64(ms))
	b = binary.AppendUvarint(b, uint64(len(h.Queue)))
	b = append(b, h.Queue...)
	b = binary.AppendUvarint(b, uint64(len(h.Tag)))
	return append(b, h.Tag...)
}

// Decode checks s's signature against the ring and returns what it
// names (ErrMalformed: not a handle the ring signed, or garbled).
func (c *Codec) Decode(s string) (Handle, error) {
	var h Handle
	// One spelling of each handle: strict about the last character's
	// unused bits, and no \r or \n (which the decoder skips).
	b, err := strictBase64.DecodeString(s)
	if err != nil || len(b) < 1+MACLen || strictBase64.EncodedLen(len(b)) != len(s) {
		return h, ErrMalformed
	}
	body, sum := b[:len(b)-MACLen], b[len(b)-MACLen:]
	ring := c.ring.Load()
	var r []byte
	switch body[0] {
	case version:
		if len(body) < 2 || len(body) < 2+int(body[1]) {
			return h, ErrMalformed
		}
		id := body[2 : 2+int(body[1])]
		if !ring.verifyByID(id, body, sum) {
			return h, ErrMalformed
		}
		r = body[2+len(id):]
	case versionNoKeyID:
		if !ring.verifyLegacy(body, sum) {
			return h, ErrMalformed
		}
		r = body[1:]
	default:
		return h, ErrMalformed
	}
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(r)
		if n <= 0 {
			return 0, false
		}
		r = r[n:]
		return v, true
	}
	str := func() (string, bool) {
		n, ok := next()
		if !ok || n > uint64(len(r)) {
			return "", false
		}
		v := string(r[:n])
		r = r[n:]
		return v, true
	}
	gen, ok1 := next()
	ms, ok2 := next()
	seq, ok3 := next()
	d, n := binary.Varint(r)
	if n <= 0 {
		return h, ErrMalformed
	}
	r = r[n:]
	q, ok4 := str()
	t, ok5 := str()
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || len(r) != 0 || gen == 0 || gen > 1<<31 || ms > 1<<53 {
		return h, ErrMalformed
	}
	return Handle{Queue: q, Tag: t, ID: streamid.Format(ms, seq), Gen: int(gen), FirstMs: int64(ms) + d}, nil
}
