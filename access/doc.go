// Package access is tagq's authentication and authorisation data (DESIGN
// S18): principals, their API keys (stored as SHA-256 hashes, the secret
// shown once), client-certificate names, and EMQ's permission levels per
// principal per queue name or prefix, with receiving limitable to named
// tags. It also records who created each queue (the creator has
// FULL_CONTROL on it, as a queue's owner has in EMQ) and holds each
// principal to its quota of created queues.
//
// # Levels
//
// One level per principal per queue or prefix (orders-*); the grant on the
// exact name wins over prefixes, and a longer prefix over a shorter one.
// Admin principals may do everything, the AccessService included.
//
//	NONE            nothing
//	SEND            send (SendMessage, SendMessageBatch, Publish)
//	RECEIVE         receive (ReceiveMessage, Consume) without settling
//	SEND_RECEIVE    SEND + RECEIVE
//	HANDLE          receive, delete, change visibility, dead-letter, seek a tag
//	SEND_HANDLE     SEND + HANDLE
//	GET_QUEUE_INFO  GetQueue, GetTag, ListTags, ListMessageMoves
//	USE_QUEUE       SEND_HANDLE + GET_QUEUE_INFO
//	ADMIN_QUEUE     all but granting: create/update/purge/delete the queue,
//	                create/delete tags, start/cancel moves, peek
//	PEEK            PeekMessage
//	DELETE_PEEK     PEEK (and EMQ's delete-peeked, which tagq lacks)
//	FULL_CONTROL    all, and set/revoke others' permissions on the queue
//
// # Caching
//
// Each process keeps all access data in memory (Snapshot) and checks a
// version counter in Redis at most once per Config.RefreshInterval
// (default 1 s), so a call costs no Redis round trip. A change made through
// one process applies there at once and on the others within the interval
// (at worst two while a refresh is slow); if Redis cannot be read for two
// intervals, calls fail UNAVAILABLE rather than run on stale grants.
package access
