package main

// Redis Cluster runs (--redis-cluster) and partitioned queues
// (--partitions, issue 25). On a cluster, tagqd gets the seeds as its
// --redis-cluster, the raw rows run through a cluster client (each raw
// stream is one key, so one slot), and the meter reads INFO cpu of every
// node: each row's Redis CPU is the sum over masters and replicas, and the
// table is followed by each master's share of the masters' Redis CPU and
// the replicas' CPU apart. A partitioned queue's keys are counted per
// master once it is created (keySpread).

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// redisNode is one Redis process the meter reads: the Redis, or one node
// of a cluster.
type redisNode struct {
	addr    string
	replica bool
	c       *redis.Client
	// slots are the hash slot ranges a master serves ([from, to] pairs).
	slots [][2]int
}

// singleNode is the one node of a Redis that is not a cluster.
func singleNode(rdb *redis.Client) []redisNode {
	return []redisNode{{addr: rdb.Options().Addr, c: rdb}}
}

// clusterNodes are a cluster's masters (by address), then its replicas
// (by address), from CLUSTER SLOTS, each with a client of its own.
func clusterNodes(ctx context.Context, cc *redis.ClusterClient) ([]redisNode, error) {
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
	byAddr := map[string]*redisNode{}
	for _, s := range slots {
		for i, n := range s.Nodes {
			nd := byAddr[n.Addr]
			if nd == nil {
				nd = &redisNode{addr: n.Addr, replica: i > 0}
				byAddr[n.Addr] = nd
			}
			if i == 0 {
				nd.slots = append(nd.slots, [2]int{s.Start, s.End})
			}
		}
	}
	var out []redisNode
	for _, n := range byAddr {
		n.c = redis.NewClient(&redis.Options{Addr: n.addr})
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b redisNode) int {
		if a.replica != b.replica {
			if a.replica {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.addr, b.addr)
	})
	return out, nil
}

// owner is the master serving slot (its address), or "?".
func owner(nodes []redisNode, slot int) string {
	for _, n := range nodes {
		for _, r := range n.slots {
			if slot >= r[0] && slot <= r[1] {
				return n.addr
			}
		}
	}
	return "?"
}

// partitioned is the config of W1's and W2's tagq queues: --partitions
// partitions, or nil (today's queue: no partitions field sent) for 1.
func (e *env) partitioned() *tagqv1.Queue {
	if e.partitions <= 1 {
		return nil
	}
	return &tagqv1.Queue{Partitions: i32(int32(e.partitions))}
}

// partitionTags are the hash tags of a queue's partitions: {Q}, then
// {Q#1} … {Q#P-1} (tags/redisstore/partition.go).
func partitionTags(queue string, partitions int) []string {
	out := []string{queue}
	for k := 1; k < partitions; k++ {
		out = append(out, queue+"#"+strconv.Itoa(k))
	}
	return out
}

// keySpread prints, on a cluster, where a queue's keys are: the keys of
// each partition's hash tag counted on each master (SCAN of the prefix),
// and each partition's slot (CLUSTER KEYSLOT) and the master owning it.
// It prints once per queue name and partition count.
func (e *env) keySpread(w io.Writer, queue string) {
	if !e.cluster {
		return
	}
	parts := max(e.partitions, 1)
	key := fmt.Sprintf("%s/%d", queue, parts)
	if e.spreadShown[key] {
		return
	}
	e.spreadShown[key] = true
	tagsOf := map[string]bool{}
	for _, t := range partitionTags(queue, parts) {
		tagsOf[t] = true
	}
	var counts []string
	total := 0
	for _, n := range e.nodes {
		if n.replica {
			continue
		}
		c := 0
		iter := n.c.Scan(e.ctx, 0, e.prefix+":*", 1000).Iterator()
		for iter.Next(e.ctx) {
			k := iter.Val()
			if i, j := strings.IndexByte(k, '{'), strings.IndexByte(k, '}'); i >= 0 && j > i && tagsOf[k[i+1:j]] {
				c++
			}
		}
		if err := iter.Err(); err != nil {
			fmt.Fprintf(w, "keys of queue %s on %s: %v\n", queue, n.addr, err)
		}
		counts = append(counts, fmt.Sprintf("%s %d", n.addr, c))
		total += c
	}
	fmt.Fprintf(w, "keys of queue %s (%d partitions) by master (SCAN %s:*): %s; %d in all\n\n", queue, parts, e.prefix,
		strings.Join(counts, ", "), total)
	perMaster := map[string][]string{}
	for _, t := range partitionTags(queue, parts) {
		slot, err := e.nodes[0].c.ClusterKeySlot(e.ctx, "{"+t+"}").Result()
		if err != nil {
			fmt.Fprintf(w, "CLUSTER KEYSLOT {%s}: %v\n", t, err)
			continue
		}
		o := owner(e.nodes, int(slot))
		perMaster[o] = append(perMaster[o], fmt.Sprintf("{%s} %d", t, slot))
	}
	var lines []string
	for _, n := range e.nodes {
		if p, ok := perMaster[n.addr]; ok && !n.replica {
			lines = append(lines, fmt.Sprintf("- %s: %d partitions: %s", n.addr, len(p), strings.Join(p, ", ")))
		}
	}
	if p, ok := perMaster["?"]; ok {
		lines = append(lines, "- no master found: "+strings.Join(p, ", "))
	}
	fmt.Fprintf(w, "partition slots (CLUSTER KEYSLOT) by owning master:\n%s\n\n", strings.Join(lines, "\n"))
}

// writeNodes prints, for the rows measured on more than one Redis node,
// each master's share of the masters' Redis CPU, the replicas' CPU, the
// CPU of all processes per 1,000 messages (server + every node + client)
// and the bytes the Redis nodes received and sent per message.
func writeNodes(w io.Writer, nodes []redisNode, rs []result) {
	if len(nodes) < 2 {
		return
	}
	fmt.Fprintln(w, "| workload | system | partitions | each master's share of masters' Redis CPU | max share | masters' Redis CPU s/1000 msg | replicas' CPU s/1000 msg | all processes CPU s/1000 msg | Redis network bytes/msg |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		if len(r.nodeCPU) != len(nodes) || r.msgs == 0 {
			continue
		}
		var masters, replicas time.Duration
		var reps []string
		for i, n := range nodes {
			if n.replica {
				replicas += r.nodeCPU[i]
				reps = append(reps, fmt.Sprintf("%s %s", n.addr, per1000(r.nodeCPU[i], r.msgs)))
			} else {
				masters += r.nodeCPU[i]
			}
		}
		var shares []string
		top := 0.0
		for i, n := range nodes {
			if n.replica || masters == 0 {
				continue
			}
			s := 100 * r.nodeCPU[i].Seconds() / masters.Seconds()
			top = max(top, s)
			shares = append(shares, fmt.Sprintf("%s %.0f %%", n.addr, s))
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %.0f %% | %s | %s (%s) | %s | %d |\n", r.workload, r.system, max(r.partitions, 1),
			strings.Join(shares, ", "), top, per1000(masters, r.msgs), per1000(replicas, r.msgs), strings.Join(reps, ", "),
			per1000(r.cpuTagqd+r.cpuRedis+r.cpuClient, r.msgs), r.redisNet/r.msgs)
	}
	fmt.Fprintln(w)
}
