// Package tagq is the Go client of tagq: a typed wrapper over the generated
// gRPC clients, and a Consumer that runs a handler for one tag with a pool
// of workers.
//
// # Client
//
//	c, err := tagq.Dial("127.0.0.1:9090")
//	defer c.Close()
//	id, err := c.Send(ctx, "orders", []byte("order 1"))
//	msgs, err := c.Receive(ctx, "orders", tagq.ReceiveOptions{Tag: "billing", Max: 10, Wait: 20 * time.Second})
//	err = c.Delete(ctx, "orders", msgs[0].ReceiptHandle)
//
// Errors from the server are *Error values (errors.As): the gRPC code, the
// ErrorInfo reason (QUEUE_NOT_FOUND, RECEIPT_HANDLE_STALE, …) and the
// request field at fault.
//
// # Consumer
//
// A Consumer long-polls one tag and runs a Handler per message on up to
// Workers goroutines. While a handler runs, it keeps extending the
// message's visibility. A nil result deletes the message; an error nacks it
// with a backoff that grows with the receive count; an error wrapping
// Poison dead-letters it at once with a reason (the queue needs a redrive
// policy). Run returns when its context ends, after the handlers in progress
// have finished.
package tagq
