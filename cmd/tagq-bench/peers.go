package main

// Peers: the systems a user would pick instead of tagq (DESIGN.md §7), run
// in the same run on the same machine as tagq and raw Redis, doing the same
// work: same body size, producers x consumers and batch size. A producer
// publishes a batch and waits until every message of it is confirmed
// stored; a consumer takes up to a batch, then acknowledges it. W2's tags
// are independent consumer groups: JetStream durable consumers on one
// stream, RabbitMQ queues bound to one fanout exchange.
//
// W3's producer keeps up to 8 messages unconfirmed (as tagq-stream's
// Publish window at batch 1), so that a confirmation's round trip does not
// set the rate: RabbitMQ confirms a persistent message in a few ms here.
//
// nats (peer_nats.go): a stream with file storage, durable pull consumers,
// explicit ack, AckWait 30 s; PublishAsync with the batch as the in-flight
// window; Fetch(batch) and a plain (not synchronous) Ack per message.
//
// rabbitmq (peer_amqp.go): durable classic queues, persistent messages,
// publisher confirms with the batch as the in-flight window, manual ack of
// each received batch (multiple), prefetch 10 x batch, one channel per
// producer and per consumer.
//
// Their server CPU is the nats-server or beam.smp processes' (found in
// /proc by name, when the peer is on this machine); their Redis CPU is 0.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// peer is a connected peer system.
type peer interface {
	name() string
	version() string // the server's, as it announced itself
	// pids are the server's processes on this machine (for their CPU), if
	// it runs here.
	pids() []int
	// open makes a fresh queue read by groups independent consumer groups,
	// whose consumers hold at most prefetch unacknowledged messages (where
	// the system has such a limit).
	open(ctx context.Context, queue string, groups, prefetch int) (peerQueue, error)
	close()
}

// peerQueue is one queue (stream, or exchange and queues) of a peer.
type peerQueue interface {
	producer() (peerProducer, error)
	consumer(group int) (peerConsumer, error)
	// remove deletes the queue and everything in it.
	remove() error
}

type peerProducer interface {
	// publish sends a message and returns, without waiting, a wait that
	// returns once the server confirmed storing it (bounded in time).
	publish(body []byte) (wait func() error, err error)
	close()
}

// sendAll publishes every body, all in flight at once, and returns once
// the server confirmed storing each.
func sendAll(p peerProducer, bodies [][]byte) error {
	waits := make([]func() error, 0, len(bodies))
	for _, b := range bodies {
		w, err := p.publish(b)
		if err != nil {
			return err
		}
		waits = append(waits, w)
	}
	for _, w := range waits {
		if err := w(); err != nil {
			return err
		}
	}
	return nil
}

// windowed keeps up to n publishes unconfirmed: W3's producer, so that
// the confirmation's round trip does not set the rate.
type windowed struct {
	p       peerProducer
	n       int
	pending []func() error
}

func (w *windowed) send(body []byte) error {
	wait, err := w.p.publish(body)
	if err != nil {
		return err
	}
	w.pending = append(w.pending, wait)
	if len(w.pending) > w.n {
		err, w.pending = w.pending[0](), w.pending[1:]
	}
	return err
}

// flush waits for every publish still unconfirmed.
func (w *windowed) flush() error {
	var first error
	for _, wait := range w.pending {
		if err := wait(); err != nil && first == nil {
			first = err
		}
	}
	w.pending = nil
	return first
}

type peerConsumer interface {
	// receive waits up to wait for a message, takes up to max that are
	// there, calls got (if not nil) with each body as it arrives, and
	// acknowledges them. It returns how many it took.
	receive(max int, wait time.Duration, got func(body []byte)) (int, error)
	close()
}

// peerConfig is which peers to run and where.
type peerConfig struct {
	list     string // comma-separated: nats, rabbitmq, goaws; "none" for none
	natsURL  string
	amqpURL  string
	goawsURL string
}

// goawsPeer is goaws's URL when the list names it and it answers ("" when
// not named).
func goawsPeer(cfg peerConfig) (string, error) {
	for _, name := range strings.Split(cfg.list, ",") {
		if strings.TrimSpace(name) == "goaws" {
			return cfg.goawsURL, answers(cfg.goawsURL, "4100")
		}
	}
	return "", nil
}

// dialPeers connects to each peer asked for. A peer whose port does not
// answer is skipped, with a line saying so on stdout.
func dialPeers(ctx context.Context, cfg peerConfig) []peer {
	var out []peer
	for _, name := range strings.Split(cfg.list, ",") {
		var p peer
		var err error
		switch name = strings.TrimSpace(name); name {
		case "", "none", "goaws": // goaws: W1's SQS rows only (goawsPeer)
			continue
		case "nats":
			if err = answers(cfg.natsURL, "4222"); err == nil {
				p, err = dialNATS(ctx, cfg.natsURL)
			}
		case "rabbitmq":
			if err = answers(cfg.amqpURL, "5672"); err == nil {
				p, err = dialAMQP(cfg.amqpURL)
			}
		default:
			err = fmt.Errorf("unknown peer (want nats, rabbitmq, goaws or none)")
		}
		if err != nil {
			fmt.Printf("%s: skipped: %v\n\n", name, err)
			continue
		}
		out = append(out, p)
	}
	return out
}

// answers checks that something accepts TCP connections at the URL's host
// and port (default port def).
func answers(rawURL, def string) error {
	addr, err := hostPort(rawURL, def)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return fmt.Errorf("not answering on %s", addr)
	}
	return c.Close()
}

