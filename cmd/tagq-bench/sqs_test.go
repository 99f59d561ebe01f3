package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/tagqdtest"
)

// The SQS rows mean something only if their clients do the work: what they
// send is received once and deleted, leaving the queue empty. Against
// tagqd's endpoint (both clients) and, when it answers, goaws.
func TestSQSClientsDoTheWork(t *testing.T) {
	bin, err := buildTagqd()
	require.NoError(t, err)
	d, err := tagqdtest.Start(bin)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = d.Stop() })
	ctx := context.Background()
	q := "http://" + d.SQS + "/000000000000/w1"
	apis := map[string]sqsAPI{"sdk": newSDKSQS("http://" + d.SQS), "query": newQuerySQS("http://" + d.SQS)}
	if answers("http://127.0.0.1:4100", "4100") == nil {
		apis["goaws"] = newQuerySQS("http://127.0.0.1:4100")
	}
	for name, api := range apis {
		t.Run(name, func(t *testing.T) {
			url := q
			if name == "goaws" {
				g := api.(*querySQS)
				url, err = g.createQueue(ctx, peerName("test"))
				require.NoError(t, err)
				t.Cleanup(func() { _ = g.deleteQueue(ctx, url) })
			} else {
				c := newQuerySQS("http://" + d.SQS)
				_ = c.deleteQueue(ctx, q)
				_, err := c.createQueue(ctx, "w1")
				require.NoError(t, err)
			}
			for _, batch := range []int{1, 10} {
				bodies := make([]string, batch)
				for i := range bodies {
					bodies[i] = fmt.Sprintf("%s-%d-%d", strings.Repeat("x", 100), batch, i)
				}
				for range 3 {
					require.NoError(t, api.send(ctx, url, bodies))
				}
				got := 0
				for got < 3*batch {
					hs, err := api.receive(ctx, url, batch, time.Second)
					require.NoError(t, err)
					require.NotEmpty(t, hs, "received %d of %d", got, 3*batch)
					require.LessOrEqual(t, len(hs), batch)
					require.NoError(t, api.remove(ctx, url, hs))
					got += len(hs)
				}
				require.Equal(t, 3*batch, got)
				hs, err := api.receive(ctx, url, 10, 0)
				require.NoError(t, err)
				require.Empty(t, hs, "nothing left after the deletes")
			}
		})
	}
}
