// Package sqs is tagq's SQS-compatible endpoint (tagqd --sqs-addr): the
// Amazon SQS API, in the AWS JSON 1.0 protocol (current aws-sdk-go-v2,
// AWS SDK for JavaScript v3, recent boto3) and the query protocol (form
// posts and XML answers: older SDKs, Debian's aws CLI and boto3), over
// tagq's queues and tags. README.md's "SQS compatibility" is the user's
// guide; this is the map of the code.
//
//   - handler.go: Handler (an http.Handler) and its Config. What a
//     request's headers say is checked first (its signature's form, date
//     and scope; with authentication on, that its access key id names a
//     key), then its body is held in tagqd's request bytes in flight
//     (Config.InFlight: the server's one count, server.InFlight) until it
//     is answered, and read (at most MaxRequestBytes), its hash and
//     signature checked, parsed by its protocol into one request shape,
//     run by its action, and answered in its protocol. authfailures.go
//     counts and logs the refused signatures. Every action calls tagqd's
//     own gRPC methods in process (Config.Conn: server.Server.InProcess,
//     which runs a method through the gRPC server's own interceptor chain
//     and stats handlers, without gRPC's wire), so authentication,
//     permissions, limits, metrics, the access log and spans are those of
//     any other call; with authentication on, the call names the
//     principal the signature authenticated (server.AsPrincipal).
//   - protocol_json.go, protocol_query.go: the two protocols' parsing and
//     answers; request.go the request shape both fill; results.go the
//     answers' shapes (JSON members, flattened XML).
//   - sigv4.go: AWS Signature Version 4 as SQS checks it, and the SigV4
//     secrets of tagq API keys (DeriveSecret); credentials.go serves a
//     key's SigV4 credentials (CredentialsPath) and keeps the signing key
//     they are derived from (LoadSigningKey).
//   - names.go: SQS names, queue URLs and ARNs onto tagq queues and tags
//     (orders, orders~billing, orders.fifo).
//   - actions*.go: the actions (queue, message, move tasks);
//     attributes.go queue attributes; messages.go message attributes,
//     system attributes and bodies; checksums.go SQS's MD5s; cache.go the
//     receive attempts of FIFO retries (bounded by bytes) and what is
//     remembered of queues (default tag names, FIFO or not); errors.go
//     SQS's errors and tagq's statuses onto them.
//
// # Mapping
//
// A tagq queue is the SQS queue of its name (".fifo" appended for a topic
// queue); each of its tags is the queue named <queue>~<tag>. A send to
// any of them stores once for every tag; receives, deletes and visibility
// changes act on the tag whose URL they name. SQS's queue tags are tagq's
// user attributes (labels), apart from tagq's tags (readers).
//
// # Tests
//
// Unit tests of the parsers, checksums (against published values) and
// signatures (against aws-sdk-go-v2's signer); the actions against a
// whole tagq server in process (harness_test.go); fuzzed parsers through
// the whole endpoint (fuzz_test.go). cmd/tagqd's e2e tests drive a real
// tagqd with unmodified aws-sdk-go-v2, and clienttests/ holds the
// JavaScript, boto3 and aws CLI suites they run (TAGQ_SQS_CLIENT_TESTS=1).
package sqs
