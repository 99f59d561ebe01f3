package redisstore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

func partitioned(n int32) func(*tags.QueueConfig) {
	return func(c *tags.QueueConfig) { c.Partitions = &n }
}

// drain receives every message of tag (max 10 a call), deleting none,
// until a receive finds nothing.
func (b *bundle) drain(q, tag string) []tags.Message {
	b.t.Helper()
	var out []tags.Message
	for range 1000 {
		got := b.receive(q, tag, 10)
		if len(got) == 0 {
			return out
		}
		out = append(out, got...)
	}
	b.t.Fatal("drain: still receiving after 1000 calls")
	return nil
}

func TestPartitions_EveryTagGetsEveryMessageOnceFromEveryPartition(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		q := b.queue("p", partitioned(4), func(c *tags.QueueConfig) { c.NoDefaultTag = true })
		require.Equal(t, int32(4), q.Partitions)
		b.tag("p", "billing")
		b.tag("p", "shipping")
		var sent []string
		for i := range 12 {
			var bodies []string
			for j := range 10 {
				bodies = append(bodies, fmt.Sprintf("m%03d", i*10+j))
			}
			sent = append(sent, b.send("p", bodies...)...)
		}
		require.Len(t, sent, 120)
		ids := map[string]bool{}
		inPart := map[int]int{}
		for _, id := range sent {
			require.False(t, ids[id], "message ids are unique across partitions: %s", id)
			ids[id] = true
			sub, _, ok := locate("p", id)
			require.True(t, ok, id)
			inPart[partIndex(sub)]++
		}
		require.Len(t, inPart, 4, "the batches went to every partition in turn: %v", inPart)
		// Each partition is a stream of its own, in a hash slot of its own.
		for k := range 4 {
			n, err := b.rdb.XLen(b.ctx, b.s.qkeys(partName("p", k)).stream).Result()
			require.NoError(t, err)
			require.Equal(t, int64(inPart[k]), n)
		}
		held := map[string][]tags.Message{}
		for _, tag := range []string{"billing", "shipping"} {
			got := b.drain("p", tag)
			require.Len(t, got, 120, "%s: every message once", tag)
			seen := map[string]bool{}
			for _, m := range got {
				require.True(t, ids[m.ID], "%s: %s is a sent id", tag, m.ID)
				require.False(t, seen[m.ID], "%s: %s twice", tag, m.ID)
				seen[m.ID] = true
			}
			st := b.state("p", tag)
			require.Equal(t, tags.TagState{InFlight: 120, ReceivedTotal: 120}, clearAge(st))
			held[tag] = got
		}
		// Billing deletes everything by receipt handle; shipping still
		// holds it all.
		b.del("p", held["billing"][:60]...)
		b.del("p", held["billing"][60:]...)
		require.Equal(t, tags.TagState{DeletedTotal: 120, ReceivedTotal: 120}, clearAge(b.state("p", "billing")))
		require.Equal(t, int64(120), clearAge(b.state("p", "shipping")).InFlight)
		g, err := b.s.GetQueue(b.ctx, "p")
		require.NoError(t, err)
		require.Equal(t, int64(120), g.RetainedMessages, "summed over partitions")
		require.Equal(t, int32(4), g.Partitions)
	})
}

func clearAge(st tags.TagState) tags.TagState {
	st.OldestAvailableAge = 0
	return st
}

func TestPartitions_TopicsKeepTheirOrderPerTag(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("tp", partitioned(3), func(c *tags.QueueConfig) { c.TopicQueue = true })
		var msgs []tags.OutMessage
		for i := range 30 {
			msgs = append(msgs, tags.OutMessage{Body: []byte(fmt.Sprint(i)), Topic: fmt.Sprintf("t%d", i%5)})
		}
		b.sendMsgs("tp", msgs...)
		// Each topic lives in the partition it hashes to: one in flight at
		// a time per topic, in send order.
		last := map[string]int{}
		for range 100 {
			got := b.receive("tp", "", 10)
			if len(got) == 0 {
				break
			}
			for _, m := range got {
				var n int
				_, _ = fmt.Sscan(string(m.Body), &n)
				if prev, ok := last[m.Topic]; ok {
					require.Greater(t, n, prev, "topic %s out of order", m.Topic)
				}
				last[m.Topic] = n
			}
			b.del("tp", got...)
		}
		require.Len(t, last, 5)
		for topic, n := range last {
			require.GreaterOrEqual(t, n, 25, "topic %s delivered to its end", topic)
		}
	})
}

