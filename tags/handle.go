package tags

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
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
// the key of the ring (see handlekeys.go) that made the MAC, so a handle
// signed before a rotation still verifies while its key is listed.
// Version 2 handles (before key ids: no key id, the rest the same) are
// checked against every key of the ring, and the key Redis held when a
// Store on a key file started.
type handle struct {
	Queue   string
	Tag     string
	ID      string
	Gen     int
	FirstMs int64
}

const (
	handleVersion        = 3
	handleVersionNoKeyID = 2
	handleMACLen         = 8
)

var errBadHandle = errors.New("malformed")

// strictBase64 refuses a last character with bits set that carry nothing.
var strictBase64 = base64.RawURLEncoding.Strict()

func (c *handleCodec) encode(h handle) string {
	ring := c.ring.Load()
	k := ring.keys[0]
	ms, seq, _ := parseID(h.ID)
	// Room for the header, the varints and the whole SHA-256 that k.sign
	// appends before cutting it to the MAC: one allocation.
	b := make([]byte, 0, 2+len(k.id)+4*binary.MaxVarintLen64+2*binary.MaxVarintLen32+len(h.Queue)+len(h.Tag)+sha256.Size)
	b = append(b, handleVersion, byte(len(k.id)))
	b = append(b, k.id...)
	b = appendHandleFields(b, h, ms, seq)
	b = k.sign(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// appendHandleFields appends what follows the key id (see handle).
func appendHandleFields(b []byte, h handle, ms, seq uint64) []byte {
	b = binary.AppendUvarint(b, uint64(h.Gen))
	b = binary.AppendUvarint(b, ms)
	b = binary.AppendUvarint(b, seq)
	b = binary.AppendVarint(b, h.FirstMs-int64(ms))
	b = binary.AppendUvarint(b, uint64(len(h.Queue)))
	b = append(b, h.Queue...)
	b = binary.AppendUvarint(b, uint64(len(h.Tag)))
	return append(b, h.Tag...)
}

func (c *handleCodec) decode(s string) (handle, error) {
	var h handle
	// One spelling of each handle: strict about the last character's
	// unused bits, and no \r or \n (which the decoder skips).
	b, err := strictBase64.DecodeString(s)
	if err != nil || len(b) < 1+handleMACLen || strictBase64.EncodedLen(len(b)) != len(s) {
		return h, errBadHandle
	}
	body, sum := b[:len(b)-handleMACLen], b[len(b)-handleMACLen:]
	ring := c.ring.Load()
	var r []byte
	switch body[0] {
	case handleVersion:
		if len(body) < 2 || len(body) < 2+int(body[1]) {
			return h, errBadHandle
		}
		id := body[2 : 2+int(body[1])]
		if !ring.verifyByID(id, body, sum) {
			return h, errBadHandle
		}
		r = body[2+len(id):]
	case handleVersionNoKeyID:
		if !ring.verifyLegacy(body, sum) {
			return h, errBadHandle
		}
		r = body[1:]
	default:
		return h, errBadHandle
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
