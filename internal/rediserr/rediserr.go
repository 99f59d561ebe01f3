// Package rediserr says what a failed Redis call means to tagq's API, for
// every package that keeps its data in Redis (the storage engine,
// tags/redisstore; principals and keys, access): tags.StorageError knowing
// Redis's error replies, go-redis's connection errors and the replicas'
// acknowledgements (internal/durable).
package rediserr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/tags"
)

// StorageError is the error for a failed call to Redis that is not an
// *tags.Error already: tags.StorageError knowing Redis. A write the replicas did not confirm (Config.Acks) is
// REPLICATION_TIMEOUT or REPLICAS_UNAVAILABLE; a failure to reach or use
// Redis that may pass (BackendFailure) is UNAVAILABLE /
// BACKEND_UNAVAILABLE: clients retry it. Anything else (a script error, a
// reply of a type the code did not expect) is a bug in tagq, not the
// backend's state: INTERNAL, so that clients do not retry it forever and
// the log shows it. Clients learn no more than that; the failure (which
// may name addresses) is the Cause, for the server's log.
func StorageError(err error) *tags.Error {
	if de, ok := durable.AsError(err); ok {
		return replicationError(de)
	}
	if BackendFailure(err) {
		return tags.Unavailable(err)
	}
	return tags.StorageError(err)
}

// replicationError is a write the replicas did not confirm (S20):
// REPLICATION_TIMEOUT when it was sent (it may have been stored),
// REPLICAS_UNAVAILABLE when it was refused before it was sent.
func replicationError(de *durable.Error) *tags.Error {
	md := map[string]string{"replicas_wanted": strconv.Itoa(de.Wanted)}
	if !de.Sent {
		return &tags.Error{Kind: tags.KindUnavailable, Reason: tags.ReasonReplicasUnavailable, Metadata: md, Cause: de,
			Message: fmt.Sprintf("Redis has fewer than the %d replica(s) each write must reach: nothing was stored; retry once they are back", de.Wanted)}
	}
	md["replicas_acked"] = strconv.Itoa(de.Acked)
	return &tags.Error{Kind: tags.KindUnavailable, Reason: tags.ReasonReplicationTimeout, Metadata: md, Cause: de,
		Message: fmt.Sprintf("the write reached Redis but %d of the %d replica(s) it must reach confirmed it in time: "+
			"it may have been stored; retry (a send with a deduplication id is then stored once)", de.Acked, de.Wanted)}
}

// Redis error replies that mean the backend cannot serve now or was set
// up wrong (as opposed to a bug in a script or a wrong command).
var unavailablePrefixes = []string{"OOM", "LOADING", "BUSY", "MASTERDOWN", "READONLY", "CLUSTERDOWN",
	"TRYAGAIN", "NOREPLICAS", "MISCONF", "NOAUTH", "WRONGPASS", "NOPERM", "MOVED", "ASK"}

// BackendFailure says whether err, from a Redis call, is a failure to reach
// or use the storage: a network failure (tags.BackendFailure), a closed,
// exhausted or timed out connection pool, or a Redis reply saying it
// cannot serve now (loading, out of memory, failing over, cluster down,
// refused credentials).
func BackendFailure(err error) bool {
	var rerr redis.Error
	switch {
	case err == nil:
		return false
	case tags.BackendFailure(err),
		errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted):
		return true
	case errors.As(err, &rerr):
		msg := strings.TrimPrefix(rerr.Error(), "ERR ")
		for _, p := range unavailablePrefixes {
			if strings.HasPrefix(msg, p+" ") || msg == p {
				return true
			}
		}
		return false
	}
	// go-redis's own connection-state errors ("redis: connection not
	// available", "redis: connection pool: …", "redis: cluster has no
	// nodes") have no exported value to compare with.
	msg := err.Error()
	for _, p := range []string{"redis: connection", "redis: cluster", "redis: all sentinels", "redis: client is closed",
		"redis: timed out", "redis: autopipeline"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
