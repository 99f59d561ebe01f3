package redisstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags/receipt"
)

// The key ring itself (package receipt) comes from one of
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
type HandleKey = receipt.Key

// MinHandleKeyBytes is the shortest key a key file may hold.
const MinHandleKeyBytes = receipt.MinKeyBytes

// ParseHandleKeys reads a key file (see receipt.ParseKeys).
func ParseHandleKeys(data []byte) ([]HandleKey, error) { return receipt.ParseKeys(data) }

// ReadHandleKeyFile reads and parses a key file (see receipt.ParseKeys).
func ReadHandleKeyFile(path string) ([]HandleKey, error) { return receipt.ReadKeyFile(path) }

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
		return errors.New("redisstore: give Config.HandleKeyFile or Config.HandleKey, not both")
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
		s.handles = receipt.NewCodec(keys...)
		// Handles signed before the upgrade to key ids, by the key in
		// Redis, keep working while in flight.
		old, err := s.rdb.Get(ctx, s.handleKeyName()).Bytes()
		if err != nil && !isNil(err) {
			return rediserr.StorageError(err)
		}
		if len(old) > 0 {
			s.handles.SetLegacy(old)
		}
		s.log.Info("receipt handles signed with the key file's keys", "file", cfg.HandleKeyFile,
			"signing_key_id", keys[0].ID, "key_ids", s.handles.KeyIDs())
	case cfg.HandleKey != nil:
		s.handles = receipt.NewCodec(HandleKey{ID: receipt.FingerprintID(cfg.HandleKey), Key: cfg.HandleKey})
	default:
		key, err := s.loadHandleKey(ctx)
		if err != nil {
			return err
		}
		s.keys = handleKeys{redis: true, every: cfg.HandleKeyCheck}
		if s.keys.every == 0 {
			s.keys.every = handleKeyCheckDefault
		}
		s.handles = receipt.NewCodec(HandleKey{ID: receipt.FingerprintID(key), Key: key})
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
		return nil, rediserr.StorageError(err)
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	// Replicated before it signs anything (S20): a failover that lost it
	// would make every handle in flight invalid.
	made, err := s.rdb.SetNX(s.acked(ctx), k, fresh, 0).Result()
	if err != nil {
		return nil, rediserr.StorageError(err)
	}
	if made {
		s.log.Warn("no receipt-handle signing key in Redis: made a new one; handles signed by any other key are refused "+
			"(expected on a new Redis; set --handle-key-file to keep the key outside Redis)",
			"redis_key", k, "key_id", receipt.FingerprintID(fresh))
		return fresh, nil
	}
	if v, err = s.rdb.Get(ctx, k).Bytes(); err != nil { // another Store made it first
		return nil, rediserr.StorageError(err)
	}
	return v, nil
}

// checkHandleKey compares the key in Redis with the one this Store signs
// with: a missing key is written back (SET NX), a different one is
// adopted for signing with this Store's keys kept for verifying; both are
// logged.
func (s *Store) checkHandleKey(ctx context.Context) error {
	k := s.handleKeyName()
	ours := s.handles.Current()
	v, err := s.rdb.Get(ctx, k).Bytes()
	if isNil(err) {
		wrote, err := s.rdb.SetNX(s.acked(ctx), k, ours[0].Key, 0).Result()
		if err != nil {
			return rediserr.StorageError(err)
		}
		if wrote {
			s.log.Warn("the receipt-handle signing key was gone from Redis (lost data?); wrote this tagqd's key back",
				"redis_key", k, "key_id", ours[0].ID)
			return nil
		}
		v, err = s.rdb.Get(ctx, k).Bytes() // another replica wrote its own first
	}
	if err != nil {
		return rediserr.StorageError(err)
	}
	if bytes.Equal(v, ours[0].Key) {
		return nil
	}
	id := receipt.FingerprintID(v)
	keys := []HandleKey{{ID: id, Key: v}}
	for _, o := range ours {
		if !bytes.Equal(o.Key, v) && len(keys) < receipt.MaxKeys {
			keys = append(keys, o)
		}
	}
	s.handles.Set(keys)
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
	s.handles.Set(keys)
	s.log.Info("handle key file reloaded", "file", s.keys.file, "signing_key_id", keys[0].ID, "key_ids", s.handles.KeyIDs())
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
