// Package server implements tagq's gRPC services over the tags engine and
// the REST gateway and Connect handlers in front of them.
//
//   - queue_service.go, message_service.go, redrive_service.go: the
//     services, with convert.go mapping proto and engine types and
//     validate.go the request checks the engine cannot make (batch shape).
//   - errors.go: every error leaves as a gRPC status with a
//     google.rpc.ErrorInfo (domain "tagq"), plus a BadRequest when a field
//     is at fault; engine kinds map to codes, anything unexpected from the
//     storage to UNAVAILABLE/BACKEND_UNAVAILABLE.
//   - interceptors.go, metrics.go: panic recovery, the access log and the
//     Prometheus metrics, for gRPC and REST calls alike.
//   - gateway.go: grpc-gateway (snake_case JSON, unknown fields refused)
//     over a connection to the server's own gRPC listener, with
//     /openapi.json, /healthz, /readyz and /metrics.
//   - connect.go: the services in the Connect, gRPC-Web and gRPC protocols
//     on the HTTP listener (connect-go handlers), each call forwarded over
//     the gateway's connection; connectlarge.go decodes large unary bodies
//     without connect-go's growing buffer.
//   - localcodec.go: REST and Connect unary requests cross the gateway's
//     connection by reference, not encoded again.
//   - inprocess.go: Server.InProcess, calls of the unary methods from
//     fronts in the process (the SQS endpoint) through the gRPC server's
//     own interceptor chain and stats handlers, without gRPC's wire.
//   - tap.go, inflight.go, restguard.go: what is checked before a request
//     is read (credentials, with --auth; the request bytes in flight, one
//     count over every protocol), and codec.go's decoding of large
//     messages at about twice their size; repeated.go's count of
//     repeated fields (batch entries) in a request's bytes, protobuf or
//     JSON, before it is decoded.
//   - handles.go: the queue of a call on receipt handles (S3).
//   - server.go: Config and New, the health service and reflection.
package server
