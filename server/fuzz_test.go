package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/emptypb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// Fuzz targets (go test -run='^$' -fuzz='^FuzzX$' -fuzztime=15s ./server;
// .ci/run runs each for a bounded time). Their seeds run with the tests.

// fuzzEntryIDOK is the rule for a batch entry id, written out apart from
// the regexp.
func fuzzEntryIDOK(s string) bool {
	if len(s) < 1 || len(s) > 80 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// FuzzBatchEntryIDs: a batch's entry ids (comma-separated in the input)
// are accepted exactly when there are 1-100, each valid and none repeated;
// otherwise the refusal names the first entry at fault and why.
func FuzzBatchEntryIDs(f *testing.F) {
	f.Add("a,b,c")
	f.Add("a,b,a")
	f.Add("ok,not ok")
	f.Add("")
	f.Add(strings.Repeat("x,", 100) + "y")
	f.Add(strings.Repeat("é", 50))
	f.Fuzz(func(t *testing.T, in string) {
		var ids []string
		if in != "" {
			ids = strings.Split(in, ",")
		}
		reason, field := "", ""
		if len(ids) == 0 || len(ids) > tags.MaxBatchEntries {
			reason, field = tags.ReasonBatchTooLarge, "entries"
		} else {
			for i, id := range ids {
				if !fuzzEntryIDOK(id) {
					reason, field = tags.ReasonInvalidName, fmt.Sprintf("entries[%d].id", i)
					break
				}
				if slices.Contains(ids[:i], id) {
					reason, field = tags.ReasonDuplicateBatchEntryID, fmt.Sprintf("entries[%d].id", i)
					break
				}
			}
		}
		err := checkBatch(ids)
		if reason == "" {
			if err != nil {
				t.Fatalf("%q refused: %v", ids, err)
			}
			return
		}
		st := status.Convert(toStatus(err)) // as the interceptor answers it
		info := errorInfo(st)
		if st.Code() != codes.InvalidArgument || info == nil || info.GetReason() != reason || info.GetMetadata()["field"] != field {
			t.Fatalf("%q: got %v (%v), want INVALID_ARGUMENT %s naming %s", ids, err, info, reason, field)
		}
		if len(st.Message()) > 4*tags.MaxEcho+200 {
			t.Fatalf("%q: an error of %d bytes", ids, len(st.Message()))
		}
	})
}

// fuzzUnaryRequests are the request types of tagq's unary methods, in a
// fixed order.
func fuzzUnaryRequests() []protoreflect.FullName {
	var names []protoreflect.FullName
	for n := range unaryRequests {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// fuzzSeedRequests are real requests, marshalled, for the protobuf targets.
func fuzzSeedRequests(f *testing.F) [][]byte {
	var out [][]byte
	for _, m := range []proto.Message{
		&tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q", DelaySeconds: i32(5), UserAttributes: map[string]string{"team": "a"}}},
		&tagqv1.SendMessageRequest{Queue: "q", Body: []byte("hello"),
			Attributes: map[string]*tagqv1.MessageAttribute{"k": {Value: &tagqv1.MessageAttribute_StringValue{StringValue: "v"}}}},
		&tagqv1.DeleteMessageRequest{Queue: "q", ReceiptHandle: "AwFBAQ"},
		&tagqv1.ChangeMessageVisibilityRequest{Queue: "q", ReceiptHandle: "x", VisibilitySeconds: 30},
		&tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: "t"}},
		&tagqv1.SendMessageBatchRequest{Queue: "q", Entries: []*tagqv1.SendMessageBatchEntry{{Id: "1", Body: []byte("a")}, {Id: "1"}}},
		&tagqv1.ListQueuesRequest{PageSize: 3, PageToken: "bogus"},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return append(out, nil, []byte{0xff}, []byte{0x0a, 0x05, 'q'}, protowire.AppendTag(nil, 1, protowire.StartGroupType))
}

// FuzzRequestCodec: the server's codec reads any bytes as any unary tagq
// request without failing (grpc-go would answer a failure with INTERNAL):
// bytes protobuf can read give exactly the message proto.Unmarshal gives
// and pass checkReadable; bytes it cannot read give a request that
// checkReadable refuses with INVALID_ARGUMENT / MALFORMED_REQUEST.
func FuzzRequestCodec(f *testing.F) {
	for i, b := range fuzzSeedRequests(f) {
		f.Add(uint8(i), b)
	}
	names := fuzzUnaryRequests()
	codec := encoding.GetCodecV2("proto")
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		name := names[int(which)%len(names)]
		mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
		if err != nil {
			t.Fatal(err)
		}
		got, want := mt.New().Interface(), mt.New().Interface()
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(raw)}, got); err != nil {
			t.Fatalf("%s: the codec failed: %v", name, err)
		}
		readable := proto.Unmarshal(raw, want) == nil
		refused := checkReadable(got)
		switch {
		case readable && refused == nil:
			if !proto.Equal(got, want) {
				t.Fatalf("%s: the codec read %v, protobuf %v", name, got, want)
			}
		case readable && (fuzzHasField(raw, unreadableField) || fuzzHasField(raw, refusedField)):
			// A client sent a mark's field itself: refused as unreadable,
			// which it is to tagq, or as the limit it names.
		case readable && countPlans[name] != nil && countPlans[name].checkProto(raw) != nil:
			// A repeated field over its limit: refused undecoded.
			if r := errorInfo(status.Convert(refused)).GetReason(); r != tags.ReasonBatchTooLarge && r != tags.ReasonInvalidAttribute {
				t.Fatalf("%s: a repeated field over its limit got %v", name, refused)
			}
		case readable:
			t.Fatalf("%s: readable bytes refused: %v", name, refused)
		default:
			st := status.Convert(refused)
			if refused == nil || st.Code() != codes.InvalidArgument || errorInfo(st).GetReason() != ReasonMalformedRequest {
				t.Fatalf("%s: unreadable bytes got %v", name, refused)
			}
		}
	})
}

