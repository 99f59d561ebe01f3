package tagq_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/tagqdtest"
)

// WithAPIKey against a tagqd with --auth: no key is refused, the
// bootstrap admin key and a key issued through Client.Access work.
func TestDial_WithAPIKey(t *testing.T) {
	t.Parallel()
	const adminKey = "the Go client's test bootstrap admin key"
	keyFile := filepath.Join(t.TempDir(), "admin.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(adminKey), 0o600))
	d, err := tagqdtest.Start(tagqdtest.Binary, "--auth", "--admin-key-file", keyFile)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := d.Stop()
		require.NoError(t, err)
	})

	err = works(t, dialTLS(t, d.GRPC), "no-key")
	require.Equal(t, "UNAUTHENTICATED", tagq.ReasonOf(err), "%v", err)

	admin := dialTLS(t, d.GRPC, tagq.WithAPIKey(adminKey))
	require.NoError(t, works(t, admin, "with-key"))

	ctx := context.Background()
	_, err = admin.Access.CreatePrincipal(ctx, &tagqv1.CreatePrincipalRequest{Principal: &tagqv1.Principal{Name: "app"}})
	require.NoError(t, err)
	_, err = admin.Access.SetPermission(ctx, &tagqv1.SetPermissionRequest{Grant: &tagqv1.PermissionGrant{
		Principal: "app", Queue: "with-key", Permission: tagqv1.Permission_PERMISSION_SEND}})
	require.NoError(t, err)
	k, err := admin.Access.IssueKey(ctx, &tagqv1.IssueKeyRequest{Principal: "app"})
	require.NoError(t, err)

	app := dialTLS(t, d.GRPC, tagq.WithAPIKey(k.GetApiKey()))
	_, err = app.Send(ctx, "with-key", tagq.Outgoing{Body: []byte("hello")})
	require.NoError(t, err)
	_, err = app.Receive(ctx, "with-key", tagq.ReceiveOptions{})
	var e *tagq.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, codes.PermissionDenied, e.Code)
	require.Equal(t, "RECEIVE", e.Metadata["permission"])
}
