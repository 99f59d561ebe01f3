package redisstore

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/receipt"
)

// handleKeyID is the key id a handle names (receipt/handle.go's layout:
// version 3, the id's length, the id, ...).
func handleKeyID(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	require.NoError(t, err)
	require.Equal(t, byte(3), b[0])
	return string(b[2 : 2+b[1]])
}

// legacyHandle is a handle as tagq made it before key ids (version 2),
// signed with key: built here from the layout, not by package receipt.
func legacyHandle(key []byte, h receipt.Handle) string {
	ms, seq, _ := parseID(h.ID)
	b := []byte{2}
	b = binary.AppendUvarint(b, uint64(h.Gen))
	b = binary.AppendUvarint(b, ms)
	b = binary.AppendUvarint(b, seq)
	b = binary.AppendVarint(b, h.FirstMs-int64(ms))
	b = binary.AppendUvarint(b, uint64(len(h.Queue)))
	b = append(b, h.Queue...)
	b = binary.AppendUvarint(b, uint64(len(h.Tag)))
	b = append(b, h.Tag...)
	mac := hmac.New(sha256.New, key)
	mac.Write(b)
	b = append(b, mac.Sum(nil)[:receipt.MACLen]...)
	return base64.RawURLEncoding.EncodeToString(b)
}

var (
	keyA = HandleKey{ID: "A", Key: []byte("key A: 32 bytes of key material!")}
	keyB = HandleKey{ID: "B", Key: []byte("key B: 32 bytes of key material!")}
)

// logBuffer collects a Store's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	l.buf.Reset()
	return s
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

func writeKeyFile(t *testing.T, path string, keys ...HandleKey) {
	t.Helper()
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k.ID + ":" + base64.StdEncoding.EncodeToString(k.Key) + "\n")
	}
	// As an operator should: a new file renamed over the old one.
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(b.String()), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// Rotation through the key file: handles signed with A keep working while
// A is listed verify-only, new ones are B's, and once A is removed its
// handles are INVALID_RECEIPT_HANDLE. A file that does not load changes
// nothing.
func TestHandleKeyFile_Rotation(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		path := filepath.Join(t.TempDir(), "keys")
		writeKeyFile(t, path, keyA)
		var logs logBuffer
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, HandleKeyFile: path, Logger: logs.logger()})
		require.NoError(t, err)
		defer s.Close()
		require.Contains(t, logs.take(), "signing_key_id=A")
		b.queue("q")
		b.send("q", "1", "2", "3", "4")
		recv := func(n int) []tags.Message {
			t.Helper()
			msgs, err := s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: n, WaitSeconds: i32(0)})
			require.NoError(t, err)
			require.Len(t, msgs, n)
			return msgs
		}
		byA := recv(3)
		require.Equal(t, "A", handleKeyID(t, byA[0].ReceiptHandle))
		tokA := s.PageToken("queues?prefix=", "q")

		writeKeyFile(t, path, keyB, keyA)
		s.reloadHandleKeyFile()
		require.Contains(t, logs.take(), `handle key file reloaded`)
		errs, err := s.Delete(b.ctx, "q", []string{byA[0].ReceiptHandle})
		require.NoError(t, err)
		require.NoError(t, errs[0], "A's handle while A verifies")
		after, err := s.PageAfter("queues?prefix=", tokA)
		require.NoError(t, err, "A's page token while A verifies")
		require.Equal(t, "q", after)
		byB := recv(1)
		require.Equal(t, "B", handleKeyID(t, byB[0].ReceiptHandle))

		// A file that does not load leaves the ring as it was.
		require.NoError(t, os.WriteFile(path, []byte("B:"+base64.StdEncoding.EncodeToString([]byte("short"))+"\n"), 0o600))
		s.reloadHandleKeyFile()
		require.Contains(t, logs.take(), "does not load")
		errs, err = s.Delete(b.ctx, "q", []string{byA[1].ReceiptHandle})
		require.NoError(t, err)
		require.NoError(t, errs[0])

		writeKeyFile(t, path, keyB)
		s.reloadHandleKeyFile()
		errs, err = s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: byA[2].ReceiptHandle}, {ReceiptHandle: byB[0].ReceiptHandle, VisibilitySeconds: 30}})
		require.NoError(t, err)
		requireInvalid(t, errs[0], tags.ReasonInvalidReceiptHandle, "receipt_handle")
		require.NoError(t, errs[1], "B's handle")
		_, err = s.PageAfter("queues?prefix=", tokA)
		requireInvalid(t, err, tags.ReasonInvalidArgumentRange, "page_token")
		require.Equal(t, tags.TagState{InFlight: 2, ReceivedTotal: 4, DeletedTotal: 2},
			b.state("q", "default"), "the refused handle changed nothing")

		// Upgrading from the key in Redis to a file: a handle of the version
		// before key ids, signed by the key Redis holds, still works; one of
		// today's signed by that key does not (it is not in the file).
		b.send("q", "5")
		viaRedisKey := b.receive("q", "", 1)[0].ReceiptHandle
		parsed, err := b.s.handles.Decode(viaRedisKey)
		require.NoError(t, err)
		redisKey, err := b.rdb.Get(b.ctx, b.s.handleKeyName()).Bytes()
		require.NoError(t, err)
		errs, err = s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{
			{ReceiptHandle: viaRedisKey, VisibilitySeconds: 30}, {ReceiptHandle: legacyHandle(redisKey, parsed), VisibilitySeconds: 30}})
		require.NoError(t, err)
		requireInvalid(t, errs[0], tags.ReasonInvalidReceiptHandle, "receipt_handle")
		require.NoError(t, errs[1], "an in-flight handle from before the upgrade")
	})
}