// fuzzHasField says whether the top level of a protobuf message has field
// num.
func fuzzHasField(b []byte, num protowire.Number) bool {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return false
		}
		if n == num {
			return true
		}
		m := protowire.ConsumeFieldValue(n, typ, b[l:])
		if m < 0 {
			return false
		}
		b = b[l+m:]
	}
	return false
}

// fuzzMethods are the unary methods the gRPC target calls: all but
// ReceiveMessage, whose long poll would stall the fuzzer.
func fuzzMethods() []string {
	var out []string
	for _, fd := range []protoreflect.FileDescriptor{tagqv1.File_tagq_v1_queue_proto,
		tagqv1.File_tagq_v1_message_proto, tagqv1.File_tagq_v1_redrive_proto} {
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			for j := 0; j < sd.Methods().Len(); j++ {
				m := sd.Methods().Get(j)
				if !m.IsStreamingClient() && !m.IsStreamingServer() && m.Name() != "ReceiveMessage" {
					out = append(out, fmt.Sprintf("/%s/%s", sd.FullName(), m.Name()))
				}
			}
		}
	}
	return out
}

// fuzzStatusOK checks a refusal as every client may rely on: never
// INTERNAL or UNKNOWN, always ErrorInfo in tagq's domain, a bounded
// message. It returns a description of what is wrong, or "".
func fuzzStatusOK(st *status.Status) string {
	switch st.Code() {
	case codes.OK:
		return ""
	case codes.Internal, codes.Unknown, codes.DataLoss, codes.Unimplemented, codes.DeadlineExceeded:
		return "code " + st.Code().String()
	}
	if info := errorInfo(st); info == nil || info.GetDomain() != Domain || info.GetReason() == "" {
		return "no ErrorInfo in the tagq domain"
	}
	if len(st.Message()) > maxStatusMessage+len("…") {
		return fmt.Sprintf("a message of %d bytes", len(st.Message()))
	}
	return ""
}

