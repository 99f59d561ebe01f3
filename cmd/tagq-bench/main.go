// Command tagq-bench runs tagq's benchmark workloads (DESIGN.md §7) against
// a tagqd and against raw Redis streams doing the same work through go-redis
// (XADD / XREADGROUP / XACK, same batching), in one run on the same Redis,
// and prints Markdown tables: msg/s, the ratios to raw and to NATS
// JetStream, latency percentiles, CPU seconds per 1,000 messages of the
// server (tagqd, or a peer's server), of Redis and of the client (this
// process), and Redis memory per message.
//
// W1 also runs through tagqd's SQS endpoint (sqs.go: aws-sdk-go-v2, rows
// tagq-sqs and tagq-sqs-query) and on the peer goaws (--goaws-url), when it
// answers.
//
// W1, W2 (16 tags) and W3 also run through tagq's streaming RPCs
// (stream.go: Publish and Consume, rows tagq-stream) and on the peers a user would compare tagq
// with (peers.go), when they answer: NATS JetStream (--nats-url) and
// RabbitMQ (--amqp-url); --peers none leaves them out.
//
//	go run ./cmd/tagq-bench --redis-url redis://127.0.0.1:6379/0
//
// W1 also runs through the floor server (floor.go): tagq's gRPC API in
// front of nothing but the raw commands, a lower bound on what a gRPC
// service with this API over Redis streams costs on the same machine. W4
// runs in interleaved rounds (--rounds) and reports medians. WT (wt.go:
// topic queues against a plain queue in W1's shape, interleaved rounds)
// W6 (idle queues, with 1, 2 and 4 tagqd replicas: --w6-replicas) and W7
// (recovery: calls on one queue while another's in-flight messages come
// back, on the embedded store and on Redis) run only when named in
// --workloads.
//
// It starts its own tagqd (built from this repository) on that Redis under
// the key prefix tagqbench, and removes its keys afterwards. Every run is
// bounded by --duration; W5 by --backlog messages.
//
// --partitions N creates W1's and W2's tagq queues (unary, streaming and
// SQS rows) with N partitions (issue 25; 1, the default, sends no
// partitions field). --redis-cluster host:port,... runs W1 and W2 on a
// Redis Cluster instead of --redis-url (cluster.go): tagqd gets the seeds,
// the raw rows go through a cluster client, the floor rows are left out,
// and each table is followed by each master's share of the Redis CPU, the
// replicas' CPU and the CPU of all processes per 1,000 messages; a
// queue's keys are counted on each master once it is created.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	tagq "github.com/tagq/tagq/clients/go"
	"github.com/tagq/tagq/internal/tagqdtest"
)