func TestHandleKeyFile_BadFileFailsNew(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		path := filepath.Join(t.TempDir(), "keys")
		_, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, HandleKeyFile: path, Logger: testLogger(t)})
		require.ErrorContains(t, err, "handle key file:")
		require.ErrorIs(t, err, os.ErrNotExist)
		require.NoError(t, os.WriteFile(path, []byte("A:bm90IGEga2V5\n"), 0o600))
		_, err = New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, HandleKeyFile: path, Logger: testLogger(t)})
		require.ErrorContains(t, err, "line 1 (key A): the key is 9 bytes")
		_, err = New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, HandleKeyFile: path, HandleKey: keyA.Key})
		require.ErrorContains(t, err, "not both")

		require.NoError(t, b.rdb.Del(b.ctx, b.s.handleKeyName()).Err())
		writeKeyFile(t, path, keyA)
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, HandleKeyFile: path, Logger: testLogger(t)})
		require.NoError(t, err)
		defer s.Close()
		require.Empty(t, b.keys(b.s.handleKeyName()), "a Store on a key file does not make Redis's key")
	})
}

// Two Stores on one Redis, on the key kept there: a handle either signs
// works on the other; after Redis loses the key the first to look writes
// its own back (logged) and nothing changes for handles; a replica that
// started while the key was gone made another key (logged), and the old
// replicas switch to it (logged), still taking their own earlier handles.
func TestHandleKey_RedisKeyIsNeverReplacedSilently(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		var logs1, logs2, logs3 logBuffer
		open := func(l *logBuffer) *Store {
			s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: l.logger()})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			return s
		}
		s1, s2 := open(&logs1), open(&logs2) // b.s made the key
		require.Empty(t, logs1.take()+logs2.take(), "the key existed: nothing to say")
		b.queue("q")
		b.send("q", "1", "2", "3", "4", "5")
		recv := func(s *Store) string {
			t.Helper()
			msgs, err := s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			return msgs[0].ReceiptHandle
		}
		accepts := func(s *Store, h string) error {
			t.Helper()
			errs, err := s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: h, VisibilitySeconds: 30}})
			require.NoError(t, err)
			return errs[0]
		}
		h1 := recv(s1)
		require.NoError(t, accepts(s2, h1))
		key1, err := b.rdb.Get(b.ctx, b.s.handleKeyName()).Bytes()
		require.NoError(t, err)
		legacy := legacyHandle(key1, receipt.Handle{Queue: "q", Tag: "default", ID: "1-0", Gen: 1, FirstMs: 1})
		_, err = s2.handles.Decode(legacy)
		require.NoError(t, err, "a handle from before key ids still verifies after the upgrade")

		// Redis loses the key; s2 looks first and writes its key back.
		require.NoError(t, b.rdb.Del(b.ctx, b.s.handleKeyName()).Err())
		require.NoError(t, s2.checkHandleKey(b.ctx))
		require.Contains(t, logs2.take(), "was gone from Redis")
		require.NoError(t, s1.checkHandleKey(b.ctx))
		require.Empty(t, logs1.take(), "the key in Redis is s1's own")
		got, err := b.rdb.Get(b.ctx, b.s.handleKeyName()).Bytes()
		require.NoError(t, err)
		require.Equal(t, key1, got)

		// Lost again, and a new replica starts before anyone looks: it makes
		// a new key, and says so.
		require.NoError(t, b.rdb.Del(b.ctx, b.s.handleKeyName()).Err())
		s3 := open(&logs3)
		require.Contains(t, logs3.take(), "made a new one")
		h3 := recv(s3)
		require.Error(t, accepts(s1, h3), "s1 does not know s3's key yet")
		require.NoError(t, s1.checkHandleKey(b.ctx))
		require.Contains(t, logs1.take(), "is not this tagqd's")
		require.NoError(t, s2.checkHandleKey(b.ctx))
		require.Contains(t, logs2.take(), "is not this tagqd's")
		h1b := recv(s1)
		for _, s := range []*Store{s1, s2, s3} {
			require.NoError(t, accepts(s, h3), "everyone signs with s3's key now")
			require.NoError(t, accepts(s, h1b))
		}
		require.NoError(t, accepts(s1, h1), "s1 still takes the handles it signed before")
		requireInvalid(t, accepts(s3, h1), tags.ReasonInvalidReceiptHandle, "receipt_handle")
		require.NoError(t, s1.checkHandleKey(b.ctx))
		require.Empty(t, logs1.take(), "settled: nothing more to say")
	})
}

// Start runs the check: a started Store puts a lost key back by itself,
// and Close stops it.
func TestHandleKey_StartedStoreWritesALostKeyBack(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		var logs logBuffer
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, HandleKeyCheck: 10 * time.Millisecond,
			Logger: logs.logger()})
		require.NoError(t, err)
		want, err := b.rdb.Get(b.ctx, b.s.handleKeyName()).Bytes()
		require.NoError(t, err)
		s.Start()
		require.NoError(t, b.rdb.Del(b.ctx, b.s.handleKeyName()).Err())
		require.Eventually(t, func() bool {
			got, err := b.rdb.Get(b.ctx, b.s.handleKeyName()).Bytes()
			return err == nil && bytes.Equal(got, want)
		}, 10*time.Second, 10*time.Millisecond, "the key is back")
		require.NoError(t, s.Close())
		require.Contains(t, logs.take(), "was gone from Redis")
	})
}
