package server

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Large Connect requests. connect-go reads a unary request's body into a
// buffer that grows by doubling (the last step holds 1.5 times the body)
// before its codec decodes it: a 130 MB JSON body cost 3.6 times its size.
// So the Connect guard decodes a large unary body itself, after the
// caller's credentials and the bytes in flight were checked as connectGate
// checks them: it reads the body into one buffer of its length and decodes
// that (a binary body with unmarshalLarge, its messages' bodies pointing
// into the buffer), then files the request as the gateway's connection
// does (localcodec.go) and hands connect-go, in the body's place, a mark:
// a zero byte (which no JSON value and no protobuf message starts with)
// and the key. connectCodec takes the request filed under it.

// connectMarkLen is the length of the mark: a zero byte and a key.
const connectMarkLen = 1 + len(localKey{})

// predecodeConnect decodes the body of r (a unary Connect call, admitted
// in flight as body) when it is large, and puts the mark in its place; it
// returns the request filed, to drop once the call is answered (nil: the
// body is left to connect-go).
func (s *Server) predecodeConnect(r *http.Request, body *restBody) proto.Message {
	if r.Method != http.MethodPost || r.ContentLength < largeMessage || r.ContentLength > restBodyLimit(s.maxRequest) {
		return nil
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && mt != "application/proto") {
		return nil // the gRPC and gRPC-Web protocols, or a body connect-go refuses
	}
	typ := procedureInput(r.URL.Path)
	if typ == nil {
		return nil
	}
	// Refused calls are left to connectGate, which refuses them unread.
	if s.auth != nil {
		if _, err := s.auth.authenticateHTTP(r); err != nil {
			return nil
		}
	}
	if !body.admit() {
		return nil
	}
	raw, err := body.readAll()
	if err != nil {
		r.Body = failedBody{err}
		return nil
	}
	m := typ.New().Interface()
	switch {
	case mt == "application/json" && boundedJSON(raw, m): // a repeated field over its limit (repeated.go)
	case mt == "application/json":
		// As connectCodec: unknown fields skipped.
		err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(raw, m)
	case boundedProto(raw, m):
	default:
		err = unmarshalLarge(raw, m.ProtoReflect(), 0)
	}
	if err != nil {
		_ = markUnreadable(m, err) // refused by the gRPC server, MALFORMED_REQUEST
	}
	k := localRequests.put(m)
	r.Body = io.NopCloser(bytes.NewReader(append([]byte{0}, k[:]...)))
	r.ContentLength = int64(connectMarkLen)
	return m
}

// procedureInput is the request type of the unary tagq method at path
// (/tagq.v1.Service/Method), or nil.
func procedureInput(path string) protoreflect.MessageType {
	svc, method, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok || streamingProcedures[path] {
		return nil
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc + "." + method))
	if err != nil {
		return nil
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok || !unaryRequests[md.Input().FullName()] {
		return nil
	}
	typ, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
	if err != nil {
		return nil
	}
	return typ
}

// takeMarked moves the request filed under a mark (predecodeConnect) into
// m; ok false: data is not a mark.
func takeMarked(data []byte, m proto.Message) (ok bool, err error) {
	if len(data) != connectMarkLen || data[0] != 0 {
		return false, nil
	}
	var k localKey
	copy(k[:], data[1:])
	src := localRequests.take(k)
	if src == nil || src.ProtoReflect().Descriptor() != m.ProtoReflect().Descriptor() {
		return true, errNotFiled
	}
	moveFields(m.ProtoReflect(), src.ProtoReflect())
	return true, nil
}

var errNotFiled = errors.New("not a request of this process")

// failedBody is a body whose reading failed: connect-go reads the same
// error, and answers it as it would have.
type failedBody struct{ err error }

func (b failedBody) Read([]byte) (int, error) { return 0, b.err }
func (b failedBody) Close() error             { return nil }
