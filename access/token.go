package access

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// An API key, as clients send it (Authorization: Bearer <key>):
//
//	tagq_<key id: 16 hex digits>_<secret: 43 base64url characters, 256 random bits>
//
// Redis keeps the key id and the SHA-256 of the secret, never the secret:
// a secret of 256 random bits needs no slow hash (nothing to guess), and
// SHA-256 keeps the check cheap on every call. The bootstrap admin key
// (tagqd --admin-key-file, TAGQ_ADMIN_KEY) is any string an operator
// chose; it is stored under the key id "bootstrap" as the SHA-256 of the
// whole string, and a bearer token not of the form above is checked
// against it.
const (
	tokenPrefix  = "tagq_"
	keyIDLen     = 16
	secretLen    = 43 // base64url (no padding) of 32 bytes
	tokenLen     = len(tokenPrefix) + keyIDLen + 1 + secretLen
	bootstrapKey = "bootstrap"
	// MinBootstrapKey is the shortest bootstrap admin key tagqd takes.
	MinBootstrapKey = 32
)

// newToken makes a key id and its bearer token.
func newToken() (id, token string, err error) {
	var idb [keyIDLen / 2]byte
	var sec [32]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return "", "", err
	}
	if _, err := rand.Read(sec[:]); err != nil {
		return "", "", err
	}
	id = hex.EncodeToString(idb[:])
	return id, tokenPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(sec[:]), nil
}

// parseToken splits a bearer token of the issued form into key id and
// secret; ok is false for any other string.
func parseToken(token string) (id, secret string, ok bool) {
	if len(token) != tokenLen || !strings.HasPrefix(token, tokenPrefix) || token[len(tokenPrefix)+keyIDLen] != '_' {
		return "", "", false
	}
	id = token[len(tokenPrefix) : len(tokenPrefix)+keyIDLen]
	for _, c := range []byte(id) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", "", false
		}
	}
	return id, token[len(tokenPrefix)+keyIDLen+1:], true
}

func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// matches compares in constant time.
func matches(secret string, hash []byte) bool {
	return subtle.ConstantTimeCompare(hashSecret(secret), hash) == 1
}

// sameSecret compares two secrets in time that depends on their lengths
// only (subtle.ConstantTimeCompare without converting to []byte).
func sameSecret(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var d byte
	for i := 0; i < len(a); i++ {
		d |= a[i] ^ b[i]
	}
	return subtle.ConstantTimeByteEq(d, 0) == 1
}
