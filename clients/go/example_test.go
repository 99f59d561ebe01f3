package tagq_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	tagq "github.com/tagq/tagq/clients/go"
)

// The package overview's code (doc.go, and the README's Go section), in a
// function that returns an error. Compiled, not run (it dials
// 127.0.0.1:9090); ExampleDial runs the same calls against a tagqd.
func Example_overview() {
	ctx := context.Background()
	err := func() error {
		c, err := tagq.Dial("127.0.0.1:9090")
		if err != nil {
			return err
		}
		defer c.Close()
		id, err := c.Send(ctx, "orders", tagq.Outgoing{Body: []byte("order 1")})
		if err != nil {
			return err
		}
		msgs, err := c.Receive(ctx, "orders", tagq.ReceiveOptions{Tag: "billing", Max: 10, Wait: 20 * time.Second})
		if err != nil {
			return err
		}
		for _, m := range msgs {
			fmt.Println(m.GetMessageId() == id, string(m.GetBody()))
			if err := c.Delete(ctx, m.GetReceiptHandle()); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		fmt.Println(err)
	}
}

// Send, receive and delete: the calls of the package overview.
func ExampleDial() {
	ctx := context.Background()
	c, err := tagq.Dial(addr) // e.g. "127.0.0.1:9090"
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.CreateQueue(ctx, "example-dial", tagq.QueueOptions{}); err != nil {
		panic(err)
	}
	defer c.DeleteQueue(ctx, "example-dial", false)
	if _, err := c.CreateTag(ctx, "example-dial", "billing"); err != nil {
		panic(err)
	}

	id, err := c.Send(ctx, "example-dial", tagq.Outgoing{Body: []byte("order 1")})
	if err != nil {
		panic(err)
	}
	msgs, err := c.Receive(ctx, "example-dial", tagq.ReceiveOptions{Tag: "billing", Max: 10, Wait: 20 * time.Second})
	if err != nil {
		panic(err)
	}
	for _, m := range msgs {
		fmt.Printf("%q, the message sent: %v\n", m.GetBody(), m.GetMessageId() == id)
		if err := c.Delete(ctx, m.GetReceiptHandle()); err != nil {
			panic(err)
		}
	}
	// Output:
	// "order 1", the message sent: true
}

// A tagqd serving TLS that requires client certificates (compiled, not
// run: the files are the operator's).
func ExampleWithTLS() {
	c, err := tagq.Dial("tagq.example:9090", tagq.WithTLS("ca.pem"),
		tagq.WithClientCert("client.pem", "client-key.pem"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
}

// Two tags read one queue independently.
func Example() {
	ctx := context.Background()
	c, err := tagq.Dial(addr) // e.g. "127.0.0.1:9090"
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_, _ = c.CreateQueue(ctx, "example-orders", tagq.QueueOptions{})
	defer c.DeleteQueue(ctx, "example-orders", false)
	_, _ = c.CreateTag(ctx, "example-orders", "billing")
	_, _ = c.CreateTag(ctx, "example-orders", "shipping")
	_, _ = c.Send(ctx, "example-orders", tagq.Outgoing{Body: []byte("order 1")})

	for _, tag := range []string{"billing", "shipping"} {
		msgs, _ := c.Receive(ctx, "example-orders", tagq.ReceiveOptions{Tag: tag, Max: 10})
		for _, m := range msgs {
			fmt.Printf("%s got %q (receive %d)\n", tag, m.GetBody(), m.GetReceiveCount())
			_ = c.Delete(ctx, m.GetReceiptHandle())
		}
	}
	// Output:
	// billing got "order 1" (receive 1)
	// shipping got "order 1" (receive 1)
}

// A consumer deletes what its handler accepts and dead-letters what it
// declares poison.
func ExampleConsumer() {
	ctx := context.Background()
	c, _ := tagq.Dial(addr)
	defer c.Close()
	_, _ = c.CreateQueue(ctx, "example-dlq", tagq.QueueOptions{DeadLetterQueue: true})
	_, _ = c.CreateQueue(ctx, "example-jobs", tagq.QueueOptions{RedriveTo: "example-dlq", MaxReceiveCount: 5})
	defer c.DeleteQueue(ctx, "example-dlq", true)
	defer c.DeleteQueue(ctx, "example-jobs", false)
	_, _ = c.Send(ctx, "example-jobs", tagq.Outgoing{Body: []byte("ok")})
	_, _ = c.Send(ctx, "example-jobs", tagq.Outgoing{Body: []byte("garbage")})

	handled := make(chan string, 2)
	consumer := c.NewConsumer(tagq.ConsumerConfig{Queue: "example-jobs", Workers: 2},
		tagq.HandlerFunc(func(ctx context.Context, m *tagq.Message) error {
			defer func() { handled <- string(m.GetBody()) }()
			if string(m.GetBody()) == "garbage" {
				return tagq.PoisonError("UNPARSEABLE", errors.New("not JSON"))
			}
			return nil // delete
		}))
	done := make(chan error)
	go func() { done <- consumer.Run(ctx) }()
	<-handled
	<-handled
	// Stop returns once the handlers have finished and their verdicts
	// reached the server.
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := consumer.Stop(stopCtx); err != nil {
		fmt.Println("stop:", err)
	}
	<-done

	dead, _ := c.Peek(ctx, "example-dlq", "", 10)
	for _, m := range dead {
		fmt.Printf("dead: %q reason %s (%s)\n", m.GetBody(), m.GetDeadLetter().GetReason(), m.GetDeadLetter().GetDescription())
	}
	// Output:
	// dead: "garbage" reason UNPARSEABLE (not JSON)
}

// A publisher sends messages in frames and gives each its own result.
func ExamplePublisher() {
	ctx := context.Background()
	c, _ := tagq.Dial(addr)
	defer c.Close()
	_, _ = c.CreateQueue(ctx, "example-events", tagq.QueueOptions{})
	defer c.DeleteQueue(ctx, "example-events", false)

	p := c.NewPublisher(tagq.PublisherConfig{MaxDelay: 5 * time.Millisecond})
	var results []*tagq.PublishResult
	for i := range 3 {
		results = append(results, p.Publish(ctx, "example-events", tagq.Outgoing{Body: fmt.Appendf(nil, "event %d", i)}))
	}
	lost := p.Publish(ctx, "example-no-such-queue", tagq.Outgoing{Body: []byte("lost")})
	for _, r := range results {
		if _, err := r.Get(ctx); err != nil {
			fmt.Println("not stored:", err)
		}
	}
	_, err := lost.Get(ctx)
	fmt.Println(tagq.ReasonOf(err))
	// Stop sends whatever still waits for its frame and waits for the
	// answers.
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := p.Stop(stopCtx); err != nil {
		fmt.Println("stop:", err)
	}

	msgs, _ := c.Receive(ctx, "example-events", tagq.ReceiveOptions{Max: 10})
	fmt.Println(len(msgs), "stored")
	// Output:
	// QUEUE_NOT_FOUND
	// 3 stored
}

// The README's Consumer: a handler that dead-letters what it cannot parse
// and retries what fails. Compiled, not run (it stops as soon as it
// starts); ExampleConsumer runs one.
func ExampleClient_NewConsumer() {
	ctx := context.Background()
	c, _ := tagq.Dial(addr)
	defer c.Close()
	type Order struct{ ID string }
	bill := func(context.Context, Order) error { return nil }
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()

	consumer := c.NewConsumer(tagq.ConsumerConfig{Queue: "orders", Tag: "billing", Workers: 8},
		tagq.HandlerFunc(func(ctx context.Context, m *tagq.Message) error {
			var o Order
			if err := json.Unmarshal(m.GetBody(), &o); err != nil {
				return tagq.PoisonError("UNPARSEABLE", err) // to the dead-letter queue, now
			}
			return bill(ctx, o) // nil: delete; error: retry later
		}))
	go consumer.Run(ctx)          // until stopped (or ctx ends)
	err := consumer.Stop(stopCtx) // handlers finish; the rest go back at once
	if err != nil {
		fmt.Println(err)
	}
}

// The README's Publisher: one message published, its id, the stop.
func ExampleClient_NewPublisher() {
	ctx := context.Background()
	c, _ := tagq.Dial(addr)
	defer c.Close()
	_, _ = c.CreateQueue(ctx, "orders", tagq.QueueOptions{})
	defer c.DeleteQueue(ctx, "orders", false)

	p := c.NewPublisher(tagq.PublisherConfig{}) // frames: 100 messages, 1 MiB, 10 ms
	res := p.Publish(ctx, "orders", tagq.Outgoing{Body: []byte("order 1")})
	id, err := res.Get(ctx) // the message id, or an *tagq.Error (QUEUE_NOT_FOUND, ...)
	err = p.Stop(ctx)       // sends what waits, waits for the answers

	stored, _ := c.Peek(ctx, "orders", "", 10)
	fmt.Println(len(stored) == 1 && stored[0].GetMessageId() == id, err)
	// Output:
	// true <nil>
}
