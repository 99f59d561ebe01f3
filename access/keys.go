package access

// Key layout. Every key of the access data is "<prefix>:{~access}:…" (the
// store's prefix; "~" cannot start a queue name, so no queue shares the
// hash tag), so all of it sits in one cluster slot and every change is one
// atomic MULTI or script, on Redis Cluster too. It is small (principals,
// keys, grants, queue owners) and read whole into each process's cache.
//
//	<prefix>:{~access}:v      string  version: INCR on every change; caches reload when it moves
//	<prefix>:{~access}:p      hash    principal name -> principal JSON (Principal)
//	<prefix>:{~access}:k      hash    key id -> API key JSON (Key: principal, SHA-256 of the secret)
//	<prefix>:{~access}:g      hash    "<principal>/<queue or prefix*>" -> grant JSON (Grant)
//	<prefix>:{~access}:o      hash    queue name -> the principal that created it (its owner: FULL_CONTROL)
//	<prefix>:{~access}:q:<P>  set     queues principal P created and that still exist (its queue quota)
type keys struct {
	version, principals, apiKeys, grants, owners, base string
}

func newKeys(prefix string) keys {
	b := prefix + ":{~access}:"
	return keys{version: b + "v", principals: b + "p", apiKeys: b + "k", grants: b + "g", owners: b + "o", base: b}
}

// created is the set of queues principal p created.
func (k keys) created(p string) string { return k.base + "q:" + p }

// grantField is the field of a grant in the grants hash. Principal names
// cannot hold "/", so the split is unambiguous.
func grantField(principal, queue string) string { return principal + "/" + queue }
