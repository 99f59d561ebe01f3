package server

import (
	"context"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// gatewayPrincipalMD is the metadata key in which an in-process front that
// authenticated its caller by means of its own (the SQS endpoint: AWS
// Signature Version 4 against tagq's API keys) names the principal the
// call runs as. Like gatewayCertMD it is trusted only on the gateway's
// in-process connection (gatewayInfo), no REST header may become it
// (gatewayHeader) and Connect forwards no such header (forwardedHeaders).
const gatewayPrincipalMD = "x-tagq-gateway-principal"

// AsPrincipal is ctx for a call over the gateway's in-process connection
// (GatewayListener) or in process (InProcess) that runs as the named
// principal: for fronts that authenticate callers themselves. On any other
// connection the server ignores it.
func AsPrincipal(ctx context.Context, principal string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, gatewayPrincipalMD, principal)
}

// gatewayPrincipal is the principal an in-process front named (ok false
// when the call came from elsewhere, or named none).
func gatewayPrincipal(ctx context.Context, md metadata.MD) (string, bool) {
	pr, ok := peer.FromContext(ctx)
	if !ok {
		return "", false
	}
	if _, gw := pr.AuthInfo.(gatewayInfo); !gw {
		return "", false
	}
	if v := md.Get(gatewayPrincipalMD); len(v) > 0 {
		return v[0], true
	}
	return "", false
}

// gatewayOnlyMD says whether a metadata key is one that only the gateway
// itself may set (REST headers never become it).
func gatewayOnlyMD(key string) bool {
	key = strings.TrimPrefix(strings.ToLower(key), "grpcgateway-")
	return key == gatewayCertMD || key == gatewayPrincipalMD || key == gatewaySQSMD
}

// gatewaySQSMD marks a call of the SQS endpoint over the gateway's
// in-process connection or in process (InProcess): its sends may carry the
// attributes reserved for it (tags.SQSAttributePrefix). Trusted only
// there, as gatewayPrincipalMD is.
const gatewaySQSMD = "x-tagq-gateway-sqs"

// AsSQSEndpoint is ctx for a call of the SQS endpoint over the gateway's
// in-process connection (GatewayListener) or in process (InProcess),
// whose sends may carry the attributes tags.SQSAttributePrefix reserves
// for it. On any other connection the server ignores it.
func AsSQSEndpoint(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, gatewaySQSMD, "1")
}

// sqsSendContext is ctx for the engine's Send of a call whose messages
// carry attributes reserved for the SQS endpoint (has): WithSQSAttributes
// when the call is the SQS endpoint's (AsSQSEndpoint); anyone else's send
// is refused by the engine (RESERVED_ATTRIBUTE).
func sqsSendContext(ctx context.Context, has bool) context.Context {
	if !has || !isGateway(ctx) {
		return ctx
	}
	if md, _ := metadata.FromIncomingContext(ctx); len(md.Get(gatewaySQSMD)) > 0 {
		return tags.WithSQSAttributes(ctx)
	}
	return ctx
}

// hasSQSAttributes reports whether attrs name one reserved for the SQS
// endpoint.
func hasSQSAttributes(attrs map[string]*tagqv1.MessageAttribute) bool {
	for k := range attrs {
		if strings.HasPrefix(k, tags.SQSAttributePrefix) {
			return true
		}
	}
	return false
}