func TestPartitions_DeduplicationIsExactAcrossPartitions(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("dp", partitioned(4))
		dup := func(id string) tags.OutMessage { return tags.OutMessage{Body: []byte("x"), DeduplicationID: &id} }
		first, err := b.s.Send(b.ctx, "dp", []tags.OutMessage{dup("a"), dup("b"), dup("c"), dup("d")})
		require.NoError(t, err)
		again, err := b.s.Send(b.ctx, "dp", []tags.OutMessage{dup("d"), dup("c"), dup("b"), dup("a")})
		require.NoError(t, err)
		for i, r := range again {
			require.True(t, r.Duplicate, "entry %d", i)
			require.Equal(t, first[3-i].ID, r.ID, "the original's id, partition and all")
		}
		require.Len(t, b.drain("dp", ""), 4)
	})
}

func TestPartitions_ConsumeStreamGathersAndSettles(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("cp", partitioned(4))
		r, err := b.s.OpenReader(b.ctx, "cp", "", nil)
		require.NoError(t, err)
		defer r.Close()
		// Waiting on every partition: a send to any wakes it.
		ch := make(chan []tags.Message, 1)
		go func() {
			msgs, err := r.Receive(b.ctx, 10)
			if err != nil {
				t.Error(err)
			}
			ch <- msgs
		}()
		time.Sleep(50 * time.Millisecond) // let it wait: a send before would do too
		ids := b.send("cp", "a")
		var got []tags.Message
		select {
		case got = <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("the stream was not woken")
		}
		require.Len(t, got, 1)
		require.Equal(t, ids[0], got[0].ID)
		// More from several partitions: gathered.
		b.send("cp", "b")
		b.send("cp", "c")
		b.send("cp", "d")
		var all []tags.Message
		for len(all) < 3 {
			msgs, err := r.Receive(b.ctx, 10)
			require.NoError(t, err)
			all = append(all, msgs...)
		}
		// Settled as a Consume stream settles: deliveries of the queue,
		// whose message ids name the partition.
		var ops []tags.Settlement
		for _, m := range append(got, all...) {
			ops = append(ops, tags.Settlement{Kind: tags.SettleAck, Delivery: m.Delivery("cp")})
		}
		batch := &tags.SettleBatch{Queue: "cp", Tag: "default", Ops: ops}
		require.NoError(t, b.s.Settle(b.ctx, []*tags.SettleBatch{batch}))
		for i, e := range batch.Errs {
			require.NoError(t, e, "op %d", i)
		}
		require.Equal(t, tags.TagState{DeletedTotal: 4, ReceivedTotal: 4}, clearAge(b.state("cp", "default")))
	})
}

func TestPartitions_ALongPollIsWokenByASendToAnyPartition(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("lp", partitioned(3))
		done := make(chan []tags.Message, 1)
		go func() {
			msgs, err := b.s.Receive(context.Background(), "lp", "", tags.ReceiveOptions{MaxMessages: 10, WaitSeconds: i32(20)})
			if err != nil {
				t.Error(err)
			}
			done <- msgs
		}()
		time.Sleep(50 * time.Millisecond) // let it wait: a send before would do too
		for k := range 3 {
			_ = k
		}
		b.send("lp", "x")
		select {
		case msgs := <-done:
			require.Equal(t, []string{"x"}, bodies(msgs))
		case <-time.After(10 * time.Second):
			t.Fatal("the long poll was not woken")
		}
	})
}

func TestPartitions_DeadLettersNameTheQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("pdlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("src", partitioned(4), func(c *tags.QueueConfig) {
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "pdlq", MaxReceiveCount: 5}
		})
		var ids []string
		for i := range 8 {
			ids = append(ids, b.send("src", fmt.Sprint(i))...)
		}
		got := b.drain("src", "")
		require.Len(t, got, 8)
		var reqs []tags.DeadRequest
		for _, m := range got {
			reqs = append(reqs, tags.DeadRequest{ReceiptHandle: m.ReceiptHandle, Reason: "BAD"})
		}
		errs, err := b.s.DeadLetter(b.ctx, "src", reqs)
		require.NoError(t, err)
		for _, e := range errs {
			require.NoError(t, e)
		}
		dead := b.drain("pdlq", "")
		require.Len(t, dead, 8)
		var originals []string
		for _, m := range dead {
			require.NotNil(t, m.DeadLetter)
			require.Equal(t, "src", m.DeadLetter.SourceQueue, "the queue, not its partition")
			require.Equal(t, "src", m.Attributes[tags.SourceQueueAttribute].String)
			originals = append(originals, m.DeadLetter.OriginalMessageID)
		}
		sort.Strings(originals)
		sort.Strings(ids)
		require.Equal(t, ids, originals, "the message ids the API showed")
		st := b.state("src", "default")
		require.Equal(t, int64(8), st.DeadTotal)
	})
}

