package main

// The floor: the least a gRPC service in front of Redis streams can cost.
// floorServer speaks tagq's MessageService for W1, W3 and W4 (send,
// receive, delete, nack; Publish and Consume) and does nothing but the raw commands
// behind it: XADD per entry in one pipeline, XREADGROUP, XACK. No queue
// checks, no tags, no visibility timeouts, no receipt-handle signing, no
// scripts, no credit on streams. It runs as a
// separate process (this binary, re-executed with --serve-floor) so that,
// like tagqd, it competes with the client and Redis for the same cores.
// What separates raw Redis from the floor is the cost of the hop; what
// separates the floor from tagqd is tagq's own work.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

type floorServer struct {
	tagqv1.UnimplementedMessageServiceServer
	rdb *redis.Client
	key func(queue string) string
}

func (f *floorServer) SendMessage(ctx context.Context, r *tagqv1.SendMessageRequest) (*tagqv1.SendMessageResponse, error) {
	id, err := f.rdb.XAdd(ctx, &redis.XAddArgs{Stream: f.key(r.GetQueue()), Values: []any{"b", r.GetBody()}}).Result()
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return &tagqv1.SendMessageResponse{MessageId: id}, nil
}

func (f *floorServer) SendMessageBatch(ctx context.Context, r *tagqv1.SendMessageBatchRequest) (*tagqv1.SendMessageBatchResponse, error) {
	done, err := f.store(ctx, r.GetQueue(), r.GetEntries())
	if err != nil {
		return nil, err
	}
	return &tagqv1.SendMessageBatchResponse{Successful: done}, nil
}

// store adds the entries to the queue's stream in one pipeline.
func (f *floorServer) store(ctx context.Context, queue string, entries []*tagqv1.SendMessageBatchEntry) ([]*tagqv1.SendMessageBatchResult, error) {
	key := f.key(queue)
	p := f.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(entries))
	for i, e := range entries {
		cmds[i] = p.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"b", e.GetBody()}})
	}
	if _, err := p.Exec(ctx); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	done := make([]*tagqv1.SendMessageBatchResult, len(cmds))
	for i, c := range cmds {
		done[i] = &tagqv1.SendMessageBatchResult{Id: entries[i].GetId(), MessageId: c.Val()}
	}
	return done, nil
}

func (f *floorServer) ReceiveMessage(ctx context.Context, r *tagqv1.ReceiveMessageRequest) (*tagqv1.ReceiveMessageResponse, error) {
	block := time.Duration(r.GetWaitSeconds()) * time.Second
	if block <= 0 {
		block = -1 // go-redis: no BLOCK (BLOCK 0 would wait for ever)
	}
	res, err := f.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g0", Consumer: "c", Streams: []string{f.key(r.GetQueue()), ">"},
		Count: int64(max(1, r.GetMaxMessages())), Block: block}).Result()
	if errors.Is(err, redis.Nil) || (err == nil && len(res) == 0) {
		return &tagqv1.ReceiveMessageResponse{}, nil
	}
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	out := &tagqv1.ReceiveMessageResponse{Messages: make([]*tagqv1.Message, len(res[0].Messages))}
	for i, m := range res[0].Messages {
		b, _ := m.Values["b"].(string)
		out.Messages[i] = &tagqv1.Message{MessageId: m.ID, ReceiptHandle: m.ID, Body: []byte(b)}
	}
	return out, nil
}

func (f *floorServer) ack(ctx context.Context, queue string, ids []string) error {
	if err := f.rdb.XAck(ctx, f.key(queue), "g0", ids...).Err(); err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	return nil
}

func (f *floorServer) DeleteMessage(ctx context.Context, r *tagqv1.DeleteMessageRequest) (*tagqv1.DeleteMessageResponse, error) {
	return &tagqv1.DeleteMessageResponse{}, f.ack(ctx, r.GetQueue(), []string{r.GetReceiptHandle()})
}

func (f *floorServer) DeleteMessageBatch(ctx context.Context, r *tagqv1.DeleteMessageBatchRequest) (*tagqv1.DeleteMessageBatchResponse, error) {
	ids := make([]string, len(r.GetEntries()))
	done := make([]string, len(r.GetEntries()))
	for i, e := range r.GetEntries() {
		ids[i], done[i] = e.GetReceiptHandle(), e.GetId()
	}
	if err := f.ack(ctx, r.GetQueue(), ids); err != nil {
		return nil, err
	}
	return &tagqv1.DeleteMessageBatchResponse{Successful: done}, nil
}

