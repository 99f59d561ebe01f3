package tagq

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// apiKeyOption is WithAPIKey: Dial takes it out of the options, so that a
// plaintext Dial with a key alone still gets its default transport.
type apiKeyOption struct {
	grpc.EmptyDialOption
	key string
}

// WithAPIKey makes every call carry key as "authorization: Bearer <key>",
// for a tagqd started with --auth. Keys are issued by the AccessService
// (tagq access keys issue). Over plaintext the key crosses the network in
// the clear: use it with WithTLS except on loopback.
func WithAPIKey(key string) grpc.DialOption { return apiKeyOption{key: key} }

// bearer is per-call credentials of an API key.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity is false so that loopback tests and local
// development work without TLS.
func (bearer) RequireTransportSecurity() bool { return false }

var _ credentials.PerRPCCredentials = bearer("")

// splitAPIKey takes WithAPIKey out of opts and returns the per-call
// credentials it makes (nil without one; the last key given wins).
func splitAPIKey(opts []grpc.DialOption) ([]grpc.DialOption, grpc.DialOption) {
	key := ""
	rest := opts[:0:0]
	for _, o := range opts {
		if k, ok := o.(apiKeyOption); ok {
			key = k.key
			continue
		}
		rest = append(rest, o)
	}
	if key == "" {
		return rest, nil
	}
	return rest, grpc.WithPerRPCCredentials(bearer(key))
}
