package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// amqpPeer is RabbitMQ: durable classic queues, persistent messages,
// publisher confirms, manual acks. Producers' channels are on one
// connection and consumers' on another (RabbitMQ's advice: flow control
// blocks a publishing connection).
type amqpPeer struct {
	pub, sub *amqp.Connection
	procs    []int
}

func dialAMQP(url string) (*amqpPeer, error) {
	p := &amqpPeer{procs: localPIDs(url, "beam.smp")}
	cfg := amqp.Config{Dial: amqp.DefaultDial(5 * time.Second), Properties: amqp.Table{"connection_name": "tagq-bench"}}
	var err error
	for _, c := range []**amqp.Connection{&p.pub, &p.sub} {
		if *c, err = amqp.DialConfig(url, cfg); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

func (p *amqpPeer) name() string { return "rabbitmq" }
func (p *amqpPeer) pids() []int  { return p.procs }

func (p *amqpPeer) version() string {
	v, _ := p.pub.Properties["version"].(string)
	return "RabbitMQ " + v
}

func (p *amqpPeer) close() {
	for _, c := range []*amqp.Connection{p.pub, p.sub} {
		if c != nil {
			_ = c.Close()
		}
	}
}

// amqpQueue is one queue (groups == 1: publish to it through the default
// exchange) or a fanout exchange with a queue per group.
type amqpQueue struct {
	p             *amqpPeer
	ctx           context.Context
	exchange, key string
	queues        []string
	prefetch      int
}

func (p *amqpPeer) open(ctx context.Context, queue string, groups, prefetch int) (peerQueue, error) {
	ch, err := p.pub.Channel()
	if err != nil {
		return nil, err
	}
	defer ch.Close()
	name := peerName(queue)
	q := &amqpQueue{p: p, ctx: ctx, prefetch: prefetch}
	if groups == 1 {
		q.queues, q.key = []string{name}, name
	} else {
		q.exchange = name
		for g := range groups {
			q.queues = append(q.queues, fmt.Sprintf("%s-g%d", name, g))
		}
	}
	_ = q.remove() // a leftover of a run killed midway
	if q.exchange != "" {
		if err := ch.ExchangeDeclare(q.exchange, "fanout", true, false, false, false, nil); err != nil {
			return nil, err
		}
	}
	for _, n := range q.queues {
		if _, err := ch.QueueDeclare(n, true, false, false, false, nil); err != nil {
			_ = q.remove()
			return nil, err
		}
		if q.exchange != "" {
			if err := ch.QueueBind(n, "", q.exchange, false, nil); err != nil {
				_ = q.remove()
				return nil, err
			}
		}
	}
	return q, nil
}

func (q *amqpQueue) remove() error {
	ch, err := q.p.pub.Channel()
	if err != nil {
		return err
	}
	defer func() { _ = ch.Close() }() // the last channel opened
	var errs []error
	for _, n := range q.queues {
		if _, err := ch.QueueDelete(n, false, false, false); err != nil {
			errs = append(errs, err)
			// A failed command closes the channel.
			if ch, err = q.p.pub.Channel(); err != nil {
				return errors.Join(append(errs, err)...)
			}
		}
	}
	if q.exchange != "" {
		errs = append(errs, ch.ExchangeDelete(q.exchange, false, false))
	}
	return errors.Join(errs...)
}

type amqpProducer struct {
	q  *amqpQueue
	ch *amqp.Channel
}

func (q *amqpQueue) producer() (peerProducer, error) {
	ch, err := q.p.pub.Channel()
	if err != nil {
		return nil, err
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, err
	}
	return &amqpProducer{q: q, ch: ch}, nil
}

// publish sends a persistent message; the wait is for its confirm (the
// broker stored it), at most 10 s.
func (pr *amqpProducer) publish(body []byte) (func() error, error) {
	dc, err := pr.ch.PublishWithDeferredConfirmWithContext(pr.q.ctx, pr.q.exchange, pr.q.key, false, false,
		amqp.Publishing{DeliveryMode: amqp.Persistent, Body: body})
	if err != nil {
		return nil, err
	}
	return func() error {
		ctx, cancel := context.WithTimeout(pr.q.ctx, 10*time.Second)
		defer cancel()
		ok, err := dc.WaitContext(ctx)
		if err == nil && !ok {
			err = errNacked
		}
		return err
	}, nil
}

func (pr *amqpProducer) close() { _ = pr.ch.Close() }

type amqpConsumer struct {
	ch         *amqp.Channel
	deliveries <-chan amqp.Delivery
}

func (q *amqpQueue) consumer(group int) (peerConsumer, error) {
	ch, err := q.p.sub.Channel()
	if err != nil {
		return nil, err
	}
	c := &amqpConsumer{ch: ch}
	if err = ch.Qos(q.prefetch, 0, false); err == nil {
		c.deliveries, err = ch.Consume(q.queues[group], "", false, false, false, false, nil)
	}
	if err != nil {
		_ = ch.Close()
		return nil, err
	}
	return c, nil
}

// receive takes the first delivery within wait and then those already
// there, up to max, and acknowledges them in one ack (multiple).
func (c *amqpConsumer) receive(max int, wait time.Duration, got func([]byte)) (int, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	var last uint64
	n := 0
	take := func(d amqp.Delivery) {
		if got != nil {
			got(d.Body)
		}
		last = d.DeliveryTag
		n++
	}
	select {
	case d, ok := <-c.deliveries:
		if !ok {
			return 0, errors.New("the consumer's channel closed")
		}
		take(d)
	case <-t.C:
		return 0, nil
	}
more:
	for n < max {
		select {
		case d, ok := <-c.deliveries:
			if !ok {
				break more
			}
			take(d)
		default:
			break more
		}
	}
	return n, c.ch.Ack(last, n > 1)
}

// close closes the channel: what it did not acknowledge goes back to the
// queue.
func (c *amqpConsumer) close() { _ = c.ch.Close() }
