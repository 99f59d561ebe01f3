package redisstore

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"

	"github.com/tagq/tagq/tags"
)

// storedAttr is one attribute in a stream entry's "a" field (JSON, read by
// the filters in lib.lua): {"s": string} or {"b": base64}.
type storedAttr struct {
	S *string `json:"s,omitempty"`
	B *string `json:"b,omitempty"`
}

func encodeAttrs(attrs map[string]tags.Attribute) string {
	if len(attrs) == 0 {
		return ""
	}
	m := make(map[string]storedAttr, len(attrs))
	for k, a := range attrs {
		if a.Binary {
			b := base64.StdEncoding.EncodeToString(a.Bytes)
			m[k] = storedAttr{B: &b}
		} else {
			v := a.String
			m[k] = storedAttr{S: &v}
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func decodeAttrs(s string) map[string]tags.Attribute {
	if s == "" {
		return nil
	}
	var m map[string]storedAttr
	if json.Unmarshal([]byte(s), &m) != nil {
		return nil
	}
	out := make(map[string]tags.Attribute, len(m))
	for k, a := range m {
		switch {
		case a.B != nil:
			b, _ := base64.StdEncoding.DecodeString(*a.B)
			out[k] = tags.Attribute{Binary: true, Bytes: b}
		case a.S != nil:
			out[k] = tags.Attribute{String: *a.S}
		}
	}
	return out
}

// idTime is the send time encoded in a stream id.
func idTime(id string) time.Time {
	ms, _, _ := parseID(id)
	return time.UnixMilli(int64(ms))
}

// decodeEntry builds a Message from a stream entry's id and flat fields.
func decodeEntry(id string, fields []any) tags.Message {
	m := tags.Message{ID: id, SendTime: idTime(id)}
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		v, _ := fields[i+1].(string)
		switch k {
		case "b":
			m.Body = []byte(v)
		case "a":
			m.Attributes = decodeAttrs(v)
		case "x":
			var dl tags.DeadLetter
			if json.Unmarshal([]byte(v), &dl) == nil {
				dl.DeadTime = time.UnixMilli(dl.DeadMs)
				m.DeadLetter = &dl
				m.MoveCount = dl.MoveCount
			}
		case "mv":
			m.MoveCount, _ = strconv.Atoi(v)
		case "tp":
			m.Topic = v
		case "pr":
			p, _ := strconv.Atoi(v)
			m.Priority = int32(p)
		}
	}
	if m.Body == nil {
		m.Body = []byte{}
	}
	return m
}

// decodeScriptMessages reads the {{id, fields, count, first ms}...} lists
// that receive.lua and peek.lua return.
func decodeScriptMessages(v any, tag string) []tags.Message {
	list, _ := v.([]any)
	out := make([]tags.Message, 0, len(list))
	for _, item := range list {
		e, _ := item.([]any)
		if len(e) < 4 {
			continue
		}
		id, _ := e[0].(string)
		fields, _ := e[1].([]any)
		m := decodeEntry(id, fields)
		m.Tag = tag
		m.ReceiveCount = int(asInt64(e[2]))
		if first := asInt64(e[3]); first > 0 {
			m.FirstReceiveTime = time.UnixMilli(first)
		}
		out = append(out, m)
	}
	return out
}

// asInt64 reads a script reply number (an integer, or a decimal string).
func asInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		var n int64
		for _, c := range x {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int64(c-'0')
		}
		return n
	}
	return 0
}
