package receipt

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Receipt handles (and page tokens) are signed by a key ring: the first
// key signs, every key verifies. The ring comes from one of
//
//   - a key file (redisstore.Config.HandleKeyFile): lines "id:base64key", the first the signing
//     key, the rest verify only; the file is looked at once a second and
//     loaded again when it changes (a file that does not load is logged
//     and the ring in use stays);
//   - redisstore.Config.HandleKey: one fixed key;
//   - otherwise the key kept in Redis at <prefix>:handlekey, shared by
//     every tagqd on that Redis. It is made (and that logged) only when
//     Redis has none when a Store starts; a running Store checks it every
//     Config.HandleKeyCheck and, finding it gone (Redis lost its data),
//     writes its own key back, or, finding another one (a replica started
//     meanwhile made it), logs that and signs with Redis's key from then
//     on, its old key kept for verifying.

// Key is one key of a receipt-handle key ring.
type Key struct {
	// ID names the key in each handle it signs: 1-16 of A-Z a-z 0-9 . _ -
	ID string
	// Key is the HMAC-SHA256 key, at least MinKeyBytes long.
	Key []byte
}

// MinKeyBytes is the shortest key a key file may hold.
const MinKeyBytes = 16

// MaxKeys bounds a key file, and the keys a Store on a Redis-kept key
// remembers after the key in Redis changed.
const MaxKeys = 16

var keyIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,16}$`)

// ParseKeys reads a key file: one key a line as "id:base64key"
// (standard or URL-safe base64, padded or not), the first the signing key
// and the rest verify only. Blank lines and lines starting with # are
// ignored. Errors name the line, never the key.
func ParseKeys(data []byte) ([]Key, error) {
	var keys []Key
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, enc, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: not id:base64key", n)
		}
		id, enc = strings.TrimSpace(id), strings.TrimSpace(enc)
		if !keyIDRE.MatchString(id) {
			return nil, fmt.Errorf("line %d: key id %q is not 1-16 letters, digits, '.', '_' or '-'", n, clip(id, 16)) // short: a wrong line may hold a key
		}
		key, err := decodeKey(enc)
		if err != nil {
			return nil, fmt.Errorf("line %d (key %s): the key is not base64", n, id)
		}
		if len(key) < MinKeyBytes {
			return nil, fmt.Errorf("line %d (key %s): the key is %d bytes, at least %d are needed (32 random bytes: openssl rand -base64 32)",
				n, id, len(key), MinKeyBytes)
		}
		for _, k := range keys {
			if k.ID == id {
				return nil, fmt.Errorf("line %d: key id %s is used twice", n, id)
			}
		}
		if len(keys) == MaxKeys {
			return nil, fmt.Errorf("line %d: more than %d keys", n, MaxKeys)
		}
		keys = append(keys, Key{ID: id, Key: key})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("no key in the file (lines of id:base64key, the first signs)")
	}
	return keys, nil
}

func decodeKey(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// ReadKeyFile reads and parses a key file (see ParseKeys).
func ReadKeyFile(path string) ([]Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := ParseKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// FingerprintID is the key id of a key that came without one (the key in
// Redis, Config.HandleKey): the same on every replica that holds the key.
func FingerprintID(key []byte) string {
	sum := sha256.Sum256(append([]byte("tagq handle key id\x00"), key...))
	return hex.EncodeToString(sum[:4])
}

// ringKey is one key of a ring with its pooled MACs: hmac.New derives the
// padded keys each time (4 % of tagqd's CPU under W1), so MACs are pooled
// and Reset, each with the buffer its sum is written to.
type ringKey struct {
	id   string
	key  []byte
	macs sync.Pool // *pooledMAC
}

type pooledMAC struct {
	h   hash.Hash
	sum [sha256.Size]byte
}

func newRingKey(k Key) *ringKey {
	r := &ringKey{id: k.ID, key: k.Key}
	r.macs.New = func() any { return &pooledMAC{h: hmac.New(sha256.New, r.key)} }
	return r
}

// sign appends b's MAC to b (in place when b has sha256.Size bytes to
// spare).
func (k *ringKey) sign(b []byte) []byte {
	m := k.macs.Get().(*pooledMAC)
	m.h.Reset()
	m.h.Write(b)
	b = append(b, m.h.Sum(m.sum[:0])[:MACLen]...)
	k.macs.Put(m)
	return b
}

// verify says whether sum is body's MAC.
func (k *ringKey) verify(body, sum []byte) bool {
	m := k.macs.Get().(*pooledMAC)
	m.h.Reset()
	m.h.Write(body)
	ok := hmac.Equal(sum, m.h.Sum(m.sum[:0])[:MACLen])
	k.macs.Put(m)
	return ok
}

// keyRing is an immutable set of keys, the first the signing key.
// legacy keys check version 2 handles only (from before key ids): the key
// Redis held when a Store on a key file started.
type keyRing struct {
	keys   []*ringKey
	legacy []*ringKey
}

// verifyByID checks sum with the keys named id (ids are unique in a key
// file; two fingerprints may collide, so every key of the id is tried).
func (r *keyRing) verifyByID(id, body, sum []byte) bool {
	for _, k := range r.keys {
		if k.id == string(id) && k.verify(body, sum) {
			return true
		}
	}
	return false
}

func (r *keyRing) verifyAny(body, sum []byte) bool {
	for _, k := range r.keys {
		if k.verify(body, sum) {
			return true
		}
	}
	return false
}

// verifyLegacy checks a version 2 handle: every key, the legacy ones too.
func (r *keyRing) verifyLegacy(body, sum []byte) bool {
	if r.verifyAny(body, sum) {
		return true
	}
	for _, k := range r.legacy {
		if k.verify(body, sum) {
			return true
		}
	}
	return false
}

func (r *keyRing) ids() []string {
	out := make([]string, len(r.keys))
	for i, k := range r.keys {
		out[i] = k.id
	}
	return out
}

// Codec signs and checks handles with a key ring that a reload or a
// change of the key in Redis swaps whole (Set). Safe for concurrent use.
type Codec struct {
	ring atomic.Pointer[keyRing]
}

// NewCodec is a codec on keys, the first the signing key.
func NewCodec(keys ...Key) *Codec {
	c := &Codec{}
	c.Set(keys)
	return c
}

// Set swaps the ring for keys (the first signs), keeping the legacy key.
func (c *Codec) Set(keys []Key) {
	r := &keyRing{keys: make([]*ringKey, len(keys))}
	for i, k := range keys {
		r.keys[i] = newRingKey(k)
	}
	if old := c.ring.Load(); old != nil {
		r.legacy = old.legacy
	}
	c.ring.Store(r)
}

// SetLegacy adds a key that checks only version 2 handles.
func (c *Codec) SetLegacy(key []byte) {
	old := c.ring.Load()
	c.ring.Store(&keyRing{keys: old.keys, legacy: []*ringKey{newRingKey(Key{ID: FingerprintID(key), Key: key})}})
}

// KeyIDs are the ids of the ring's keys, the signing key's first (for logs).
func (c *Codec) KeyIDs() []string { return c.ring.Load().ids() }

// Current is the ring's keys, the signing key first.
func (c *Codec) Current() []Key {
	r := c.ring.Load()
	out := make([]Key, len(r.keys))
	for i, k := range r.keys {
		out[i] = Key{ID: k.id, Key: k.key}
	}
	return out
}

// MAC is b's MAC by the signing key (page tokens).
func (c *Codec) MAC(b []byte) []byte {
	return c.ring.Load().keys[0].sign(b)[len(b):]
}

// MACOK says whether sum is b's MAC by any key of the ring (page tokens).
func (c *Codec) MACOK(b, sum []byte) bool {
	return c.ring.Load().verifyAny(b, sum)
}

// clip cuts s to at most n bytes at a rune boundary, marked with "…"
// (tags.Clip: a wrong line of a key file may hold a key).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
