package main

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// writeKeys writes a --handle-key-file as an operator should: a new file
// renamed over the old.
func writeKeys(t *testing.T, path string, lines ...string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path+".tmp", []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	require.NoError(t, os.Rename(path+".tmp", path))
}

func keyLine(id, material string) string {
	return id + ":" + base64.StdEncoding.EncodeToString([]byte(material))
}

// signedBy is the key id a receipt handle names.
func signedBy(t *testing.T, h string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(h)
	require.NoError(t, err)
	require.Greater(t, len(b), 2+int(b[1]))
	return string(b[2 : 2+b[1]])
}

// Rotation without a restart: tagqd signs with the file's first key and
// takes handles of every key listed; a changed file is loaded within a few
// seconds; a key removed from it no longer verifies.
func TestE2E_HandleKeyFile_RotationWithoutRestart(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		path := filepath.Join(t.TempDir(), "handle-keys")
		a, b := keyLine("A", "key A: 32 bytes of key material!"), keyLine("B", "key B: 32 bytes of key material!")
		writeKeys(t, path, a)
		d := start(t, be, "--handle-key-file", path, "--log-level", "info") // info: the reload lines
		ctx := context.Background()
		_, err := d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}})
		require.NoError(t, err)
		for range 3 {
			_, err = d.m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: "q", Body: []byte("m")})
			require.NoError(t, err)
		}
		receive := func() string {
			t.Helper()
			r, err := d.m.ReceiveMessage(ctx, &tagqv1.ReceiveMessageRequest{Queue: "q", MaxMessages: i32(1)})
			require.NoError(t, err)
			require.Len(t, r.GetMessages(), 1)
			return r.GetMessages()[0].GetReceiptHandle()
		}
		waitReload := func(n int) {
			t.Helper()
			deadline := time.Now().Add(15 * time.Second)
			for strings.Count(d.proc.Stderr(), "handle key file reloaded") < n {
				require.True(t, time.Now().Before(deadline), "no reload logged after 15 s")
				time.Sleep(50 * time.Millisecond)
			}
		}
		h1, h2 := receive(), receive()
		require.Equal(t, "A", signedBy(t, h1))

		writeKeys(t, path, b, a)
		waitReload(1)
		_, err = d.m.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: "q", ReceiptHandle: h1})
		require.NoError(t, err, "A's handle, A verify-only")
		h3 := receive()
		require.Equal(t, "B", signedBy(t, h3))

		writeKeys(t, path, b)
		waitReload(2)
		_, err = d.m.ChangeMessageVisibility(ctx, &tagqv1.ChangeMessageVisibilityRequest{Queue: "q", ReceiptHandle: h2, VisibilitySeconds: 60})
		code, r, f := grpcReason(t, err)
		require.Equal(t, codes.InvalidArgument, code, "%v", err)
		require.Equal(t, "INVALID_RECEIPT_HANDLE", r)
		require.Equal(t, "receipt_handle", f)
		_, err = d.m.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: "q", ReceiptHandle: h3})
		require.NoError(t, err, "B's handle")
	})
}

func TestE2E_HandleKeyFile_BadFileNamesTheFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte(keyLine("A", "too short")+"\n"), 0o600))
	garbled := filepath.Join(dir, "garbled")
	require.NoError(t, os.WriteFile(garbled, []byte("this is not a key file\n"), 0o600))
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{short, "the key is 9 bytes"},
		{garbled, "line 1: not id:base64key"},
	} {
		out, err := runTagqd("--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--handle-key-file", tc.file)
		require.Equal(t, 1, exitCode(err), "%s: %s", tc.file, out)
		require.Contains(t, out, "--handle-key-file: ", tc.file)
		require.Contains(t, out, tc.want, tc.file)
	}
}
