package access

// Key is the API key with that id (its principal and the hash of its
// secret, never the secret), or nil. The bootstrap admin key's id is
// "bootstrap". Fronts that check signatures made with a secret derived
// from the key (the SQS endpoint's Signature V4) look keys up by id.
func (s *Snapshot) Key(id string) *Key { return s.keys[id] }

// KeyID is the id of the key a bearer token names: the id inside an issued
// key (tagq_<id>_<secret>), "bootstrap" for any other string (the
// bootstrap admin key is any string an operator chose).
func KeyID(token string) string {
	if id, _, ok := parseToken(token); ok {
		return id
	}
	return bootstrapKey
}
