package tags

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"strconv"
	"strings"
	"sync"
)

// A receipt handle names queue, tag, message and receive generation (the
// tag's receive count when it was issued), signed so that a forged or
// garbled handle is refused before anything touches Redis (S3). It also
// carries the tag's first receive time of the message, which with the id
// names the message's member of the tag's in-flight set (see
// scripts/lib.lua): the same for every handle of one stay in flight.
//
// Layout before base64url: version(1) gen(uvarint) ms(uvarint) seq(uvarint)
// first-ms(varint, first receive ms minus ms) len(queue)(uvarint) queue
// len(tag)(uvarint) tag mac(8).
type handle struct {
	Queue   string
	Tag     string
	ID      string
	Gen     int
	FirstMs int64
}

const (
	handleVersion = 2
	handleMACLen  = 8
)

// handleCodec signs and checks handles. hmac.New derives the padded keys
// each time (4 % of tagqd's CPU under W1), so MACs are pooled and Reset.
type handleCodec struct {
	key  []byte
	macs sync.Pool
}

func newHandleCodec(key []byte) *handleCodec {
	c := &handleCodec{key: key}
	c.macs.New = func() any { return hmac.New(sha256.New, c.key) }
	return c
}

func (c *handleCodec) mac(b []byte) []byte {
	m := c.macs.Get().(hash.Hash)
	m.Reset()
	m.Write(b)
	var sum [sha256.Size]byte
	out := m.Sum(sum[:0])[:handleMACLen]
	c.macs.Put(m)
	return out
}

func (c *handleCodec) encode(h handle) string {
	ms, seq, _ := parseID(h.ID)
	b := make([]byte, 0, 32+len(h.Queue)+len(h.Tag))
	b = append(b, handleVersion)
	b = binary.AppendUvarint(b, uint64(h.Gen))
	b = binary.AppendUvarint(b, ms)
	b = binary.AppendUvarint(b, seq)
	b = binary.AppendVarint(b, h.FirstMs-int64(ms))
	b = binary.AppendUvarint(b, uint64(len(h.Queue)))
	b = append(b, h.Queue...)
	b = binary.AppendUvarint(b, uint64(len(h.Tag)))
	b = append(b, h.Tag...)
	b = append(b, c.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

var errBadHandle = errors.New("malformed")

func (c *handleCodec) decode(s string) (handle, error) {
	var h handle
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+handleMACLen || b[0] != handleVersion {
		return h, errBadHandle
	}
	body, sum := b[:len(b)-handleMACLen], b[len(b)-handleMACLen:]
	if !hmac.Equal(sum, c.mac(body)) {
		return h, errBadHandle
	}
	r := body[1:]
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
		return h, errBadHandle
	}
	r = r[n:]
	q, ok4 := str()
	t, ok5 := str()
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || len(r) != 0 || gen == 0 || gen > 1<<31 || ms > 1<<53 {
		return h, errBadHandle
	}
	return handle{Queue: q, Tag: t, ID: formatID(ms, seq), Gen: int(gen), FirstMs: int64(ms) + d}, nil
}

// parseHandle decodes a handle and checks it belongs to queue. field names
// the request field for the error.
func (s *Store) parseHandle(queue, raw, field string) (handle, *Error) {
	if raw == "" {
		return handle{}, invalid(ReasonInvalidReceiptHandle, field, "receipt handle is empty")
	}
	h, err := s.handles.decode(raw)
	if err != nil {
		return h, invalid(ReasonInvalidReceiptHandle, field, "receipt handle is not one tagq issued")
	}
	if h.Queue != queue {
		return h, invalid(ReasonInvalidReceiptHandle, field, "receipt handle belongs to queue %q, not %q", echo(h.Queue), echo(queue))
	}
	return h, nil
}

func (s *Store) loadHandleKey(ctx context.Context) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	k := s.handleKeyName()
	if err := s.rdb.SetNX(ctx, k, fresh, 0).Err(); err != nil {
		return nil, unavailable(err)
	}
	v, err := s.rdb.Get(ctx, k).Bytes()
	if err != nil {
		return nil, unavailable(err)
	}
	return v, nil
}

// parseID splits a stream id "ms-seq".
func parseID(id string) (ms, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}

func formatID(ms, seq uint64) string {
	return strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq, 10)
}

// handleBatch is a batch of receipt handles, checked and grouped by tag.
type handleBatch struct {
	errs   []error          // per entry: its error, or nil
	parsed []handle         // per entry: the decoded handle (when errs[i] is nil)
	byTag  map[string][]int // tag -> indexes of its valid entries
}

// checkHandles validates a batch of n receipt handles of queue: the batch
// size, each handle (handleOf(i)), and any further per-entry check.
func (s *Store) checkHandles(queue string, n int, handleOf func(i int) string, check func(i int) *Error) (*handleBatch, error) {
	if e := checkName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if n == 0 || n > MaxBatchEntries {
		return nil, invalid(ReasonBatchTooLarge, "entries", "a batch has 1-%d entries, got %d", MaxBatchEntries, n)
	}
	b := &handleBatch{errs: make([]error, n), parsed: make([]handle, n), byTag: map[string][]int{}}
	for i := range n {
		h, e := s.parseHandle(queue, handleOf(i), "receipt_handle")
		if e == nil && check != nil {
			e = check(i)
		}
		if e != nil {
			b.errs[i] = e
			continue
		}
		b.parsed[i] = h
		b.byTag[h.Tag] = append(b.byTag[h.Tag], i)
	}
	return b, nil
}