// FuzzGRPCRequests: any bytes as the request of a unary tagq method (on a
// server over miniredis, with queue q and tag t) get OK or a status with
// ErrorInfo, never INTERNAL, UNKNOWN or a panic (which the server's
// recovery would turn into INTERNAL).
func FuzzGRPCRequests(f *testing.F) {
	methods := fuzzMethods()
	for i, b := range fuzzSeedRequests(f) {
		for j := range methods {
			if (i+j)%5 == 0 {
				f.Add(uint8(j), b)
			}
		}
	}
	b := fuzzServer(f)
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) { b.invokeRaw(t, methods[int(which)%len(methods)], raw) })
}

// fuzzServer is a server over miniredis with queue q and tag t, for the
// gRPC and REST targets.
func fuzzServer(f *testing.F) *testBundle {
	b := setup(f)
	if _, err := b.q.CreateQueue(b.ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "q"}}); err != nil {
		f.Fatal(err)
	}
	if _, err := b.q.CreateTag(b.ctx, &tagqv1.CreateTagRequest{Queue: "q", Tag: &tagqv1.Tag{Name: "t"}}); err != nil {
		f.Fatal(err)
	}
	return b
}

// invokeRaw calls method with raw as its request and checks the status
// (fuzzStatusOK).
func (b *testBundle) invokeRaw(t *testing.T, method string, raw []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	// rawCodec (codec_test.go) sends the bytes as they are; any answer
	// reads as an Empty with unknown fields.
	err := b.conn.Invoke(ctx, method, &raw, &emptypb.Empty{}, grpc.ForceCodecV2(rawCodec{}))
	if bad := fuzzStatusOK(status.Convert(err)); bad != "" {
		t.Fatalf("%s %x: %s: %v", method, raw, bad, err)
	}
}

// FuzzGRPCFields: each unary method's request with every field set from
// the fuzzer's string, number and bool, messages depth%3 levels deep (0:
// none, as in CreateQueue with no queue), gets OK or a status with
// ErrorInfo, never INTERNAL, UNKNOWN or a panic.
func FuzzGRPCFields(f *testing.F) {
	methods := fuzzMethods()
	for i := range methods {
		f.Add(uint8(i), "q", int64(5), true, uint8(2))
		f.Add(uint8(i), "t", int64(-1), false, uint8(0))
	}
	b := fuzzServer(f)
	f.Fuzz(func(t *testing.T, which uint8, s string, n int64, flag bool, depth uint8) {
		method := methods[int(which)%len(methods)]
		name := strings.Split(method, "/")
		sd, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name[1]))
		if err != nil {
			t.Fatal(err)
		}
		md := sd.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(name[2]))
		mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		if err != nil {
			t.Fatal(err)
		}
		req := mt.New()
		// Protobuf cannot carry invalid UTF-8 in a string (FuzzGRPCRequests
		// sends such bytes).
		fuzzFill(req, strings.ToValidUTF8(s, "\uFFFD"), n, flag, int(depth%3))
		raw, err := proto.Marshal(req.Interface())
		if err != nil {
			t.Fatal(err)
		}
		b.invokeRaw(t, method, raw)
	})
}

