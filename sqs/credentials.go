package sqs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/access"
)

// SigV4 credentials of tagq API keys.
//
// tagq keeps an API key's id and the SHA-256 of its secret, never the
// secret, so it cannot check a signature made with the secret itself.
// Each key instead has a SigV4 secret derived from what tagq keeps and a
// signing key of the endpoint's own (DeriveSecret), given to the key's
// holder on request: GET CredentialsPath with the key as a bearer token
// answers the access key id (the key's id) and secret access key to
// configure an AWS SDK or the aws CLI with. Revoking the key voids them.
//
// Trade-off: whoever holds both the signing key and the key hashes can
// make every key's SigV4 secret (and so call the SQS endpoint as any
// principal, admins included); the hashes alone (a copy of Redis without
// the signing key) are not enough when the signing key lives in a file
// (tagqd --sqs-signing-key-file). Kept in Redis (the default), it sits
// beside the hashes: read access to Redis (a replica, a backup, a
// read-only user) is then enough to act through the SQS endpoint as
// anyone, which is why tagqd warns when it keeps the key there and, with
// --auth, serves the endpoint only when asked for. The bearer keys
// themselves cannot be recovered from either.

// CredentialsPath serves a key's SigV4 credentials.
const CredentialsPath = "/tagq/sigv4-credentials"

// minSigningKey is the shortest signing key taken.
const minSigningKey = 16

// credentials is CredentialsPath's answer.
type credentials struct {
	AccessKeyID     string `json:"aws_access_key_id"`
	SecretAccessKey string `json:"aws_secret_access_key"`
	Principal       string `json:"principal"`
}

func (h *Handler) serveCredentials(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	fail := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	if r.Method != http.MethodGet {
		fail(http.StatusMethodNotAllowed, "GET only")
		return
	}
	if h.acc == nil {
		fail(http.StatusNotFound, "authentication is off (tagqd without --auth): any credentials sign requests")
		return
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		fail(http.StatusUnauthorized, "send the API key as Authorization: Bearer <api key>")
		return
	}
	snap, err := h.acc.Current(r.Context())
	if err != nil {
		fail(http.StatusServiceUnavailable, "the access data cannot be read now")
		return
	}
	token = strings.TrimSpace(token)
	p := snap.Authenticate(token)
	k := snap.Key(access.KeyID(token))
	if p == nil || k == nil {
		fail(http.StatusUnauthorized, "the API key is not valid: unknown, revoked or mistyped")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(credentials{AccessKeyID: k.ID, SecretAccessKey: DeriveSecret(h.key, k.ID, k.Hash), Principal: p.Name})
}

// SigningKeyName is the Redis key of the signing key when no file gives it
// (under tagqd's key prefix: <prefix>:sqs:sigv4key).
const SigningKeyName = "sqs:sigv4key"

// LoadSigningKey is the key SigV4 secrets are derived from: file's first
// line (base64 of 16 bytes or more; # lines skipped) when file is given,
// else the key kept in Redis at <prefix>:sqs:sigv4key, made (32 random
// bytes) when Redis has none. Every tagqd serving the same keys must use
// the same signing key; changing it changes every key's SigV4 secret.
func LoadSigningKey(ctx context.Context, rdb redis.UniversalClient, prefix, file string) ([]byte, error) {
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(raw), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, err := base64.StdEncoding.DecodeString(line)
			if err != nil || len(k) < minSigningKey {
				return nil, fmt.Errorf("the signing key must be base64 of %d bytes or more", minSigningKey)
			}
			return k, nil
		}
		return nil, errors.New("the file holds no key")
	}
	var fresh [32]byte
	if _, err := rand.Read(fresh[:]); err != nil {
		return nil, err
	}
	name := prefix + ":" + SigningKeyName
	if err := rdb.SetNX(ctx, name, base64.StdEncoding.EncodeToString(fresh[:]), 0).Err(); err != nil {
		return nil, err
	}
	v, err := rdb.Get(ctx, name).Result()
	if err != nil {
		return nil, err
	}
	k, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(k) < minSigningKey {
		return nil, fmt.Errorf("the signing key in Redis (%s) is not base64 of %d bytes or more", name, minSigningKey)
	}
	return k, nil
}