func hostPort(rawURL, def string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	port := u.Port()
	if port == "" {
		port = def
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// localPIDs returns the pids of the processes named comm when the URL's
// host is this machine (a loopback address or localhost), else none.
func localPIDs(rawURL, comm string) []int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	if h := u.Hostname(); h != "localhost" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return nil
		}
	}
	return pidsNamed(comm)
}

// pidsNamed scans /proc/*/comm for processes named comm.
func pidsNamed(comm string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err == nil && strings.TrimSpace(string(b)) == comm {
			pids = append(pids, pid)
		}
	}
	return pids
}

// peerName is a queue or stream name of this run: prefix tagqbench, and
// the pid so that two runs do not share queues.
func peerName(queue string) string {
	return fmt.Sprintf("tagqbench-%d-%s", os.Getpid(), queue)
}

// peerLoad is one peer run: groups consumer groups, consumers spread over
// them (consumer i reads group i % groups), each receiving up to batch
// messages per call; produce is one producer step.
type peerLoad struct {
	workload, queue      string
	groups               int
	producers, consumers int
	batch                int
	produce              func(l *loop, p peerProducer) error
	got                  func(body []byte) // per message received, or nil
	flush                func() error      // after the run, before the producers close, or nil
	note                 string
}

// runPeer runs a load on a peer and removes its queue afterwards. Messages
// counted are those received and acknowledged over all groups; producers
// are held back by group 0's consumers, as tagq's and raw's by their first
// tag's.
func (e *env) runPeer(p peer, pl peerLoad) (r result) {
	r = result{workload: pl.workload, system: p.name(), note: pl.note}
	fail := func(err error) result {
		r.note = "error: " + err.Error()
		return r
	}
	q, err := p.open(e.ctx, pl.queue, pl.groups, 10*pl.batch)
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err := q.remove(); err != nil && r.note == pl.note {
			r.note = strings.TrimPrefix(pl.note+"; removing the queue: "+err.Error(), "; ")
		}
	}()
	prods := make([]peerProducer, pl.producers)
	cons := make([]peerConsumer, pl.consumers)
	defer func() {
		for _, c := range cons {
			if c != nil {
				c.close()
			}
		}
		for _, pr := range prods {
			if pr != nil {
				pr.close()
			}
		}
	}()
	for i := range prods {
		if prods[i], err = q.producer(); err != nil {
			return fail(err)
		}
	}
	for i := range cons {
		if cons[i], err = q.consumer(i % pl.groups); err != nil {
			return fail(err)
		}
	}
	var delivered atomic.Int64
	mt := startMeterPIDs(e.ctx, e.nodes, p.pids())
	l, el := e.runIdx(pl.producers, pl.consumers, func(l *loop, i int) error {
		return pl.produce(l, prods[i])
	}, func(l *loop, i int) error {
		n, err := cons[i].receive(pl.batch, time.Second, pl.got)
		delivered.Add(int64(n))
		if i%pl.groups == 0 {
			l.consumed.Add(int64(n))
		}
		return err
	})
	r.msgs = delivered.Load()
	mt.stop(&r)
	r.elapsed = el
	r.cpuRedis = 0 // Redis idles; the peer's own server is the server column
	r.scripts = scriptStats{}
	if pl.flush != nil {
		if err := pl.flush(); err != nil {
			l.fail(err) // the run's first error stays first
		}
	}
	return check(r, l)
}

// sendBatch is the W1/W2 producer step: batch bodies in flight, then
// counted.
func sendBatch(bodies [][]byte) func(l *loop, p peerProducer) error {
	return func(l *loop, p peerProducer) error {
		err := sendAll(p, bodies)
		l.produced.Add(int64(len(bodies)))
		return err
	}
}

func repeatBody(body []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = body
	}
	return out
}

// peersW1 is W1 on every peer: 4 producers x 4 consumers.
func (e *env) peersW1(name string, batch int) []result {
	var out []result
	for _, p := range e.peers {
		out = append(out, e.runPeer(p, peerLoad{workload: name, queue: "w1", groups: 1, producers: 4, consumers: 4,
			batch: batch, produce: sendBatch(repeatBody(e.body, batch))}))
	}
	return out
}

// peersW2 is W2's deliveries on every peer: 4 producers (batch 10), one
// consumer per group (batch 10).
func (e *env) peersW2(name string, groups int) []result {
	var out []result
	for _, p := range e.peers {
		out = append(out, e.runPeer(p, peerLoad{workload: name, queue: "w2", groups: groups, producers: 4, consumers: groups,
			batch: 10, produce: sendBatch(repeatBody(e.body, 10))}))
	}
	return out
}

// peersW3 is W3 on every peer: one producer sending stamped messages at
// the pace given, up to 8 unconfirmed (as tagq-stream's Publish window at
// batch 1), 4 consumers taking up to 10.
func (e *env) peersW3(name string, pace func(send func() error) func(l *loop) error) []result {
	var out []result
	for _, p := range e.peers {
		lat := &latencies{}
		w := &windowed{n: publishWindow(1)}
		step := pace(func() error { return w.send(stamped(len(e.body))) })
		r := e.runPeer(p, peerLoad{workload: name, queue: "w3", groups: 1, producers: 1, consumers: 4, batch: 10,
			produce: func(l *loop, p peerProducer) error { w.p = p; return step(l) },
			got:     func(b []byte) { lat.add(since(b)) },
			flush:   func() error { return w.flush() }})
		r.p50, r.p99, r.max = lat.pct()
		out = append(out, r)
	}
	return out
}

var errNacked = errors.New("the server refused a message (nack)")
