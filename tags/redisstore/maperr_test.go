package redisstore

import (
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// reply is a Redis error reply, as go-redis returns one.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

// mapErr, which every script call goes through, classifies the same way.
func TestMapErr_ScriptBugIsInternal(t *testing.T) {
	e, ok := tags.AsError(mapErr(reply("ERR user_script:1: attempt to compare nil with number"), "q", ""))
	require.True(t, ok)
	require.Equal(t, tags.KindInternal, e.Kind)
	e, ok = tags.AsError(mapErr(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, "q", ""))
	require.True(t, ok)
	require.Equal(t, tags.KindUnavailable, e.Kind)
}