func main() {
	url := flag.String("redis-url", "redis://127.0.0.1:6379/0", "Redis both systems use")
	seeds := flag.String("redis-cluster", "", "a Redis Cluster to use instead of --redis-url: seed addresses host:port,... (as tagqd's); W1 and W2 only, no floor rows")
	partitions := flag.Int("partitions", 1, "partitions of W1's and W2's tagq queues (1-64; 1: today's queue, no partitions field sent)")
	dur := flag.Duration("duration", 10*time.Second, "length of each throughput/latency run")
	only := flag.String("workloads", "W1,W2,W3,W4,W5", "workloads to run (W6, idle queues, W7, recovery, and WT, topic queues, run only when named)")
	backlog := flag.Int("backlog", 1_000_000, "W5 backlog size (messages)")
	inflight := flag.Int("inflight", 100_000, "W5 messages held in flight on one tag")
	size := flag.Int("size", 1024, "message body bytes")
	tagqd := flag.String("tagqd", "", "a tagqd binary to run (default: build this repository's)")
	tagqdArgs := flag.String("tagqd-args", "", "more flags for the tagqd it runs, space-separated (e.g. \"--ack-replicas 1\")")
	floorServe := flag.Bool("serve-floor", false, "internal: run the floor server (floor.go) and print its address")
	floorPrefix := flag.String("floor-prefix", "", "internal: the floor server's key prefix")
	idleQueues := flag.Int("idle-queues", 5000, "W6: idle queues to hold, 2 tags each (W6 runs only when named in --workloads)")
	w6Replicas := flag.String("w6-replicas", "1,2,4", "W6: the numbers of tagqd replicas on the Redis to measure, one run each")
	w6Ramp := flag.Duration("w6-ramp", 35*time.Second, "W6: how long the background work settles before each measure")
	w6Scrape := flag.Duration("w6-scrape", 15*time.Second, "W6: how often each replica's /metrics is scraped, as Prometheus would (0: never)")
	w7Messages := flag.Int("w7-messages", 100_000, "W7: messages sent to the loaded queue (W7 runs only when named in --workloads)")
	w7Inflight := flag.Int("w7-inflight", 20_000, "W7: of them, received and left in flight")
	w7Visibility := flag.Duration("w7-visibility", 30*time.Second, "W7: the visibility of those receives (whole seconds)")
	w7Stores := flag.String("w7-stores", "embedded,redis", "W7: the stores to run it on: embedded (tagqd's in-process store) and redis (--redis-url)")
	w7Scrape := flag.Duration("w7-scrape", 5*time.Second, "W7: how often tagqd's /metrics is scraped meanwhile (0: never)")
	rounds := flag.Int("rounds", 3, "W4 and WT: rounds of 0/1/10 % poison (W4), of plain and topic queue (WT), interleaved; the tables show each setting's median run")
	topics := flag.Int("topics", 1000, "WT: topics the topic queue's messages cycle over")
	wtBatch := flag.Int("wt-batch", 10, "WT: batch size of sends and receives (1-10)")
	credit := flag.Int("stream-credit", 100, "tagq-stream: max_outstanding_messages of each Consume stream")
	w1Systems := flag.String("w1-systems", "tagq,tagq-stream,tagq-sqs,floor,raw", "W1: which of tagq, tagq-stream, tagq-sqs (the SQS endpoint), floor and raw to run (peers: --peers)")
	w1Batches := flag.String("w1-batches", "1,10", "W1: the batch sizes to run, in order")
	var peers peerConfig
	flag.StringVar(&peers.list, "peers", "nats,rabbitmq,goaws", "peer systems to run W1, W2 and W3 on as well (nats, rabbitmq; goaws: W1's SQS rows only), or none")
	flag.StringVar(&peers.goawsURL, "goaws-url", "http://127.0.0.1:4100", "goaws, an in-memory SQS emulator (peer goaws; W1's SQS rows)")
	flag.StringVar(&peers.natsURL, "nats-url", "nats://127.0.0.1:4222", "NATS server with JetStream (peer nats)")
	flag.StringVar(&peers.amqpURL, "amqp-url", "amqp://guest:guest@127.0.0.1:5672/", "RabbitMQ (peer rabbitmq)")
	flag.Parse()
	if *floorServe {
		if err := serveFloor(*url, *floorPrefix); err != nil {
			fmt.Fprintln(os.Stderr, "tagq-bench floor server:", err)
			os.Exit(1)
		}
		return
	}
	if *partitions < 1 || *partitions > 64 {
		fmt.Fprintln(os.Stderr, "tagq-bench: --partitions must be from 1 to 64")
		os.Exit(2)
	}
	if *seeds != "" {
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "redis-url" {
				fmt.Fprintln(os.Stderr, "tagq-bench: give --redis-url or --redis-cluster, not both")
				os.Exit(2)
			}
		})
		for _, w := range strings.Split(*only, ",") {
			if w = strings.TrimSpace(w); w != "W1" && w != "W2" {
				fmt.Fprintf(os.Stderr, "tagq-bench: --redis-cluster runs W1 and W2 only, not %q\n", w)
				os.Exit(2)
			}
		}
	}
	if *rounds < 1 {
		fmt.Fprintln(os.Stderr, "tagq-bench: --rounds must be at least 1")
		os.Exit(2)
	}
	if *credit < 1 {
		fmt.Fprintln(os.Stderr, "tagq-bench: --stream-credit must be at least 1")
		os.Exit(2)
	}
	w1 := map[string]bool{}
	for _, sys := range strings.Split(*w1Systems, ",") {
		switch sys = strings.TrimSpace(sys); sys {
		case "tagq", "tagq-stream", "tagq-sqs", "floor", "raw":
			w1[sys] = true
		default:
			fmt.Fprintf(os.Stderr, "tagq-bench: --w1-systems: %q is none of tagq, tagq-stream, tagq-sqs, floor, raw\n", sys)
			os.Exit(2)
		}
	}
	if *topics < 1 || *wtBatch < 1 || *wtBatch > 10 {
		fmt.Fprintln(os.Stderr, "tagq-bench: --topics must be at least 1, --wt-batch from 1 to 10")
		os.Exit(2)
	}
	var batches []int
	for _, b := range strings.Split(*w1Batches, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(b))
		if err != nil || n < 1 || n > 10 {
			fmt.Fprintf(os.Stderr, "tagq-bench: --w1-batches: %q is not a batch size from 1 to 10\n", b)
			os.Exit(2)
		}
		batches = append(batches, n)
	}
	w6 := w6Config{queues: *idleQueues, ramp: *w6Ramp, scrape: *w6Scrape}
	for _, r := range strings.Split(*w6Replicas, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(r))
		if err != nil || n < 1 || n > 16 {
			fmt.Fprintf(os.Stderr, "tagq-bench: --w6-replicas: %q is not a number of replicas from 1 to 16\n", r)
			os.Exit(2)
		}
		w6.replicas = append(w6.replicas, n)
	}
	w7 := w7Config{messages: *w7Messages, inflight: *w7Inflight, visibility: *w7Visibility, scrape: *w7Scrape}
	for _, st := range strings.Split(*w7Stores, ",") {
		switch st = strings.TrimSpace(st); st {
		case "embedded", "redis":
			w7.stores = append(w7.stores, st)
		default:
			fmt.Fprintf(os.Stderr, "tagq-bench: --w7-stores: %q is neither embedded nor redis\n", st)
			os.Exit(2)
		}
	}
	if w7.inflight < 1 || w7.inflight > w7.messages || w7.visibility < time.Second {
		fmt.Fprintln(os.Stderr, "tagq-bench: --w7-inflight must be from 1 to --w7-messages, --w7-visibility at least 1s")
		os.Exit(2)
	}
	if err := run(*url, *seeds, *partitions, *dur, *only, *backlog, *inflight, *size, *rounds, *credit, w6, w7, *tagqd, strings.Fields(*tagqdArgs), peers, w1, batches,
		wtConfig{topics: *topics, batch: *wtBatch}); err != nil {
		fmt.Fprintln(os.Stderr, "tagq-bench:", err)
		os.Exit(1)
	}
}

