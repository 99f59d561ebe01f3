package main

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGroup_FirstReturnInterruptsAllInOrder(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		order []string
	)
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	var g group
	boom := errors.New("boom")
	g.add(func() error { return boom }, func(error) { note("first") })
	for _, name := range []string{"second", "third"} {
		stop := make(chan struct{})
		g.add(func() error { <-stop; return nil }, func(err error) {
			require.Equal(t, boom, err)
			note(name)
			close(stop)
		})
	}
	require.Equal(t, boom, g.run())
	require.Equal(t, []string{"first", "second", "third"}, order)
}

func TestGroup_Empty(t *testing.T) {
	t.Parallel()
	var g group
	require.NoError(t, g.run())
}
