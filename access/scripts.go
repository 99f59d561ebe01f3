package access

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The scripts (scripts/*.lua; each lists its KEYS, ARGV and return value).
// Every key of a script shares the {~access} hash tag (keys.go).
var (
	//go:embed scripts/setifprincipal.lua
	setIfPrincipalLua string
	//go:embed scripts/revokekey.lua
	revokeKeyLua string
	//go:embed scripts/revokegrant.lua
	revokeGrantLua string
	//go:embed scripts/deleteprincipal.lua
	deletePrincipalLua string
	//go:embed scripts/bootstrap.lua
	bootstrapLua string
	//go:embed scripts/reservequeue.lua
	reserveQueueLua string
)

var scripts = struct {
	setIfPrincipal, revokeKey, revokeGrant, deletePrincipal, bootstrap, reserveQueue *redis.Script
}{
	setIfPrincipal:  redis.NewScript(setIfPrincipalLua),
	revokeKey:       redis.NewScript(revokeKeyLua),
	revokeGrant:     redis.NewScript(revokeGrantLua),
	deletePrincipal: redis.NewScript(deletePrincipalLua),
	bootstrap:       redis.NewScript(bootstrapLua),
	reserveQueue:    redis.NewScript(reserveQueueLua),
}