// fuzzRoutes are the REST routes the REST targets post to: every route
// with a body, on queue q, but receive (a long poll), with the message its
// body is.
var fuzzRoutes = []struct {
	method, path string
	body         protoreflect.FullName
}{
	{"POST", "/v1/queues", "tagq.v1.Queue"},
	{"PATCH", "/v1/queues/q?update_mask=delay_seconds,user_attributes,redrive_policy", "tagq.v1.Queue"},
	{"PATCH", "/v1/queues/q", "tagq.v1.Queue"},
	{"POST", "/v1/queues/q:purge", "tagq.v1.PurgeQueueRequest"},
	{"POST", "/v1/queues/q/tags", "tagq.v1.Tag"},
	{"POST", "/v1/queues/q/messages", "tagq.v1.SendMessageRequest"},
	{"POST", "/v1/queues/q/messages:batchSend", "tagq.v1.SendMessageBatchRequest"},
	{"POST", "/v1/queues/q/messages:delete", "tagq.v1.DeleteMessageRequest"},
	{"POST", "/v1/queues/q/messages:batchDelete", "tagq.v1.DeleteMessageBatchRequest"},
	{"POST", "/v1/queues/q/messages:changeVisibility", "tagq.v1.ChangeMessageVisibilityRequest"},
	{"POST", "/v1/queues/q/messages:batchChangeVisibility", "tagq.v1.ChangeMessageVisibilityBatchRequest"},
	{"POST", "/v1/queues/q/messages:peek", "tagq.v1.PeekMessageRequest"},
	{"POST", "/v1/queues/q/messages:dead", "tagq.v1.DeadMessageRequest"},
	{"POST", "/v1/queues/q/messages:batchDead", "tagq.v1.DeadMessageBatchRequest"},
	{"POST", "/v1/queues/q:startMessageMove", "tagq.v1.StartMessageMoveRequest"},
	{"POST", "/v1/queues/q/messageMoves/t1:cancel", "tagq.v1.CancelMessageMoveRequest"},
}

// restFuzzer is a server over miniredis, with queue q and tag t, for the
// REST targets.
type restFuzzer struct{ h http.Handler }

func newRESTFuzzer(f *testing.F) *restFuzzer {
	return &restFuzzer{h: fuzzServer(f).rest.Config.Handler}
}

