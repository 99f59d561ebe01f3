package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// A flood of requests that panic logs one line per panic but at most one
// stack trace per 10 s; the next stack says how many were left out.
func TestPanics_OneStackPerIntervalTheRestCounted(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	pl := newPanicLog(10*time.Second, func() time.Time { return now })
	logs := &logBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	rec := recoverPanicsTo(log, pl)
	si := &grpc.UnaryServerInfo{FullMethod: "/tagq.v1.QueueService/CreateQueue"}
	boom := func(context.Context, any) (any, error) { panic("boom " + strings.Repeat("x", 10000)) }
	call := func() {
		_, err := rec(context.Background(), nil, si, boom)
		code, ei := info(t, err)
		require.Equal(t, codes.Internal, code)
		require.Equal(t, "INTERNAL", ei.GetReason())
	}
	type line struct {
		Msg     string `json:"msg"`
		Method  string `json:"method"`
		Panic   string `json:"panic"`
		Stack   string `json:"stack"`
		LeftOut *int   `json:"stacks_left_out"`
	}
	lines := func() []line {
		var out []line
		for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var v line
			require.NoError(t, json.Unmarshal([]byte(l), &v), l)
			out = append(out, v)
		}
		return out
	}

	for range 100 {
		call()
	}
	now = now.Add(9 * time.Second)
	call()
	now = now.Add(time.Second)
	call()

	got := lines()
	require.Len(t, got, 102, "every panic is logged")
	var stacks []line
	for _, l := range got {
		require.Equal(t, "panic in handler", l.Msg)
		require.Equal(t, si.FullMethod, l.Method)
		require.LessOrEqual(t, len(l.Panic), maxLoggedPanic+len("…"), "the panic value is clipped")
		if strings.Contains(l.Stack, "goroutine") {
			stacks = append(stacks, l)
		} else {
			require.Nil(t, l.LeftOut)
		}
	}
	require.Len(t, stacks, 2, "one stack at the start, one 10 s later")
	require.Equal(t, 0, *stacks[0].LeftOut)
	require.Equal(t, 100, *stacks[1].LeftOut, "99 of the flood and the one at 9 s")
	require.Contains(t, stacks[0].Stack, "panics_test.go", "the stack is the panicking one")
}
