// Package tagq is the Go client of tagq: a typed wrapper over the generated
// gRPC clients, a Consumer that runs a handler for one tag over a Consume
// stream, and a Publisher that sends messages in frames over a Publish
// stream.
//
// # Client
//
// In a function that returns an error:
//
//	c, err := tagq.Dial("127.0.0.1:9090")
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	id, err := c.Send(ctx, "orders", tagq.Outgoing{Body: []byte("order 1")})
//	if err != nil {
//		return err
//	}
//	msgs, err := c.Receive(ctx, "orders", tagq.ReceiveOptions{Tag: "billing", Max: 10, Wait: 20 * time.Second})
//	if err != nil {
//		return err
//	}
//	for _, m := range msgs {
//		fmt.Println(m.GetMessageId() == id, string(m.GetBody()))
//		if err := c.Delete(ctx, m.GetReceiptHandle()); err != nil {
//			return err
//		}
//	}
//
// The lines above are the example Example_overview's: the package's tests
// check that every code block of this documentation is an example's, so
// that it compiles, and run the examples (Example, ExampleDial,
// ExampleConsumer, ExamplePublisher, …) against a live tagqd.
//
// Errors from the server are *Error values (errors.As): the gRPC code, the
// ErrorInfo reason (QUEUE_NOT_FOUND, RECEIPT_HANDLE_STALE, …) and the
// request field at fault.
//
// # Consumer
//
// A Consumer holds one Consume stream to a tag open; the server pushes
// messages as the Consumer's credit allows (MaxOutstandingMessages,
// MaxOutstandingBytes: messages held, running or waiting for one of
// Workers), and the Consumer runs a Handler per message. While a message
// is held its visibility is extended on the stream every third of
// Visibility, up to MaxExtension. A nil result acknowledges (deletes) the
// message; an error nacks it with Backoff(receive count), exact to the
// millisecond; an error wrapping Poison dead-letters it at once with a
// reason (the queue needs a redrive policy); a panic is an error.
//
// Stop takes no more messages, lets the handlers in progress finish and
// closes the stream cleanly, so the messages that waited for a worker go
// back to the tag at once; StopAndCancel also cancels the handlers'
// contexts. The end of Run's context stops as Stop does.
//
// When the stream breaks (the network, or a server shutting down with
// SERVER_SHUTTING_DOWN), the Consumer opens another with a growing
// backoff. Handlers running then go on: their messages are renewed and
// settled by receipt handle with the unary calls, and still count against
// the outstanding limits. The messages that waited are given back, and
// settlements the server had not confirmed are redone by receipt handle,
// so nothing waits out its visibility timeout for nothing. A message
// pushed again while its old handler still runs waits for that handler's
// verdict rather than running twice in this Consumer (another consumer of
// the tag may still receive a message a shutting-down server gave back).
//
// # Publisher
//
// A Publisher gathers messages per queue into frames (up to MaxMessages
// and MaxBytes, or MaxDelay after the first) and keeps up to MaxInFlight
// frames awaiting their answer on one Publish stream. Publish returns a
// PublishResult at once; its Get waits for the message id or an *Error.
// Flush and Stop send what waits and wait for the answers. Frames
// unanswered when the stream breaks are sent again: at least once, so a
// frame whose answer was lost may be stored twice.
package tagq
