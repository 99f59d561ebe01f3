package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// TestE2E_S14_ErrorsEchoLittleOfABigInput: a 1 MB queue name comes back
// clipped, over gRPC (message and trailer) and REST (the JSON status).
func TestE2E_S14_ErrorsEchoLittleOfABigInput(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	big := strings.Repeat("x", 1<<20)
	_, err := d.q.CreateQueue(context.Background(), &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: big}})
	code, r, f := grpcReason(t, err)
	require.Equal(t, codes.InvalidArgument, code)
	require.Equal(t, "INVALID_NAME", r)
	require.Equal(t, "queue.name", f)
	require.Less(t, len(status.Convert(err).Message()), 300)
	// The status with its details is the grpc-status-details-bin trailer.
	require.Less(t, proto.Size(status.Convert(err).Proto()), 2048)

	code2, body := d.rest("POST", "/v1/queues", fmt.Sprintf(`{"name": %q}`, big))
	require.Equal(t, 400, code2)
	r, f = reason(body)
	require.Equal(t, "INVALID_NAME", r)
	require.Equal(t, "queue.name", f)
	require.Less(t, len(fmt.Sprint(body)), 2048)
}
