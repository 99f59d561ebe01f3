// Package tags is tagq's model of queues, tags (independent readers, each
// with its own cursor, in-flight set, receive counts and counters) and
// messages, shared by every storage: what the server asks of a storage and
// what a storage must answer, without any storage in it (it imports no
// Redis client).
//
// The shape follows river's riverdriver / riverpgxv5: this package is the
// contract, an engine implements it in a package of its own. The engine on
// Redis streams is package tags/redisstore; the server and the background
// worker (packages server and redrive) see only the interfaces here, and
// only cmd/tagqd, tagqtest and tests make an engine.
//
//   - types.go: queues, tags, messages, dead letters, move tasks and the
//     per-queue figures, with the API's defaults and limits (DESIGN §2).
//   - storage.go: Storage, what the server calls (with TagReader for
//     Consume streams), its error contract, and Maintainer, what package
//     redrive's worker calls.
//   - validate.go, caps.go, quota.go, policy.go, settle.go: the rules of
//     the API that need no stored state (names, attributes, filters,
//     topics, priorities, deduplication ids, queue and tag attributes,
//     caps, rate quotas, redrive policies, settlements), as functions every
//     storage calls so that bad input is refused the same way, naming the
//     field, whatever the storage. Rules that need the stored state (a
//     dead-letter queue must exist, say) are written down there and
//     checked by the storage.
//   - errors.go, reasons_gen.go: Error, what every storage returns on
//     purpose (its Kind and Reason become the gRPC status and ErrorInfo),
//     the constructors of the errors storages share, and the ErrorInfo
//     reasons (reasons_gen.go, made by tools/errcat from
//     proto/tagq/v1/errors.yaml).
//
// Beside it: package tags/tagstest, the conformance suite with the model
// tests that any Storage runs; tags/receipt, receipt handles and their key
// ring; tags/wake, wake-ups of waiting receives; tags/streamid, stream ids.
package tags