// check posts body (as application/json) to route and checks the answer:
// a 2xx with JSON, or a 4xx whose JSON body is a status with ErrorInfo in
// tagq's domain, a bounded message and the HTTP status of its code. Never
// a 5xx (nor a panic, which would fail the target).
func (r *restFuzzer) check(t *testing.T, which uint8, body []byte) {
	t.Helper()
	route := fuzzRoutes[int(which)%len(fuzzRoutes)]
	req := httptest.NewRequest(route.method, route.path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, req)
	what := func() string {
		return fmt.Sprintf("%s %s %q: %d %s", route.method, route.path, body, rec.Code, rec.Body)
	}
	if rec.Code < 200 || rec.Code >= 500 || (rec.Code >= 300 && rec.Code < 400) {
		t.Fatal(what())
	}
	if !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("not JSON: %s", what())
	}
	if rec.Code < 400 {
		return
	}
	var st struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Details []struct {
			Type   string `json:"@type"`
			Reason string `json:"reason"`
			Domain string `json:"domain"`
		} `json:"details"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatalf("%v: %s", err, what())
	}
	if c := codes.Code(st.Code); c == codes.OK || c == codes.Internal || c == codes.Unknown ||
		len(st.Details) == 0 || st.Details[0].Type != "type.googleapis.com/google.rpc.ErrorInfo" ||
		st.Details[0].Domain != Domain || st.Details[0].Reason == "" || len(st.Message) > maxStatusMessage+len("…") {
		t.Fatalf("not a tagq error: %s", what())
	}
	if rec.Code != runtime.HTTPStatusFromCode(codes.Code(st.Code)) && rec.Code != http.StatusRequestEntityTooLarge &&
		rec.Code != http.StatusUnsupportedMediaType {
		t.Fatalf("HTTP %d for %s: %s", rec.Code, codes.Code(st.Code), what())
	}
}

// FuzzRESTBodies: any bytes as the body of a REST route (see check).
// Through the real HTTP handler of server.HTTPHandler.
func FuzzRESTBodies(f *testing.F) {
	for i, body := range []string{
		`{"name": "fz", "delay_seconds": 5}`,
		`{"delay_seconds": 901, "user_attributes": {"a": "b"}}`,
		`{}`,
		`{"name": "t2", "filter": {"conditions": [{"name": "k", "string_value": "v"}]}}`,
		`{"body": "aGk=", "attributes": {"k": {"string_value": "v"}}}`,
		`{"entries": [{"id": "1", "body": "eA=="}, {"id": "1", "body": "eA=="}]}`,
		`{"receipt_handle": "AwFBAQ"}`,
		`{"entries": [{"id": "a", "receipt_handle": "x"}]}`,
		`{"receipt_handle": "x", "visibility_seconds": 99999}`,
		`{"ids": ["0-1"]}`,
		`{"receipt_handle": "", "reason": "nope"}`,
		`{"body": 12}`,
		`{"body": "not base64!"}`,
		`{"name": "` + strings.Repeat("n", 300) + `"}`,
		`[1, 2`,
		"\xff\xfe",
		`{"delay_seconds": 1e400}`,
		`{"delay_seconds": "5"}`,
		`null`,
		`{"name": "q", "name": "r"}`,
	} {
		f.Add(uint8(i), []byte(body))
	}
	r := newRESTFuzzer(f)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) { r.check(t, which, body) })
}

// FuzzRESTFields: each route's body as protojson makes it, with every
// field (two levels deep, lists and maps of one entry) set from the
// fuzzer's string, number and bool: the values, rather than the JSON,
// explored (see check).
func FuzzRESTFields(f *testing.F) {
	for i := range fuzzRoutes {
		f.Add(uint8(i), "q", int64(5), true)
		f.Add(uint8(i), "", int64(-1), false)
	}
	f.Add(uint8(0), "a{b}", int64(1)<<40, false)
	f.Add(uint8(5), "DLQ.x", int64(0), true)
	r := newRESTFuzzer(f)
	f.Fuzz(func(t *testing.T, which uint8, s string, n int64, b bool) {
		route := fuzzRoutes[int(which)%len(fuzzRoutes)]
		mt, err := protoregistry.GlobalTypes.FindMessageByName(route.body)
		if err != nil {
			t.Fatal(err)
		}
		m := mt.New()
		fuzzFill(m, s, n, b, 2)
		body, err := protojson.Marshal(m.Interface())
		if err != nil {
			t.Skipf("not JSON protojson writes: %v", err)
		}
		r.check(t, which, body)
	})
}

// fuzzFill sets every field of m from s, n and b, depth levels of
// messages deep.
func fuzzFill(m protoreflect.Message, s string, n int64, b bool, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			k, ok := fuzzValue(fd.MapKey(), m.Mutable(fd).Map().NewValue(), s, n, b, depth)
			v, ok2 := fuzzValue(fd.MapValue(), m.Mutable(fd).Map().NewValue(), s, n, b, depth)
			if ok && ok2 {
				m.Mutable(fd).Map().Set(k.MapKey(), v)
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			if v, ok := fuzzValue(fd, l.NewElement(), s, n, b, depth); ok {
				l.Append(v)
			}
		default:
			var fresh protoreflect.Value
			if fd.Message() != nil {
				fresh = m.NewField(fd)
			}
			if v, ok := fuzzValue(fd, fresh, s, n, b, depth); ok {
				m.Set(fd, v)
			}
		}
	}
}

// fuzzValue is a value of fd's kind from s, n and b; fresh is an empty
// message value when fd is a message.
func fuzzValue(fd protoreflect.FieldDescriptor, fresh protoreflect.Value, s string, n int64, b bool, depth int) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(s), true
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(s)), true
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(b), true
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(n)), true
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(n), true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n)), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(n)), true
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(n)), true
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(float64(n)), true
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n % 8)), true
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if depth == 0 || !fresh.IsValid() {
			return protoreflect.Value{}, false
		}
		switch fd.Message().FullName() {
		case "google.protobuf.Timestamp", "google.protobuf.Duration": // in range, or JSON cannot say it
			fresh.Message().Set(fd.Message().Fields().ByName("seconds"), protoreflect.ValueOfInt64(n%100_000_000_000))
			return fresh, true
		}
		fuzzFill(fresh.Message(), s, n, b, depth-1)
		return fresh, true
	}
	return protoreflect.Value{}, false
}