func run(url, seeds string, partitions int, dur time.Duration, only string, backlog, inflight, size, rounds, credit int, w6 w6Config, w7 w7Config, bin string, extra []string, pc peerConfig,
	w1 map[string]bool, w1Batches []int, wtc wtConfig) error {
	ctx := context.Background()
	var rdb redis.UniversalClient
	var nodes []redisNode
	store := []string{"--redis-url", url} // tagqd's
	where := ""
	if seeds != "" {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(seeds, ","), PoolSize: 256})
		defer cc.Close()
		if err := cc.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("redis cluster at %s: %w", seeds, err)
		}
		var err error
		if nodes, err = clusterNodes(ctx, cc); err != nil {
			return err
		}
		rdb, store = cc, []string{"--redis-cluster", seeds}
		var ms, rs []string
		for _, n := range nodes {
			if n.replica {
				rs = append(rs, n.addr)
			} else {
				ms = append(ms, n.addr)
			}
		}
		where = fmt.Sprintf("Redis Cluster: masters %s, replicas %s", strings.Join(ms, " "), strings.Join(rs, " "))
	} else {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return err
		}
		opt.PoolSize = 256
		c := redis.NewClient(opt)
		defer c.Close()
		if err := c.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("redis at %s: %w", url, err)
		}
		rdb, nodes, where = c, singleNode(c), "at "+opt.Addr
	}
	defer func() {
		if seeds != "" {
			for _, n := range nodes {
				_ = n.c.Close()
			}
		}
	}()
	dir, err := os.MkdirTemp("", "tagq-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		if bin, err = tagqdtest.Build(dir); err != nil {
			return err
		}
	}
	const prefix = "tagqbench"
	tagqdArgs := append(append(store, "--key-prefix", prefix, "--log-level", "error", "--pprof"), extra...)
	d, err := tagqdtest.Start(bin, tagqdArgs...)
	if err != nil {
		return err
	}
	defer func() { _, _ = d.Stop(); cleanup(ctx, nodes, prefix) }()
	c, err := tagq.Dial(d.GRPC)
	if err != nil {
		return err
	}
	defer c.Close()
	e := &env{ctx: ctx, rdb: rdb, nodes: nodes, cluster: seeds != "", prefix: prefix, partitions: partitions, spreadShown: map[string]bool{},
		m: c.Messages, q: c.Queues, pid: d.PID(), dur: dur, body: make([]byte, size),
		rawKey: func(n string) string { return prefix + "-raw:{" + n + "}" }, maxAhead: 20_000, streamCredit: credit, w1Systems: w1}
	defer cleanup(ctx, nodes, prefix+"-raw")

	fmt.Fprintf(os.Stderr, "tagqd profiles: http://%s/debug/pprof/\n", d.HTTP)
	ver, _ := nodes[0].c.Info(ctx, "server").Result()
	fmt.Printf("# tagq-bench %s\n\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("machine: %d CPUs (GOMAXPROCS %d), %s; Redis %s %s; %d-byte bodies; %s per run\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), field(ver, "redis_version"), where, size, dur)
	if partitions > 1 {
		fmt.Printf("W1's and W2's tagq queues: %d partitions\n\n", partitions)
	}
	want := func(w string) bool { return strings.Contains(only, w) }
	if want("W1") || want("W2") || want("W3") || want("W4") || want("WT") {
		if e.streaming, err = streamsServed(ctx, e.m); err != nil {
			return fmt.Errorf("asking tagqd for a Publish stream: %w", err)
		}
		if e.streaming {
			fmt.Printf("tagq-stream: Publish and Consume streams, %d (batch 1: %d) publish frames in flight, %d messages outstanding per Consume stream\n\n",
				publishWindow(10), publishWindow(1), credit)
		} else {
			fmt.Printf("tagq-stream: skipped: tagqd answers Publish with UNIMPLEMENTED\n\n")
		}
	}
	if want("W1") {
		if e.w1Runs("tagq-sqs") {
			e.sqsAddr = d.SQS
		}
		if u, gerr := goawsPeer(pc); gerr != nil {
			fmt.Printf("goaws: skipped: %v\n\n", gerr)
		} else if u != "" {
			e.goawsURL = u
			fmt.Printf("peer goaws: %s, server processes %v\n\n", u, localPIDs(u, "goaws"))
		}
	}
	if want("W1") || want("W2") || want("W3") {
		e.peers = dialPeers(ctx, pc)
		for _, p := range e.peers {
			defer p.close()
			fmt.Printf("peer %s: %s, server processes %v\n\n", p.name(), p.version(), p.pids())
		}
	}
	if seeds != "" && want("W1") && e.w1Runs("floor") {
		fmt.Printf("floor: skipped on a Redis Cluster (the floor server takes --redis-url only)\n\n")
	}
	if (want("W1") || want("W3") || want("W4")) && seeds == "" {
		fp, err := startFloor(url, prefix+"-raw")
		if err != nil {
			return err
		}
		defer fp.stop()
		fc, err := tagq.Dial(fp.addr)
		if err != nil {
			return err
		}
		defer fc.Close()
		e.floor, e.floorPID = fc.Messages, fp.cmd.Process.Pid
	}
	if want("W1") {
		var rs []result
		for _, b := range w1Batches {
			rs = append(rs, e.w1(b)...)
		}
		e.table("W1: one queue, 4 producers x 4 consumers, send+receive+delete", rs)
	}
	if want("W2") {
		var rs []result
		for _, n := range []int{1, 4, 16, 64} {
			rs = append(rs, e.w2(n)...)
		}
		e.table("W2: fan-out (send-only msg/s; deliveries/s = messages received and deleted over all tags)", rs)
	}
	if want("W3") {
		e.table("W3: end-to-end latency, 1 producer at a fixed rate, 4 long-polling consumers", e.w3(1000))
	}
	if want("W4") {
		// The cost of poison is a difference of a few percent between runs
		// that vary more than that on a busy machine: the settings run in
		// interleaved rounds, and each round's cost is against the 0 % run
		// next to it.
		for _, nack := range []bool{true, false} {
			runs := map[int][]result{} // poison % -> tagq, raw, tagq, raw, ...
			for range rounds {
				for _, p := range []int{0, 1, 10} {
					runs[p] = append(runs[p], e.w4(p, nack)...)
					runs[p] = append(runs[p], e.streamW4(p, nack)...)
				}
			}
			var rs []result
			for _, p := range []int{0, 1, 10} {
				rs = append(rs, medianRun(runs[p], "tagq"))
				if e.streaming {
					rs = append(rs, medianRun(runs[p], "tagq-stream"))
				}
				if nack {
					rs = append(rs, medianRun(runs[p], "floor"))
				}
				rs = append(rs, medianRun(runs[p], "raw"))
			}
			title := "W4: redrive with poison messages (max receive count 3; the consumer leaves poison undeleted, visibility 1 s)"
			if nack {
				title = "W4: redrive with poison messages (max receive count 3; the consumer nacks poison at once)"
			}
			e.table(fmt.Sprintf("%s, median of %d rounds", title, rounds), rs)
			for _, p := range []int{1, 10} {
				for _, sys := range []string{"tagq", "tagq-stream", "floor", "raw"} {
					if (sys == "tagq-stream" && !e.streaming) || (sys == "floor" && !nack) {
						continue
					}
					fmt.Printf("- %s, %d %% poison vs 0 %%: %s\n", sys, p, poisonCost(runs[0], runs[p], sys))
				}
			}
			fmt.Println()
		}
	}
	if want("WT") {
		e.wt(wtc.topics, wtc.batch, rounds)
	}
	if want("W6") {
		w6.dur, w6.httpAddr = max(dur, 60*time.Second), d.HTTP
		w6.startExtra = func() (*tagqdtest.Daemon, error) { return tagqdtest.Start(bin, tagqdArgs...) }
		e.w6(w6)
	}
	if want("W7") {
		w7.bin, w7.redisArgs = bin, []string{"--redis-url", url, "--key-prefix", prefix + "-w7"}
		e.w7(w7)
		cleanup(ctx, nodes, prefix+"-w7")
	}
	if want("W5") {
		var ms []memResult
		for _, n := range []int{1, 4} {
			ms = append(ms, e.w5(n, backlog, inflight)...)
		}
		memTable(ms)
	}
	return nil
}

