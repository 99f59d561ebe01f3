package server

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tagq/tagq/tags"
)

// notFoundField names the request field of a QUEUE_NOT_FOUND or
// TAG_NOT_FOUND error (ErrorInfo metadata "field", as for bad input), so
// that a client can tell which of a request's names is missing: "queue"
// or "name" (GetQueue, DeleteQueue), "tag" (ReceiveMessage, PeekMessage),
// "name" (GetTag, DeleteTag), "queue.redrive_policy.dead_letter_queue"
// (CreateQueue with a missing dead-letter queue), and so on for every RPC.
//
// The engine reports the missing queue and tag by value (metadata "queue"
// and "tag"); the field is the first string field of req, in declaration
// order and depth first, holding that value. For a missing tag the fields
// named "queue" are passed over: they name the tag's queue, which exists.
// An error that already names a field, or whose value no field holds,
// is returned as it is.
func notFoundField(req any, err error) error {
	e, ok := tags.AsError(err)
	if !ok || e.Field != "" {
		return err
	}
	var want string
	skipQueue := false
	switch e.Reason {
	case tags.ReasonQueueNotFound:
		want = e.Metadata["queue"]
	case tags.ReasonTagNotFound:
		want, skipQueue = e.Metadata["tag"], true
	default:
		return err
	}
	m, ok := req.(proto.Message)
	if !ok || want == "" {
		return err
	}
	field := findString(m.ProtoReflect(), want, skipQueue, "")
	if field == "" {
		return err
	}
	c := *e
	c.Field = field
	return &c
}

// findString is the path of the first string field of m (in declaration
// order, depth first through singular messages) whose value is want.
func findString(m protoreflect.Message, want string, skipQueue bool, prefix string) string {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsList() || fd.IsMap() || !m.Has(fd) {
			continue
		}
		name := prefix + string(fd.Name())
		switch fd.Kind() {
		case protoreflect.StringKind:
			if m.Get(fd).String() == want && !(skipQueue && fd.Name() == "queue") {
				return name
			}
		case protoreflect.MessageKind:
			if found := findString(m.Get(fd).Message(), want, skipQueue, name+"."); found != "" {
				return found
			}
		}
	}
	return ""
}
