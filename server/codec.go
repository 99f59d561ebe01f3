package server

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	protoenc "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// Unreadable requests. grpc-go decodes a request before any interceptor
// runs; when the bytes are not the method's message it writes INTERNAL
// ("failed to unmarshal") itself, with no ErrorInfo, and nothing the
// handler returns can change that. So the codec does not fail on a tagq
// request it cannot read: it leaves the message empty but for a mark (an
// unknown field carrying the decoder's error), and errorStatus refuses a
// marked request before its handler runs: INVALID_ARGUMENT /
// MALFORMED_REQUEST, like a REST body the gateway cannot decode.
//
// The codec replaces grpc-go's "proto" codec process-wide (init below); it
// differs only in unmarshalling the request of a unary tagq method, which
// only a server does. (A server option, grpc.ForceServerCodecV2(
// requestCodec{...}), would scope it to tagq's server.)

// unreadableField is the unknown field that marks an unreadable request:
// the highest field number protobuf allows, which no tagq message uses.
const unreadableField protowire.Number = protowire.MaxValidNumber

// requestCodec is grpc-go's proto codec, but for unreadable tagq requests
// and for its buffers: grpc-go's codec takes them from gRPC's default pool,
// which zeroes each one it hands out (5 % of tagqd's CPU under streaming W1,
// for the pushes' buffers alone); this one takes them from grpcBuffers,
// which does not (bufpool.go).
type requestCodec struct{ base encoding.CodecV2 }

func init() {
	encoding.RegisterCodecV2(requestCodec{base: encoding.GetCodecV2(protoenc.Name)})
}

// grpcBuffers is the buffer pool of tagqd's gRPC server and of its codec.
var grpcBuffers mem.BufferPool = &bufferPool{}

// unaryRequests are the request messages of tagq's unary methods: the ones
// the codec marks instead of failing. (A stream's RecvMsg error reaches its
// handler, which can answer it.)
var unaryRequests = func() map[protoreflect.FullName]bool {
	out := map[protoreflect.FullName]bool{}
	for _, fd := range []protoreflect.FileDescriptor{tagqv1.File_tagq_v1_queue_proto,
		tagqv1.File_tagq_v1_message_proto, tagqv1.File_tagq_v1_redrive_proto, tagqv1.File_tagq_v1_access_proto} {
		for i := 0; i < fd.Services().Len(); i++ {
			methods := fd.Services().Get(i).Methods()
			for j := 0; j < methods.Len(); j++ {
				if m := methods.Get(j); !m.IsStreamingClient() && !m.IsStreamingServer() {
					out[m.Input().FullName()] = true
				}
			}
		}
	}
	return out
}()

func (c requestCodec) Name() string { return c.base.Name() }

// Marshal is grpc-go's proto Marshal with buffers from grpcBuffers.
func (c requestCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return c.base.Marshal(v)
	}
	// UseCachedSize reuses what proto.Size just computed (the message is
	// not changed meanwhile), as grpc-go's codec does.
	size := proto.Size(m)
	opts := proto.MarshalOptions{UseCachedSize: true}
	if mem.IsBelowBufferPoolingThreshold(size) {
		buf, err := opts.Marshal(m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
	}
	buf := grpcBuffers.Get(size)
	if _, err := opts.MarshalAppend((*buf)[:0], m); err != nil {
		grpcBuffers.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, grpcBuffers)}, nil
}

// Unmarshal is grpc-go's proto Unmarshal (a request in several buffers is
// joined in one from grpcBuffers), but for unreadable tagq requests,
// requests with a repeated field over its limit (boundedProto) and large
// messages (unmarshalLarge).
func (c requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return c.base.Unmarshal(data, v)
	}
	var err error
	if data.Len() >= largeMessage {
		b := data.Materialize()
		if boundedProto(b, m) { // a repeated field over its limit: not decoded (repeated.go)
			return nil
		}
		proto.Reset(m) // as proto.Unmarshal does: a stream may decode into one message again
		err = unmarshalLarge(b, m.ProtoReflect(), 0)
	} else {
		buf := data.MaterializeToBuffer(grpcBuffers)
		if !boundedProto(buf.ReadOnlyData(), m) {
			err = proto.Unmarshal(buf.ReadOnlyData(), m)
		}
		buf.Free()
	}
	if err == nil {
		return nil
	}
	return markUnreadable(v, err)
}