func field(info, name string) string {
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	return "?"
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}

func per1000(cpu time.Duration, n int64) string {
	if n == 0 || cpu == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", cpu.Seconds()*1000/float64(n))
}

// bySystem is the runs of one system, in order.
func bySystem(runs []result, system string) []result {
	var rs []result
	for _, r := range runs {
		if r.system == system {
			rs = append(rs, r)
		}
	}
	return rs
}

// medianRun picks, of one setting's runs on one system, the run with the
// median rate.
func medianRun(runs []result, system string) result {
	rs := bySystem(runs, system)
	slices.SortFunc(rs, func(a, b result) int { return cmp.Compare(a.rate(), b.rate()) })
	return rs[len(rs)/2]
}

// poisonCost is the change in good messages/s from the 0 % run to the
// poisoned run of the same round, per round, and their median.
func poisonCost(base, poisoned []result, system string) string {
	d := perRound(bySystem(base, system), bySystem(poisoned, system), func(b, p result) (float64, bool) {
		return (p.rate()/b.rate() - 1) * 100, b.rate() > 0
	})
	if len(d) == 0 {
		return "no runs"
	}
	each := make([]string, len(d))
	for i, x := range d {
		each[i] = fmt.Sprintf("%+.0f %%", x)
	}
	return fmt.Sprintf("%s by round, median %+.0f %%", strings.Join(each, ", "), median(d))
}

