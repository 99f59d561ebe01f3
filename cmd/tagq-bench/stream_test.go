package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/tagqdtest"
)

var (
	tagqdOnce sync.Once
	tagqdDir  string
	tagqdBin  string
	tagqdErr  error
)

// buildTagqd builds tagqd once for the package's tests.
func buildTagqd() (string, error) {
	tagqdOnce.Do(func() {
		if tagqdDir, tagqdErr = os.MkdirTemp("", "tagq-bench-test"); tagqdErr == nil {
			tagqdBin, tagqdErr = tagqdtest.Build(tagqdDir)
		}
	})
	return tagqdBin, tagqdErr
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tagqdDir != "" {
		_ = os.RemoveAll(tagqdDir)
	}
	os.Exit(code)
}

// streamEnv starts a tagqd of this repository on its embedded store and
// returns an env on it; it skips when tagqd does not serve the streams.
func streamEnv(t *testing.T) *env {
	t.Helper()
	bin, err := buildTagqd()
	require.NoError(t, err)
	d, err := tagqdtest.Start(bin)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = d.Stop() })
	c, err := tagq.Dial(d.GRPC)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	served, err := streamsServed(ctx, c.Messages)
	require.NoError(t, err)
	if !served {
		t.Skip("tagqd answers Publish with UNIMPLEMENTED")
	}
	// The meter reads Redis INFO; tagqd's store is its own, so this Redis
	// only keeps the meter working.
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return &env{ctx: ctx, rdb: rdb, nodes: singleNode(rdb), m: c.Messages, q: c.Queues, pid: d.PID(), body: make([]byte, 64),
		maxAhead: 20_000, streamCredit: 100, streaming: true}
}

func tagState(t *testing.T, e *env, queue, tag string) *tagqv1.TagState {
	t.Helper()
	r, err := e.q.GetTag(e.ctx, &tagqv1.GetTagRequest{Queue: queue, Name: tag})
	require.NoError(t, err)
	return r.GetTag().GetState()
}

// The streaming rows mean something only if the streams do the work: 200
// messages published through two Publish streams arrive once on each tag's
// Consume streams, and their acks delete them all.
func TestStreamProducersAndConsumersDoTheWork(t *testing.T) {
	e := streamEnv(t)
	for _, tags := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d tags", tags), func(t *testing.T) {
			queue := fmt.Sprintf("s%d", tags)
			e.tagqQueue(queue, tags, nil)
			names := tagNames(tags)
			var cons []*streamConsumer
			for i := range 2 * tags {
				c, err := openConsume(e.ctx, e.m, queue, names[i%tags], 7) // credit smaller than a frame's batch
				require.NoError(t, err)
				cons = append(cons, c)
			}
			const total = 200
			var wg sync.WaitGroup
			errs := make(chan error, 2+len(cons))
			for i := range 2 {
				p, err := openPublish(e.ctx, e.m, queue, publishWindow(10))
				require.NoError(t, err)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for b := range total / 2 / 10 {
						entries := make([]*tagqv1.SendMessageBatchEntry, 10)
						for j := range entries {
							entries[j] = &tagqv1.SendMessageBatchEntry{Id: fmt.Sprint(j), Body: fmt.Appendf(nil, "m-%d-%d-%d", i, b, j)}
						}
						if _, err := p.send(entries, nil); err != nil {
							errs <- err
							return
						}
					}
					if err := p.close(); err != nil {
						errs <- err
						return
					}
					if p.stored.Load() != total/2 {
						errs <- fmt.Errorf("producer %d: %d stored, want %d", i, p.stored.Load(), total/2)
					}
				}()
			}
			var mu sync.Mutex
			seen := make([]map[string]int, tags)
			for g := range seen {
				seen[g] = map[string]int{}
			}
			count := func(g int) int {
				mu.Lock()
				defer mu.Unlock()
				n := 0
				for _, k := range seen[g] {
					n += k
				}
				return n
			}
			for i, c := range cons {
				g := i % tags
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						_, err := c.receive(func(m *tagqv1.Message) {
							mu.Lock()
							seen[g][string(m.GetBody())]++
							mu.Unlock()
						})
						if err != nil {
							if !errors.Is(err, io.EOF) {
								errs <- err
							}
							return
						}
					}
				}()
			}
			// The consumers wait in Recv: close their streams once every
			// tag has had all, or after 15 s.
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				done := true
				for g := range tags {
					done = done && count(g) >= total
				}
				if done {
					break
				}
			}
			for _, c := range cons {
				require.NoError(t, c.closeSend())
			}
			wg.Wait()
			for _, c := range cons {
				require.NoError(t, c.close())
			}
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			for g, name := range names {
				require.Len(t, seen[g], total, "tag %s: distinct messages received", name)
				for body, n := range seen[g] {
					require.Equal(t, 1, n, "tag %s received %s %d times", name, body, n)
				}
				// A clean close applies the acks sent before it ends.
				st := tagState(t, e, queue, name)
				require.EqualValues(t, total, st.GetDeletedTotal(), "tag %s", name)
				require.Zero(t, st.GetAvailable(), "tag %s", name)
				require.Zero(t, st.GetInFlight(), "tag %s", name)
			}
		})
	}
}

// runStream's count is of messages received and acknowledged: exactly
// what the tag deleted; the rest of what was stored is still there, none
// of it in flight once the streams closed.
func TestRunStreamCountsWhatItAcknowledged(t *testing.T) {
	e := streamEnv(t)
	e.dur = time.Second
	e.tagqQueue("run", 1, nil)
	r := e.runStream(streamLoad{workload: "t", queue: "run", tags: tagNames(1), producers: 2, consumers: 2,
		batch: 10, entries: batchEntries(e.body, 10)})
	require.Empty(t, r.note)
	require.Positive(t, r.msgs)
	st := tagState(t, e, "run", "default")
	require.Equal(t, r.msgs, st.GetDeletedTotal())
	require.Zero(t, st.GetInFlight())
	require.EqualValues(t, 0, (st.GetDeletedTotal()+st.GetAvailable())%10, "whole frames stored: %v", st)
}
