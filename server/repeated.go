package server

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/jsonlimit"
	"github.com/tagq/tagq/tags"
)

// Repeated fields, bounded before they are decoded. A decoder builds an
// element for every occurrence of a repeated field: an empty batch entry
// is two bytes on the wire and about 130 once decoded, so a 10 MB batch of
// them took 650 MB before validation (which would have refused it at its
// 101st entry) and before any permission check; the request bytes in
// flight count the wire's bytes, not these. So every decoder of a tagq
// request first counts the repeated fields that have an API maximum
// (repeatedLimits) in the request's bytes — protobuf with protowire
// (checkProto), JSON with a walk that builds nothing (checkJSON,
// internal/jsonlimit) — and stops at the first over it. Such a request is
// not decoded: it is left empty but for its other (not repeated) fields
// and a mark carrying the refusal (markRefused), which checkReadable
// turns into the call's status (INVALID_ARGUMENT, the limit's reason,
// naming the field) before anything else runs; a Publish frame gets it in
// its answer, a Consume stream ends with it.

// repeatedLimit is the API's maximum of a repeated or map field.
type repeatedLimit struct {
	max    int
	reason string
	msg    string // the refusal's message, of max ("a batch has 1-%d entries")
}

// repeatedLimits are the repeated fields of tagq's requests that have a
// maximum, by full name. Fields not listed are not counted.
var repeatedLimits = func() map[protoreflect.FullName]*repeatedLimit {
	batch := &repeatedLimit{max: tags.MaxBatchEntries, reason: tags.ReasonBatchTooLarge, msg: "a batch has 1-%d entries, got more"}
	peek := &repeatedLimit{max: tags.MaxBatchEntries, reason: tags.ReasonBatchTooLarge, msg: "peek takes 1-%d message ids, got more"}
	attrs := &repeatedLimit{max: tags.MaxAttributes, reason: tags.ReasonInvalidAttribute, msg: "at most %d attributes, got more"}
	// A Consume stream settles only what it holds outstanding.
	settle := &repeatedLimit{max: MaxMaxOutstandingMessages, reason: tags.ReasonBatchTooLarge,
		msg: "a request settles at most %d messages of each kind (the most a stream holds outstanding), got more"}
	return map[protoreflect.FullName]*repeatedLimit{
		"tagq.v1.SendMessageBatchRequest.entries":             batch,
		"tagq.v1.DeleteMessageBatchRequest.entries":           batch,
		"tagq.v1.ChangeMessageVisibilityBatchRequest.entries": batch,
		"tagq.v1.DeadMessageBatchRequest.entries":             batch,
		"tagq.v1.PublishRequest.entries":                      batch,
		"tagq.v1.PeekMessageRequest.message_ids":              peek,
		"tagq.v1.SendMessageRequest.attributes":               attrs,
		"tagq.v1.SendMessageBatchEntry.attributes":            attrs,
		"tagq.v1.ConsumeRequest.acks":                         settle,
		"tagq.v1.ConsumeRequest.nacks":                        settle,
		"tagq.v1.ConsumeRequest.extends":                      settle,
		"tagq.v1.ConsumeRequest.deads":                        settle,
	}
}()

// countPlan is how to count a message's bounded fields: by field number,
// the limit of the field itself and the plan of the message it holds (a
// list's elements), when that has bounded fields of its own. A plan has
// at most maxPlanFields fields.
type countPlan struct {
	fields []*countField // by field number; nil: not counted
	json   *jsonlimit.Shape
}

type countField struct {
	full   protoreflect.FullName
	name   string
	list   bool
	packed bool // a scalar list: packed, its elements counted in its bytes
	kind   protoreflect.Kind
	limit  *repeatedLimit // nil: not bounded itself
	elem   *countPlan     // nil: nothing bounded inside
	index  int            // in the counts of checkProto
}

// field is the counted field of number num, or nil.
func (p *countPlan) field(num protowire.Number) *countField {
	if int(num) < len(p.fields) {
		return p.fields[num]
	}
	return nil
}