func TestPartitions_DeleteRemovesEveryPartition(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("gone", partitioned(5))
		b.send("gone", "a", "b")
		b.send("gone", "c")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "gone", false))
		require.Empty(t, b.keys(b.prefix+":{gone*"), "no key of any partition is left")
		n, err := b.rdb.ZCard(b.ctx, b.s.partsKey()).Result()
		require.NoError(t, err)
		require.Zero(t, n)
		// Made again with one partition: plain layout, sends and receives.
		b.queue("gone")
		b.send("gone", "again")
		require.Equal(t, []string{"again"}, bodies(b.drain("gone", "")))
	})
}

func TestPartitions_CapsAndQuotasAreShared(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("cap", partitioned(4), func(c *tags.QueueConfig) {
			c.MaxRetainedMessages = new(int64)
			*c.MaxRetainedMessages = 8
			c.WriteQuotaPerSecond = i32(1000)
		})
		q, err := b.s.GetQueue(b.ctx, "cap")
		require.NoError(t, err)
		require.Equal(t, int64(8), q.MaxRetainedMessages, "the queue's own cap is reported")
		require.Equal(t, int32(1000), q.WriteQuotaPerSecond)
		for k := range 4 {
			m, err := b.rdb.HMGet(b.ctx, b.s.qkeys(partName("cap", k)).meta, "cmax", "wq").Result()
			require.NoError(t, err)
			require.Equal(t, []any{"2", "250"}, m, "partition %d holds its share", k)
		}
		// Two batches to each partition (they rotate): the third to any
		// partition finds it full.
		for range 4 {
			b.send("cap", "a", "b")
		}
		res, err := b.s.Send(b.ctx, "cap", []tags.OutMessage{{Body: []byte("c")}})
		require.NoError(t, err)
		requireReason(t, res[0].Err, tags.ReasonQueueFull)
	})
}

func TestPartitions_RefusedShapes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		for _, c := range []struct {
			cfg   tags.QueueConfig
			field string
		}{
			{tags.QueueConfig{Name: "x", Partitions: i32(0)}, "partitions"},
			{tags.QueueConfig{Name: "x", Partitions: i32(tags.MaxPartitions + 1)}, "partitions"},
			{tags.QueueConfig{Name: "x", Partitions: i32(2), DeadLetterQueue: true}, "partitions"},
			{tags.QueueConfig{Name: "x", Partitions: i32(2), PriorityQueue: true}, "partitions"},
		} {
			_, err := b.s.CreateQueue(b.ctx, c.cfg)
			e, ok := tags.AsError(err)
			require.True(t, ok, "%+v: %v", c.cfg, err)
			require.Equal(t, c.field, e.Field)
			require.Equal(t, tags.KindInvalidArgument, e.Kind)
		}
		require.Empty(t, b.keys(b.prefix+":{x*"), "nothing half-created")
	})
}

func TestPartitions_SpreadOverTheClusterSlots(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		cc, ok := b.rdb.(*redis.ClusterClient)
		if !ok {
			t.Skip("a cluster's masters")
		}
		b.queue("spread", partitioned(12))
		masters := map[string]bool{}
		for k := range 12 {
			m, err := cc.MasterForKey(b.ctx, b.s.qkeys(partName("spread", k)).stream)
			require.NoError(t, err)
			masters[m.Options().Addr] = true
		}
		require.Greater(t, len(masters), 1, "12 partitions on %d masters", len(masters))
		_ = strings.TrimSpace
	})
}

// Sends one after the other rotate over the partitions; sends made while
// one is in flight join its partition (so that send.go stores them in one
// round trip), sendJoin at most, then the next partition takes over.
func TestPartSendJoinsTheSendInFlight(t *testing.T) {
	s := &Store{}
	seen := map[int]bool{}
	for range 12 {
		k, done := s.partSend("q", 12)
		done()
		seen[k] = true
	}
	require.Len(t, seen, 12, "one after the other: every partition in turn")

	first, done := s.partSend("q", 12)
	dones := []func(){done}
	for range sendJoin - 1 {
		k, done := s.partSend("q", 12)
		require.Equal(t, first, k, "joins the send in flight")
		dones = append(dones, done)
	}
	k, done := s.partSend("q", 12)
	require.NotEqual(t, first, k, "sendJoin sends joined: the next partition")
	dones = append(dones, done)
	for _, d := range dones {
		d()
	}
	next, done := s.partSend("q", 12)
	done()
	require.NotEqual(t, k, next, "nothing in flight: the next in turn")
}
