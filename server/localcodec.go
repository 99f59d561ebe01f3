package server

import (
	"context"
	"crypto/rand"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// REST and Connect calls reach the gRPC server over the in-process
// gateway connection, so that they pass the same interceptors (auth,
// limits, metrics, access log, spans). Their requests are already decoded
// (from JSON, or by connect-go): encoding them again for that hop, and
// decoding them on the other side, cost two more copies of every body, the
// most memory a large request took (a 130 MB REST body cost about 6× its
// size). So a unary call on that connection passes its request by
// reference: the client side of the codec below files the request under a
// random key and sends the key; the server side takes the request filed
// under it and moves its fields into the message gRPC decodes into (no
// copy). Answers are encoded as usual.
//
// The codec is gRPC's "proto" one under its own content subtype,
// localCodecName, which only the gateway's unary calls ask for
// (localConn). A key not filed in this process (any other client's) is a
// request the server cannot read (MALFORMED_REQUEST): keys are 128 random
// bits, filed for the moment between a call's sending and its decoding.

// localCodecName is the content subtype of the gateway's unary calls.
const localCodecName = "tagq-local"

func init() {
	encoding.RegisterCodecV2(localCodec{})
}

// localKey is the key a request is filed under: 128 random bits.
type localKey [16]byte

// localRequests are the requests filed by the gateway's calls and not yet
// taken by the server.
var localRequests = &localFiles{byKey: map[localKey]proto.Message{}, byMsg: map[proto.Message]localKey{}}

type localFiles struct {
	mu    sync.Mutex
	byKey map[localKey]proto.Message
	byMsg map[proto.Message]localKey
}

func (f *localFiles) put(m proto.Message) localKey {
	var k localKey
	_, _ = rand.Read(k[:]) // never fails (crypto/rand)
	f.mu.Lock()
	f.byKey[k], f.byMsg[m] = m, k
	f.mu.Unlock()
	return k
}

func (f *localFiles) take(k localKey) proto.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.byKey[k]
	if ok {
		delete(f.byKey, k)
		delete(f.byMsg, m)
	}
	return m
}

// forget drops m if the server never took it (the call failed first).
func (f *localFiles) forget(m proto.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, ok := f.byMsg[m]; ok {
		delete(f.byMsg, m)
		delete(f.byKey, k)
	}
}

type localCodec struct{ requestCodec }

func (localCodec) Name() string { return localCodecName }

// Marshal files a tagq unary request and encodes its key; it encodes
// anything else (an answer) as the proto codec does.
func (c localCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(proto.Message); ok && unaryRequests[m.ProtoReflect().Descriptor().FullName()] {
		k := localRequests.put(m)
		return mem.BufferSlice{mem.SliceBuffer(k[:])}, nil
	}
	return c.requestCodec.Marshal(v)
}

// Unmarshal moves the request filed under the key into v; it decodes
// anything else as the proto codec does.
func (c localCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok || !unaryRequests[m.ProtoReflect().Descriptor().FullName()] {
		return c.requestCodec.Unmarshal(data, v)
	}
	var k localKey
	if data.Len() != len(k) {
		return markUnreadable(v, errNotFiled)
	}
	data.CopyTo(k[:])
	src := localRequests.take(k)
	if src == nil || src.ProtoReflect().Descriptor() != m.ProtoReflect().Descriptor() {
		return markUnreadable(v, errNotFiled)
	}
	moveFields(m.ProtoReflect(), src.ProtoReflect())
	return nil
}

// moveFields sets dst's fields to src's (of the same type) without copying
// them: dst shares src's bytes, lists, maps and messages (protoreflect's
// Set may alias a composite value), which src's owner no longer uses.
func moveFields(dst, src protoreflect.Message) {
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	dst.SetUnknown(src.GetUnknown())
}

// localConn is the gateway's connection as REST and Connect use it: a
// unary request over MaxRequestBytes is refused (REQUEST_TOO_LARGE, where
// the connection's send limit refused it without ErrorInfo), and the
// others go by reference (see above), dropped from the files if the server
// did not take them. Streams go as they are.
type localConn struct {
	cc         *grpc.ClientConn
	maxRequest int
}

func (c localConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	m, ok := req.(proto.Message)
	if !ok {
		return c.cc.Invoke(ctx, method, req, reply, opts...)
	}
	if proto.Size(m) > c.maxRequest {
		return tooLarge(int64(c.maxRequest))
	}
	defer localRequests.forget(m)
	return c.cc.Invoke(ctx, method, req, reply, append(opts, grpc.CallContentSubtype(localCodecName))...)
}

func (c localConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.cc.NewStream(ctx, desc, method, opts...)
}
