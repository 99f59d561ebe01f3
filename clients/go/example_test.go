package tagq_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	tagq "github.com/tagq/tagq/clients/go"
)

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
			_ = c.Delete(ctx, "example-orders", m.GetReceiptHandle())
		}
	}
	// Output:
	// billing got "order 1" (receive 1)
	// shipping got "order 1" (receive 1)
}

// A consumer deletes what its handler accepts and dead-letters what it
// declares poison.
func ExampleConsumer() {
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := tagq.Dial(addr)
	defer c.Close()
	_, _ = c.CreateQueue(ctx, "example-dlq", tagq.QueueOptions{DeadLetterQueue: true})
	_, _ = c.CreateQueue(ctx, "example-jobs", tagq.QueueOptions{RedriveTo: "example-dlq", MaxReceiveCount: 5})
	defer c.DeleteQueue(context.Background(), "example-dlq", true)
	defer c.DeleteQueue(context.Background(), "example-jobs", false)
	_, _ = c.Send(ctx, "example-jobs", tagq.Outgoing{Body: []byte("ok")})
	_, _ = c.Send(ctx, "example-jobs", tagq.Outgoing{Body: []byte("garbage")})

	handled := make(chan string, 2)
	consumer := c.NewConsumer(tagq.ConsumerConfig{Queue: "example-jobs", Workers: 2, Wait: time.Second},
		tagq.HandlerFunc(func(ctx context.Context, m *tagq.Message) error {
			defer func() { handled <- string(m.GetBody()) }()
			if string(m.GetBody()) == "garbage" {
				return tagq.PoisonError("UNPARSEABLE", errors.New("not JSON"))
			}
			return nil
		}))
	done := make(chan error)
	go func() { done <- consumer.Run(ctx) }()
	<-handled
	<-handled
	cancel()
	<-done

	dead, _ := c.Peek(context.Background(), "example-dlq", "", 10)
	for _, m := range dead {
		fmt.Printf("dead: %q reason %s (%s)\n", m.GetBody(), m.GetDeadLetter().GetReason(), m.GetDeadLetter().GetDescription())
	}
	// Output:
	// dead: "garbage" reason UNPARSEABLE (not JSON)
}