// countPlans are the plans of tagq's requests (unary ones, Publish and
// Consume frames) that have bounded fields; the others are not walked.
var countPlans = func() map[protoreflect.FullName]*countPlan {
	out := map[protoreflect.FullName]*countPlan{}
	for _, fd := range []protoreflect.FileDescriptor{tagqv1.File_tagq_v1_queue_proto,
		tagqv1.File_tagq_v1_message_proto, tagqv1.File_tagq_v1_redrive_proto, tagqv1.File_tagq_v1_access_proto} {
		for i := 0; i < fd.Services().Len(); i++ {
			methods := fd.Services().Get(i).Methods()
			for j := 0; j < methods.Len(); j++ {
				in := methods.Get(j).Input()
				if p := planOf(in, 0); p != nil {
					out[in.FullName()] = p
				}
			}
		}
	}
	return out
}()

// planOf is md's plan, nil when nothing in it is bounded.
func planOf(md protoreflect.MessageDescriptor, depth int) *countPlan {
	if depth > 4 { // tagq's requests nest 3 deep; recursive types stop here
		return nil
	}
	p := &countPlan{}
	shape := &jsonlimit.Shape{Fields: map[string]*jsonlimit.Shape{}}
	fields := md.Fields()
	n := 0
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		k := fd.Kind()
		f := &countField{full: fd.FullName(), name: string(fd.Name()), list: fd.IsList(), kind: k, limit: repeatedLimits[fd.FullName()], index: n,
			packed: fd.IsList() && k != protoreflect.MessageKind && k != protoreflect.GroupKind && k != protoreflect.BytesKind &&
				k != protoreflect.StringKind}
		if k == protoreflect.MessageKind && !fd.IsMap() {
			f.elem = planOf(fd.Message(), depth+1)
		}
		if f.limit == nil && f.elem == nil {
			continue
		}
		for int(fd.Number()) >= len(p.fields) {
			p.fields = append(p.fields, nil)
		}
		p.fields[fd.Number()] = f
		n++
		fs := &jsonlimit.Shape{Name: string(fd.Name()), Tag: f}
		if f.limit != nil {
			fs.Max = f.limit.max
		}
		if f.elem != nil {
			if fd.IsList() {
				fs.Elem = f.elem.json
			} else {
				fs.Fields = f.elem.json.Fields
			}
		}
		// protojson takes a field by its JSON name and its proto name.
		shape.Fields[fd.JSONName()], shape.Fields[string(fd.Name())] = fs, fs
	}
	if n == 0 {
		return nil
	}
	if n > maxPlanFields {
		panic("server: " + string(md.FullName()) + " has more bounded fields than countPlan counts")
	}
	p.json = shape
	return p
}

// maxPlanFields bounds the fields of a countPlan (checkProto's counts).
const maxPlanFields = 8

// fieldOverLimit is a bounded field found over its limit: the field (its
// full name, the key of its limit) and its path ("entries",
// "entries[3].attributes").
type fieldOverLimit struct {
	limit *repeatedLimit
	full  protoreflect.FullName
	field string
}

// status is the refusal of a request with the field over its limit.
func (o *fieldOverLimit) status() error {
	return statusWith(codes.InvalidArgument, o.limit.reason, o.field+": "+fmt.Sprintf(o.limit.msg, o.limit.max), o.field, nil)
}

// checkProto counts the bounded fields of b, a message of plan p, and
// returns the first over its limit (nil: none is, or b is not protobuf,
// which its decoding then refuses).
func (p *countPlan) checkProto(b []byte) *fieldOverLimit {
	var counts [maxPlanFields]int
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil
		}
		if f := p.field(num); f != nil {
			k := 1
			if f.packed && typ == protowire.BytesType {
				k = packedCount(b[n:n+m], f.kind)
			}
			counts[f.index] += k
			i := counts[f.index]
			if f.limit != nil && i > f.limit.max {
				return &fieldOverLimit{limit: f.limit, full: f.full, field: f.name}
			}
			if f.elem != nil && typ == protowire.BytesType {
				v, _ := protowire.ConsumeBytes(b[n:])
				if o := f.elem.checkProto(v); o != nil {
					prefix := f.name
					if f.list {
						prefix += "[" + strconv.Itoa(i-1) + "]"
					}
					o.field = prefix + "." + o.field
					return o
				}
			}
		}
		b = b[n+m:]
	}
	return nil
}

