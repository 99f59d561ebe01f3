package rediserr

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/durable"
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

// A write the replicas did not confirm (S20) is UNAVAILABLE: refused
// before it was sent (nothing stored) or sent and not confirmed in time
// (it may be stored), with what the replicas did in the metadata.
func TestStorageError_ReplicationIsUnavailableAndSaysWhetherItWasSent(t *testing.T) {
	e := StorageError(fmt.Errorf("send: %w", &durable.Error{Wanted: 2, Addr: "10.0.0.1:6379"}))
	require.Equal(t, tags.KindUnavailable, e.Kind)
	require.Equal(t, tags.ReasonReplicasUnavailable, e.Reason)
	require.Equal(t, map[string]string{"replicas_wanted": "2"}, e.Metadata)
	require.NotContains(t, e.Text(), "10.0.0.1")

	e = StorageError(&durable.Error{Wanted: 2, Acked: 1, Sent: true})
	require.Equal(t, tags.KindUnavailable, e.Kind)
	require.Equal(t, tags.ReasonReplicationTimeout, e.Reason)
	require.Equal(t, map[string]string{"replicas_wanted": "2", "replicas_acked": "1"}, e.Metadata)
}