// Large messages. gRPC hands the codec a message in the transport's
// buffers (16 KiB frames); joining them copies it once, and
// proto.Unmarshal copies every bytes field (message bodies) once more: a
// 100 MB batch cost 300 MB at its peak. unmarshalLarge decodes a message
// of largeMessage bytes or more from its joined copy (a buffer of its own,
// never pooled) with its large bytes fields pointing into that copy
// instead: twice the message at the peak, once when gRPC frees its
// buffers.
const (
	largeMessage  = 1 << 20  // messages decoded by unmarshalLarge
	largeField    = 16 << 10 // bytes fields (and messages holding them) that alias
	maxLargeDepth = 8        // nesting unmarshalLarge follows (tagq's requests: 2)
)

// unmarshalLarge decodes b into m as proto.Unmarshal does (merging: m is
// new), but a bytes field of largeField bytes or more aliases b, capacity
// cut to its length so that an append copies; a message field as large is
// decoded the same way, down to maxLargeDepth; every other field is
// decoded by proto.Unmarshal on its own bytes, merged into m.
func unmarshalLarge(b []byte, m protoreflect.Message, depth int) error {
	fields := m.Descriptor().Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		fn := protowire.ConsumeFieldValue(num, typ, b[n:])
		if fn < 0 {
			return protowire.ParseError(fn)
		}
		field, rest := b[:n+fn], b[n+fn:]
		fd := fields.ByNumber(num)
		if fd != nil && typ == protowire.BytesType && !fd.IsMap() && depth < maxLargeDepth {
			v, _ := protowire.ConsumeBytes(b[n:])
			switch {
			case len(v) < largeField:
			case fd.Kind() == protoreflect.BytesKind && !fd.IsList():
				m.Set(fd, protoreflect.ValueOfBytes(v[:len(v):len(v)]))
				b = rest
				continue
			case fd.Kind() == protoreflect.MessageKind && fd.IsList():
				l := m.Mutable(fd).List()
				e := l.NewElement()
				if err := unmarshalLarge(v, e.Message(), depth+1); err != nil {
					return err
				}
				l.Append(e)
				b = rest
				continue
			case fd.Kind() == protoreflect.MessageKind:
				if err := unmarshalLarge(v, m.Mutable(fd).Message(), depth+1); err != nil {
					return err
				}
				b = rest
				continue
			}
		}
		if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(field, m.Interface()); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// markUnreadable leaves v, a unary tagq request that failed to decode with
// err, empty but for the mark checkReadable refuses, and returns nil; any
// other message it leaves alone, returning err.
func markUnreadable(v any, err error) error {
	m, ok := v.(proto.Message)
	if !ok || !unaryRequests[m.ProtoReflect().Descriptor().FullName()] {
		return err
	}
	proto.Reset(m)
	mark := protowire.AppendTag(nil, unreadableField, protowire.BytesType)
	mark = protowire.AppendString(mark, tags.Clip(err.Error(), tags.MaxEcho))
	m.ProtoReflect().SetUnknown(mark)
	return nil
}

// checkReadable refuses a request the codec could not read (see above):
// INVALID_ARGUMENT / MALFORMED_REQUEST, naming the message type and why;
// and one a decoder refused to decode (markRefused: a repeated field over
// its limit), with the refusal it carries.
func checkReadable(req any) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	u := m.ProtoReflect().GetUnknown()
	for len(u) > 0 {
		num, typ, n := protowire.ConsumeTag(u)
		if n < 0 {
			return nil
		}
		if num == unreadableField && typ == protowire.BytesType {
			why, _ := protowire.ConsumeString(u[n:])
			return statusWith(codes.InvalidArgument, ReasonMalformedRequest,
				fmt.Sprintf("the request is not a readable %s: %s", m.ProtoReflect().Descriptor().FullName(), why), "", nil)
		}
		if num == refusedField && typ == protowire.BytesType {
			raw, _ := protowire.ConsumeBytes(u[n:])
			return refusedMark(raw)
		}
		fn := protowire.ConsumeFieldValue(num, typ, u[n:])
		if fn < 0 {
			return nil
		}
		u = u[n+fn:]
	}
	return nil
}
