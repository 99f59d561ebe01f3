package tags

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
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
	"time"
)

// Receipt handles (and page tokens) are signed by a key ring: the first
// key signs, every key verifies. The ring comes from one of
//
//   - Config.HandleKeyFile: lines "id:base64key", the first the signing
//     key, the rest verify only; the file is looked at once a second and
//     loaded again when it changes (a file that does not load is logged
//     and the ring in use stays);
//   - Config.HandleKey: one fixed key;
//   - otherwise the key kept in Redis at <prefix>:handlekey, shared by
//     every tagqd on that Redis. It is made (and that logged) only when
//     Redis has none when a Store starts; a running Store checks it every
//     Config.HandleKeyCheck and, finding it gone (Redis lost its data),
//     writes its own key back, or, finding another one (a replica started
//     meanwhile made it), logs that and signs with Redis's key from then
//     on, its old key kept for verifying.

// HandleKey is one key of a receipt-handle key ring.
type HandleKey struct {
	// ID names the key in each handle it signs: 1-16 of A-Z a-z 0-9 . _ -
	ID string
	// Key is the HMAC-SHA256 key, at least MinHandleKeyBytes long.
	Key []byte
}

// MinHandleKeyBytes is the shortest key a key file may hold.
const MinHandleKeyBytes = 16

// maxRingKeys bounds a key file, and the keys a Store on a Redis-kept key
// remembers after the key in Redis changed.
const maxRingKeys = 16

var keyIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,16}$`)

// ParseHandleKeys reads a key file: one key a line as "id:base64key"
// (standard or URL-safe base64, padded or not), the first the signing key
// and the rest verify only. Blank lines and lines starting with # are
// ignored. Errors name the line, never the key.
func ParseHandleKeys(data []byte) ([]HandleKey, error) {
	var keys []HandleKey
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
			return nil, fmt.Errorf("line %d: key id %q is not 1-16 letters, digits, '.', '_' or '-'", n, Clip(id, 16)) // short: a wrong line may hold a key
		}
		key, err := decodeKey(enc)
		if err != nil {
			return nil, fmt.Errorf("line %d (key %s): the key is not base64", n, id)
		}
		if len(key) < MinHandleKeyBytes {
			return nil, fmt.Errorf("line %d (key %s): the key is %d bytes, at least %d are needed (32 random bytes: openssl rand -base64 32)",
				n, id, len(key), MinHandleKeyBytes)
		}
		for _, k := range keys {
			if k.ID == id {
				return nil, fmt.Errorf("line %d: key id %s is used twice", n, id)
			}
		}
		if len(keys) == maxRingKeys {
			return nil, fmt.Errorf("line %d: more than %d keys", n, maxRingKeys)
		}
		keys = append(keys, HandleKey{ID: id, Key: key})
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

// ReadHandleKeyFile reads and parses a key file (see ParseHandleKeys).
func ReadHandleKeyFile(path string) ([]HandleKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := ParseHandleKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// fingerprintID is the key id of a key that came without one (the key in
// Redis, Config.HandleKey): the same on every replica that holds the key.
func fingerprintID(key []byte) string {
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

func newRingKey(k HandleKey) *ringKey {
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
	b = append(b, m.h.Sum(m.sum[:0])[:handleMACLen]...)
	k.macs.Put(m)
	return b
}

// verify says whether sum is body's MAC.
func (k *ringKey) verify(body, sum []byte) bool {
	m := k.macs.Get().(*pooledMAC)
	m.h.Reset()
	m.h.Write(body)
	ok := hmac.Equal(sum, m.h.Sum(m.sum[:0])[:handleMACLen])
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

// handleCodec signs and checks handles with a key ring that a reload or a
// change of the key in Redis swaps whole.
type handleCodec struct {
	ring atomic.Pointer[keyRing]
}

func newHandleCodec(keys ...HandleKey) *handleCodec {
	c := &handleCodec{}
	c.set(keys)
	return c
}

func (c *handleCodec) set(keys []HandleKey) {
	r := &keyRing{keys: make([]*ringKey, len(keys))}
	for i, k := range keys {
		r.keys[i] = newRingKey(k)
	}
	if old := c.ring.Load(); old != nil {
		r.legacy = old.legacy
	}
	c.ring.Store(r)
}

// setLegacy adds a key that checks only version 2 handles.
func (c *handleCodec) setLegacy(key []byte) {
	old := c.ring.Load()
	c.ring.Store(&keyRing{keys: old.keys, legacy: []*ringKey{newRingKey(HandleKey{ID: fingerprintID(key), Key: key})}})
}

// current is the ring's keys, the signing key first.
func (c *handleCodec) current() []HandleKey {
	r := c.ring.Load()
	out := make([]HandleKey, len(r.keys))
	for i, k := range r.keys {
		out[i] = HandleKey{ID: k.id, Key: k.key}
	}
	return out
}

// mac is b's MAC by the signing key (page tokens).
func (c *handleCodec) mac(b []byte) []byte {
	return c.ring.Load().keys[0].sign(b)[len(b):]
}

// macOK says whether sum is b's MAC by any key of the ring (page tokens).
func (c *handleCodec) macOK(b, sum []byte) bool {
	return c.ring.Load().verifyAny(b, sum)
}

// handleKeyCheckDefault is how often a Store on a Redis-kept key looks at
// it by default.
const handleKeyCheckDefault = 5 * time.Second

// handleKeyFileCheck is how often the key file is looked at for a change.
const handleKeyFileCheck = time.Second

// handleKeys is how a Store gets and keeps its key ring.
type handleKeys struct {
	file  string        // Config.HandleKeyFile, or ""
	redis bool          // the key is kept in Redis
	every time.Duration // how often watch looks
	seen  os.FileInfo   // the key file as last looked at
}

// initHandleKeys sets up s.handles from cfg.
func (s *Store) initHandleKeys(ctx context.Context, cfg Config) error {
	switch {
	case cfg.HandleKeyFile != "" && cfg.HandleKey != nil:
		return errors.New("tags: give Config.HandleKeyFile or Config.HandleKey, not both")
	case cfg.HandleKeyFile != "":
		fi, err := os.Stat(cfg.HandleKeyFile)
		if err != nil {
			return fmt.Errorf("handle key file: %w", err)
		}
		keys, err := ReadHandleKeyFile(cfg.HandleKeyFile)
		if err != nil {
			return fmt.Errorf("handle key file: %w", err)
		}
		s.keys = handleKeys{file: cfg.HandleKeyFile, every: handleKeyFileCheck, seen: fi}
		s.handles = newHandleCodec(keys...)
		// Handles signed before the upgrade to key ids, by the key in
		// Redis, keep working while in flight.
		old, err := s.rdb.Get(ctx, s.handleKeyName()).Bytes()
		if err != nil && !isNil(err) {
			return StorageError(err)
		}
		if len(old) > 0 {
			s.handles.setLegacy(old)
		}
		s.log.Info("receipt handles signed with the key file's keys", "file", cfg.HandleKeyFile,
			"signing_key_id", keys[0].ID, "key_ids", s.handles.ring.Load().ids())
	case cfg.HandleKey != nil:
		s.handles = newHandleCodec(HandleKey{ID: fingerprintID(cfg.HandleKey), Key: cfg.HandleKey})
	default:
		key, err := s.loadHandleKey(ctx)
		if err != nil {
			return err
		}
		s.keys = handleKeys{redis: true, every: cfg.HandleKeyCheck}
		if s.keys.every == 0 {
			s.keys.every = handleKeyCheckDefault
		}
		s.handles = newHandleCodec(HandleKey{ID: fingerprintID(key), Key: key})
	}
	return nil
}

// loadHandleKey reads the key kept in Redis, making it if there is none.
func (s *Store) loadHandleKey(ctx context.Context) ([]byte, error) {
	k := s.handleKeyName()
	v, err := s.rdb.Get(ctx, k).Bytes()
	if err == nil {
		return v, nil
	}
	if !isNil(err) {
		return nil, StorageError(err)
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	made, err := s.rdb.SetNX(ctx, k, fresh, 0).Result()
	if err != nil {
		return nil, StorageError(err)
	}
	if made {
		s.log.Warn("no receipt-handle signing key in Redis: made a new one; handles signed by any other key are refused "+
			"(expected on a new Redis; set --handle-key-file to keep the key outside Redis)",
			"redis_key", k, "key_id", fingerprintID(fresh))
		return fresh, nil
	}
	if v, err = s.rdb.Get(ctx, k).Bytes(); err != nil { // another Store made it first
		return nil, StorageError(err)
	}
	return v, nil
}

// checkHandleKey compares the key in Redis with the one this Store signs
// with: a missing key is written back (SET NX), a different one is
// adopted for signing with this Store's keys kept for verifying; both are
// logged.
func (s *Store) checkHandleKey(ctx context.Context) error {
	k := s.handleKeyName()
	ours := s.handles.current()
	v, err := s.rdb.Get(ctx, k).Bytes()
	if isNil(err) {
		wrote, err := s.rdb.SetNX(ctx, k, ours[0].Key, 0).Result()
		if err != nil {
			return StorageError(err)
		}
		if wrote {
			s.log.Warn("the receipt-handle signing key was gone from Redis (lost data?); wrote this tagqd's key back",
				"redis_key", k, "key_id", ours[0].ID)
			return nil
		}
		v, err = s.rdb.Get(ctx, k).Bytes() // another replica wrote its own first
	}
	if err != nil {
		return StorageError(err)
	}
	if bytes.Equal(v, ours[0].Key) {
		return nil
	}
	id := fingerprintID(v)
	keys := []HandleKey{{ID: id, Key: v}}
	for _, o := range ours {
		if !bytes.Equal(o.Key, v) && len(keys) < maxRingKeys {
			keys = append(keys, o)
		}
	}
	s.handles.set(keys)
	s.log.Warn("the receipt-handle signing key in Redis is not this tagqd's (a replica made a new one while Redis had none): "+
		"signing with Redis's key from now on; handles this tagqd signed before are still taken here, "+
		"but refused by replicas that never held its key",
		"redis_key", k, "key_id", id, "previous_key_id", ours[0].ID)
	return nil
}

// reloadHandleKeyFile loads the key file again if it changed since last
// looked at (size, modification time, or the file itself, as when a
// symlink is swapped or a new file renamed over it).
func (s *Store) reloadHandleKeyFile() {
	fi, err := os.Stat(s.keys.file)
	if err != nil {
		s.log.Warn("handle key file unreadable; still using the keys loaded", "err", err)
		return
	}
	if s.keys.seen != nil && fi.ModTime().Equal(s.keys.seen.ModTime()) && fi.Size() == s.keys.seen.Size() && os.SameFile(fi, s.keys.seen) {
		return
	}
	s.keys.seen = fi // a refused file is retried once it changes again
	keys, err := ReadHandleKeyFile(s.keys.file)
	if err != nil {
		s.log.Warn("handle key file changed but does not load; still using the keys loaded", "err", err)
		return
	}
	s.handles.set(keys)
	s.log.Info("handle key file reloaded", "file", s.keys.file, "signing_key_id", keys[0].ID, "key_ids", s.handles.ring.Load().ids())
}

// watchHandleKeys runs until Close: it reloads the key file, or checks the
// key in Redis.
func (s *Store) watchHandleKeys() {
	defer s.done.Done()
	t := time.NewTicker(s.keys.every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if s.keys.file != "" {
			s.reloadHandleKeyFile()
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := s.checkHandleKey(ctx); err != nil {
			s.log.Debug("checking the receipt-handle signing key in Redis", "err", err)
		}
		cancel()
	}
}
