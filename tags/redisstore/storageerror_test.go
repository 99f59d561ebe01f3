package redisstore

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// reply is a Redis error reply, as go-redis returns one.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

// A failure to reach or use Redis is UNAVAILABLE (clients retry); an error
// nothing expected is INTERNAL (a bug in tagq: retrying will not help).
func TestStorageError_BackendFailuresAreUnavailableTheRestInternal(t *testing.T) {
	unavailable := []error{
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		fmt.Errorf("write: %w", syscall.EPIPE),
		io.EOF,
		fmt.Errorf("reading reply: %w", io.ErrUnexpectedEOF),
		redis.ErrClosed,
		redis.ErrPoolTimeout,
		redis.ErrPoolExhausted,
		errors.New("redis: connection not available"),
		reply("LOADING Redis is loading the dataset in memory"),
		reply("OOM command not allowed when used memory > 'maxmemory'."),
		reply("CLUSTERDOWN The cluster is down"),
		reply("READONLY You can't write against a read only replica."),
		reply("NOAUTH Authentication required."),
		reply("WRONGPASS invalid username-password pair or user is disabled."),
		reply("BUSY Redis is busy running a script."),
	}
	for _, err := range unavailable {
		e := StorageError(err)
		require.Equal(t, tags.KindUnavailable, e.Kind, "%v", err)
		require.Equal(t, tags.ReasonBackendUnavailable, e.Reason)
		require.Equal(t, err, e.Cause)
	}
	internal := []error{
		reply("ERR user_script:12: Script attempted to access nonexistent global variable 'x'"),
		reply("WRONGTYPE Operation against a key holding the wrong kind of value"),
		reply("ERR wrong number of arguments for 'xadd' command"),
		reply("BUSYGROUP Consumer Group name already exists"), // not BUSY
		redis.Nil,
		errors.New("redis: can't parse int reply: \"x\""),
		errors.New("boom"),
	}
	for _, err := range internal {
		e := StorageError(err)
		require.Equal(t, tags.KindInternal, e.Kind, "%v", err)
		require.Equal(t, tags.ReasonInternal, e.Reason)
		require.NotContains(t, e.Text(), err.Error(), "clients are not told the cause")
	}
}

// mapErr, which every script call goes through, classifies the same way.
func TestMapErr_ScriptBugIsInternal(t *testing.T) {
	e, ok := tags.AsError(mapErr(reply("ERR user_script:1: attempt to compare nil with number"), "q", ""))
	require.True(t, ok)
	require.Equal(t, tags.KindInternal, e.Kind)
	e, ok = tags.AsError(mapErr(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, "q", ""))
	require.True(t, ok)
	require.Equal(t, tags.KindUnavailable, e.Kind)
}