// packedCount is the number of elements in a packed repeated scalar
// field's bytes (its length prefix included).
func packedCount(b []byte, kind protoreflect.Kind) int {
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 1
	}
	switch kind {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return len(v) / 4
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return len(v) / 8
	}
	k := 0
	for _, c := range v { // varints: one ends at each byte below 0x80
		if c < 0x80 {
			k++
		}
	}
	return k
}

// checkJSON is checkProto for a JSON request.
func (p *countPlan) checkJSON(b []byte) *fieldOverLimit {
	v := jsonlimit.Check(b, p.json)
	if v == nil {
		return nil
	}
	f := v.Shape.Tag.(*countField)
	return &fieldOverLimit{limit: f.limit, full: f.full, field: v.Path}
}

// refusedField is the unknown field that carries a refusal (markRefused):
// next to unreadableField, and as unused.
const refusedField protowire.Number = protowire.MaxValidNumber - 1

// boundedProto checks b, the protobuf encoding of a message like m, and,
// when a bounded field is over its limit, leaves m marked (markRefused)
// with the fields of b that are not repeated, and returns true: m is not
// to be decoded.
func boundedProto(b []byte, m proto.Message) bool {
	p := countPlans[m.ProtoReflect().Descriptor().FullName()]
	if p == nil {
		return false
	}
	o := p.checkProto(b)
	if o == nil {
		return false
	}
	proto.Reset(m)
	fields := m.ProtoReflect().Descriptor().Fields()
	for len(b) > 0 { // the other fields (a Publish frame's seq) are kept
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		k := protowire.ConsumeFieldValue(num, typ, b[n:])
		if k < 0 {
			break
		}
		if fd := fields.ByNumber(num); fd != nil && !fd.IsList() && !fd.IsMap() {
			_ = proto.UnmarshalOptions{Merge: true}.Unmarshal(b[:n+k], m)
		}
		b = b[n+k:]
	}
	markRefused(m, o)
	return true
}

// boundedJSON is boundedProto for a JSON request; m is left with none of
// its fields (a Publish frame sent as JSON over Connect is answered with
// seq 0).
func boundedJSON(b []byte, m proto.Message) bool {
	p := countPlans[m.ProtoReflect().Descriptor().FullName()]
	if p == nil {
		return false
	}
	o := p.checkJSON(b)
	if o == nil {
		return false
	}
	proto.Reset(m)
	markRefused(m, o)
	return true
}

// markRefused adds to m the mark of o: the field's full name and path,
// whose refusal checkReadable returns (refusedMark).
func markRefused(m proto.Message, o *fieldOverLimit) {
	mark := protowire.AppendTag(nil, refusedField, protowire.BytesType)
	mark = protowire.AppendString(mark, string(o.full)+"\x00"+o.field)
	m.ProtoReflect().SetUnknown(append(m.ProtoReflect().GetUnknown(), mark...))
}

// refusedMark is the refusal a mark names. A client may send the mark's
// field itself: it names a limit or the request is malformed.
func refusedMark(b []byte) error {
	full, field, _ := strings.Cut(string(b), "\x00")
	limit := repeatedLimits[protoreflect.FullName(full)]
	if limit == nil {
		return statusWith(codes.InvalidArgument, ReasonMalformedRequest, "the request carries an unknown mark", "", nil)
	}
	return (&fieldOverLimit{limit: limit, full: protoreflect.FullName(full), field: field}).status()
}
