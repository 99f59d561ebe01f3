package tags

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A bare error from a storage is UNAVAILABLE when it is a failure to reach
// the backend over the network (clients retry), else INTERNAL (a bug in
// tagq: retrying will not help); clients are told nothing of the cause.
// (The Redis engine's own failures: redisstore.StorageError.)
func TestStorageError_NetworkFailuresAreUnavailableTheRestInternal(t *testing.T) {
	for _, err := range []error{
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		fmt.Errorf("write: %w", syscall.EPIPE),
		io.EOF,
		fmt.Errorf("reading reply: %w", io.ErrUnexpectedEOF),
		fmt.Errorf("use of closed conn: %w", net.ErrClosed),
	} {
		e := StorageError(err)
		require.Equal(t, KindUnavailable, e.Kind, "%v", err)
		require.Equal(t, ReasonBackendUnavailable, e.Reason)
		require.Equal(t, err, e.Cause)
		require.Equal(t, "BACKEND_UNAVAILABLE: storage backend unavailable", e.Text())
	}
	for _, err := range []error{errors.New("boom"), errors.New("LOADING Redis is loading the dataset in memory")} {
		e := StorageError(err)
		require.Equal(t, KindInternal, e.Kind, "%v", err)
		require.Equal(t, ReasonInternal, e.Reason)
		require.NotContains(t, e.Text(), err.Error(), "clients are not told the cause")
		require.Equal(t, err, e.Cause)
	}
	require.False(t, BackendFailure(nil))
}

// Clip cuts at a rune boundary and marks the cut; Echo clips to MaxEcho.
func TestClip(t *testing.T) {
	require.Equal(t, "ab…", Clip("abc", 2))
	require.Equal(t, "abc", Clip("abc", 3))
	require.Equal(t, "a…", Clip("aé", 2), "never half a rune")
	require.Len(t, Echo(string(make([]byte, 2*MaxEcho))), MaxEcho+len("…"))
}
