package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsPeer is NATS JetStream: a stream with file storage per queue (work
// queue retention with one group, interest retention with several, so that
// an acknowledged message is gone as in tagq), one durable pull consumer
// with explicit ack per group. Producers share one connection and consumers
// another, as RabbitMQ's do.
type natsPeer struct {
	url      string
	pub, sub *nats.Conn
	pjs, sjs jetstream.JetStream
	procs    []int
}

func dialNATS(ctx context.Context, url string) (*natsPeer, error) {
	p := &natsPeer{url: url, procs: localPIDs(url, "nats-server")}
	var err error
	for _, c := range []**nats.Conn{&p.pub, &p.sub} {
		if *c, err = nats.Connect(url, nats.Name("tagq-bench"), nats.Timeout(2*time.Second)); err != nil {
			p.close()
			return nil, err
		}
	}
	// Unconfirmed publishes fail after 10 s rather than hold a run.
	if p.pjs, err = jetstream.New(p.pub, jetstream.WithPublishAsyncTimeout(10*time.Second)); err == nil {
		p.sjs, err = jetstream.New(p.sub)
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err = p.pjs.AccountInfo(ctx)
	}
	if err != nil {
		p.close()
		return nil, fmt.Errorf("JetStream at %s: %w", url, err)
	}
	return p, nil
}

func (p *natsPeer) name() string { return "nats" }
func (p *natsPeer) pids() []int  { return p.procs }

// version is the server's, as it announced itself.
func (p *natsPeer) version() string { return "nats-server " + p.pub.ConnectedServerVersion() }

func (p *natsPeer) close() {
	for _, c := range []*nats.Conn{p.pub, p.sub} {
		if c != nil {
			c.Close()
		}
	}
}

type natsQueue struct {
	p       *natsPeer
	ctx     context.Context
	stream  string
	subject string
	cons    []jetstream.Consumer
}

func (p *natsPeer) open(ctx context.Context, queue string, groups, _ int) (peerQueue, error) {
	name := peerName(queue)
	q := &natsQueue{p: p, ctx: ctx, stream: name, subject: name + ".m"}
	retention := jetstream.WorkQueuePolicy
	if groups > 1 {
		retention = jetstream.InterestPolicy
	}
	_ = p.pjs.DeleteStream(ctx, name) // a leftover of a run killed midway
	s, err := p.pjs.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{q.subject},
		Storage: jetstream.FileStorage, Retention: retention})
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", name, err)
	}
	for g := range groups {
		if _, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: fmt.Sprintf("g%d", g),
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second}); err != nil {
			_ = q.remove()
			return nil, fmt.Errorf("create consumer g%d: %w", g, err)
		}
		// Consumers read through the consumers' connection.
		c, err := p.sjs.Consumer(ctx, name, fmt.Sprintf("g%d", g))
		if err != nil {
			_ = q.remove()
			return nil, err
		}
		q.cons = append(q.cons, c)
	}
	return q, nil
}

func (q *natsQueue) remove() error { return q.p.pjs.DeleteStream(q.ctx, q.stream) }

type natsProducer struct{ q *natsQueue }

func (q *natsQueue) producer() (peerProducer, error) { return &natsProducer{q: q}, nil }

// publish is PublishAsync; the wait is for the stream's acknowledgement
// (the jetstream context fails it after 10 s).
func (pr *natsProducer) publish(body []byte) (func() error, error) {
	f, err := pr.q.p.pjs.PublishAsync(pr.q.subject, body)
	if err != nil {
		return nil, err
	}
	return func() error {
		select {
		case <-f.Ok():
			return nil
		case err := <-f.Err():
			return err
		}
	}, nil
}

func (pr *natsProducer) close() {}

type natsConsumer struct{ c jetstream.Consumer }

func (q *natsQueue) consumer(group int) (peerConsumer, error) {
	return &natsConsumer{c: q.cons[group]}, nil
}

// receive is one Fetch: up to max messages, waiting up to wait for them,
// each acknowledged as it arrives with a plain Ack (not AckSync: the ack is
// sent, not confirmed, which is what JetStream consumers do for
// throughput).
func (c *natsConsumer) receive(max int, wait time.Duration, got func([]byte)) (int, error) {
	batch, err := c.c.Fetch(max, jetstream.FetchMaxWait(wait))
	if err != nil {
		return 0, err
	}
	n := 0
	for m := range batch.Messages() {
		if got != nil {
			got(m.Data())
		}
		if err := m.Ack(); err != nil {
			return n, err
		}
		n++
	}
	return n, batch.Error()
}

func (c *natsConsumer) close() {}
