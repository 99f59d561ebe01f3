package server

import (
	"context"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/tagq/tagq/tags"
)

// readyTimeout bounds the storage ping behind a readiness check.
const readyTimeout = 2 * time.Second

// readiness is the standard gRPC health service, SERVING until the server
// drains, whose Check also asks the storage: with Redis unreachable it
// answers NOT_SERVING, as /readyz answers 503, so a load balancer's probe
// takes the replica out. (Watch reports draining only.)
type readiness struct {
	*health.Server
	store tags.Storage
}

func (r *readiness) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	resp, err := r.Server.Check(ctx, req)
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return resp, err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if r.store.Ping(ctx) != nil {
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING}, nil
	}
	return resp, nil
}