// perRound compares the runs of two settings round by round: f of each
// pair, where it says the pair counts.
func perRound(a, b []result, f func(a, b result) (float64, bool)) []float64 {
	var out []float64
	for i := range min(len(a), len(b)) {
		if x, ok := f(a[i], b[i]); ok {
			out = append(out, x)
		}
	}
	return out
}

// median is the middle of xs (the upper one of an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func (e *env) table(title string, rs []result) {
	writeTable(os.Stdout, title, rs)
	writeNodes(os.Stdout, e.nodes, rs)
	printLoad()
}

// printLoad prints the load average: other work on the machine moves
// every figure; say how busy it was.
func printLoad() {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average after the table's runs: %s\n\n", strings.Join(strings.Fields(string(b))[:3], " "))
	}
}

// writeTable prints results: rows of one workload, tagq (and the floor),
// raw, then the peers, each with its ratio to raw and to nats in the same
// workload; with latencies, the note gives p99 against nats's. Server CPU
// is tagqd's, the floor server's or the peer's.
func writeTable(w io.Writer, title string, rs []result) {
	fmt.Fprintf(w, "## %s\n\n", title)
	fmt.Fprintln(w, "| workload | system | msg/s | x raw | x NATS | p50 ms | p99 ms | max ms | server CPU s/1000 msg | Redis CPU s/1000 msg | client CPU s/1000 msg | note |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	raw, nats := map[string]result{}, map[string]result{}
	for _, r := range rs {
		switch r.system {
		case "raw":
			raw[r.workload] = r
		case "nats":
			nats[r.workload] = r
		}
	}
	ratio := func(r result, to map[string]result, system string) string {
		if b, ok := to[r.workload]; ok && r.system != system && b.rate() > 0 {
			return fmt.Sprintf("%.2f", r.rate()/b.rate())
		}
		return "-"
	}
	for _, r := range rs {
		note := r.note
		if b, ok := nats[r.workload]; ok && r.system != "nats" && r.p99 > 0 && b.p99 > 0 {
			note = strings.TrimPrefix(fmt.Sprintf("%s; p99 %.2f x NATS's", note, float64(r.p99)/float64(b.p99)), "; ")
		}
		if strings.HasPrefix(r.system, "tagq") {
			if r.partitions > 1 {
				note = strings.TrimPrefix(fmt.Sprintf("%s; %d partitions", note, r.partitions), "; ")
			}
			r.note = note
			note = scriptNote(r)
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.workload, r.system, r.rate(),
			ratio(r, raw, "raw"), ratio(r, nats, "nats"),
			ms(r.p50), ms(r.p99), ms(r.max), per1000(r.cpuTagqd, r.msgs), per1000(r.cpuRedis, r.msgs), per1000(r.cpuClient, r.msgs), note)
	}
	fmt.Fprintln(w)
}

// scriptNote is r's note followed by the Redis-side cost of tagq's
// scripts (INFO commandstats, EVALSHA), when it counted messages.
func scriptNote(r result) string {
	if r.msgs == 0 {
		return r.note
	}
	return strings.TrimPrefix(fmt.Sprintf("%s; %.0f script calls per 1,000 msg, %.1f µs of script time per msg", r.note,
		float64(r.scripts.calls)*1000/float64(r.msgs), float64(r.scripts.usec)/float64(r.msgs)), "; ")
}

func memTable(ms []memResult) {
	fmt.Printf("## W5: backlog of %d messages, %d held in flight on one tag\n\n", ms[0].backlog, ms[0].flights)
	fmt.Println("| system | tags | Redis bytes per message | per in-flight message (one tag) | drain msg/s (one tag) | tagq/raw drain |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	raw := map[int]float64{}
	for _, m := range ms {
		if m.system == "raw" {
			raw[m.tags] = m.drain.rate()
		}
	}
	for _, m := range ms {
		ratio := "-"
		if m.system == "tagq" && raw[m.tags] > 0 {
			ratio = fmt.Sprintf("%.2f", m.drain.rate()/raw[m.tags])
		}
		fmt.Printf("| %s | %d | %.0f | %.0f | %.0f | %s |\n", m.system, m.tags, m.perMessage, m.perInFlight, m.drain.rate(), ratio)
	}
	fmt.Println()
}

// cleanup deletes every key with the prefix, on each master: a DEL per
// key (a cluster node refuses one DEL of keys in different slots),
// pipelined.
func cleanup(ctx context.Context, nodes []redisNode, prefix string) {
	for _, n := range nodes {
		if n.replica {
			continue
		}
		iter := n.c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		p := n.c.Pipeline()
		for iter.Next(ctx) {
			p.Del(ctx, iter.Val())
			if p.Len() == 500 {
				_, _ = p.Exec(ctx)
			}
		}
		_, _ = p.Exec(ctx)
	}
}
