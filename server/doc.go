// Package server implements tagq's gRPC services over the tags engine, the
// interceptors (panic recovery, logging, metrics), the error mapping (every
// error a gRPC status with a google.rpc.ErrorInfo), and the REST gateway
// with /openapi.json, /healthz and /metrics.
package server