// ChangeMessageVisibilityBatch takes every change for a nack (W4's): the
// entry is acknowledged and added again with its attempt count (field n),
// or, at the third attempt, added to the queue's "-dlq" stream. Two
// pipelined round trips: the entries' fields, then the XACK and XADDs.
func (f *floorServer) ChangeMessageVisibilityBatch(ctx context.Context, r *tagqv1.ChangeMessageVisibilityBatchRequest) (*tagqv1.ChangeMessageVisibilityBatchResponse, error) {
	key, dkey := f.key(r.GetQueue()), f.key(r.GetQueue()+"-dlq")
	p := f.rdb.Pipeline()
	reads := make([]*redis.XMessageSliceCmd, len(r.GetEntries()))
	for i, e := range r.GetEntries() {
		reads[i] = p.XRange(ctx, key, e.GetReceiptHandle(), e.GetReceiptHandle())
	}
	if _, err := p.Exec(ctx); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	p = f.rdb.Pipeline()
	ids := make([]string, 0, len(reads))
	out := &tagqv1.ChangeMessageVisibilityBatchResponse{}
	for i, rd := range reads {
		ms := rd.Val()
		if len(ms) == 0 {
			continue // gone: nothing to move
		}
		n, _ := strconv.Atoi(fmt.Sprint(ms[0].Values["n"]))
		if n+1 >= 3 {
			p.XAdd(ctx, &redis.XAddArgs{Stream: dkey, Values: []any{"b", ms[0].Values["b"]}})
		} else {
			p.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"b", ms[0].Values["b"], "n", n + 1}})
		}
		ids = append(ids, ms[0].ID)
		out.Successful = append(out.Successful, r.GetEntries()[i].GetId())
	}
	if len(ids) > 0 {
		p.XAck(ctx, key, "g0", ids...)
		if _, err := p.Exec(ctx); err != nil {
			return nil, status.Error(codes.Unavailable, err.Error())
		}
	}
	return out, nil
}

// Publish stores each frame's entries with XADDs in one pipeline and
// answers it, one frame at a time in the stream's goroutine.
func (f *floorServer) Publish(st grpc.BidiStreamingServer[tagqv1.PublishRequest, tagqv1.PublishResponse]) error {
	ctx := st.Context()
	for {
		req, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		done, err := f.store(ctx, req.GetQueue(), req.GetEntries())
		if err != nil {
			return err
		}
		if err := st.Send(&tagqv1.PublishResponse{Seq: req.GetSeq(), Successful: done}); err != nil {
			return err
		}
	}
}

// Consume pushes what a blocking XREADGROUP returns (up to 100 at a time;
// no credit kept) and XACKs what the client acknowledges; it ends when the
// client closes its side.
func (f *floorServer) Consume(st grpc.BidiStreamingServer[tagqv1.ConsumeRequest, tagqv1.ConsumeResponse]) error {
	first, err := st.Recv()
	if err != nil {
		return err
	}
	key := f.key(first.GetOpen().GetQueue())
	ctx, cancel := context.WithCancel(st.Context())
	defer cancel()
	var mu sync.Mutex
	ids := map[uint64]string{} // delivery id -> entry id
	go func() {
		defer cancel() // the client closed its side (or went away)
		for {
			req, err := st.Recv()
			if err != nil {
				return
			}
			mu.Lock()
			acks := make([]string, 0, len(req.GetAcks()))
			for _, d := range req.GetAcks() {
				if id, ok := ids[d]; ok {
					acks = append(acks, id)
					delete(ids, d)
				}
			}
			mu.Unlock()
			if len(acks) > 0 {
				f.rdb.XAck(ctx, key, "g0", acks...)
			}
		}
	}()
	var next uint64
	for ctx.Err() == nil {
		res, err := f.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g0", Consumer: "c", Streams: []string{key, ">"},
			Count: 100, Block: 100 * time.Millisecond}).Result()
		if errors.Is(err, redis.Nil) || (err == nil && len(res) == 0) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return status.Error(codes.Unavailable, err.Error())
		}
		resp := &tagqv1.ConsumeResponse{Messages: make([]*tagqv1.ConsumeMessage, len(res[0].Messages))}
		mu.Lock()
		for i, m := range res[0].Messages {
			next++
			ids[next] = m.ID
			b, _ := m.Values["b"].(string)
			resp.Messages[i] = &tagqv1.ConsumeMessage{DeliveryId: next, Message: &tagqv1.Message{MessageId: m.ID, Body: []byte(b)}}
		}
		mu.Unlock()
		if err := st.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

// serveFloor runs the floor server on a free loopback port, prints the
// address on stdout, and serves until stdin closes (the parent exits).
func serveFloor(redisURL, prefix string) error {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return err
	}
	opt.Protocol = 2 // as tagqd
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0)))) // as tagqd
	tagqv1.RegisterMessageServiceServer(srv, &floorServer{rdb: rdb, key: func(q string) string { return prefix + ":{" + q + "}" }})
	fmt.Println(lis.Addr().String())
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		srv.Stop()
	}()
	return srv.Serve(lis)
}

// floorProc is a running floor server.
type floorProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser // also closed if this process dies: the server stops
	addr  string
}

func startFloor(redisURL, prefix string) (*floorProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "--serve-floor", "--redis-url", redisURL, "--floor-prefix", prefix)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("floor server: %w", err)
	}
	return &floorProc{cmd: cmd, stdin: stdin, addr: strings.TrimSpace(line)}, nil
}

func (f *floorProc) stop() {
	_ = f.stdin.Close() // the server stops when its stdin closes
	_ = f.cmd.Wait()
	_ = f.cmd.Wait()
}
