package sqs

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/streamid"
)

// Messages: SQS's message attributes on tagq's, system attributes, bodies.
//
// A tagq attribute is a string or bytes; an SQS attribute also has a data
// type (String, Number, Binary, or one of them with a ".label"). Types
// other than a string's String and a binary's Binary travel in one hidden
// attribute, typesAttr ("name=Type" lines), so a message reads back with
// the types it was sent with, and its MD5OfMessageAttributes matches.
// SQS refuses attribute names starting with "AWS." from senders, so the
// hidden attributes cannot collide with an SQS sender's; tagq's own APIs
// see them, but may not send them (tags.SQSAttributePrefix: the engine
// refuses them with RESERVED_ATTRIBUTE on any send but this endpoint's,
// server.AsSQSEndpoint), so a type or trace header read back is one this
// endpoint wrote.

const (
	typesAttr = "AWS.SQS.DataTypes"   // data types other than String/Binary
	traceAttr = "AWS.SQS.TraceHeader" // the AWSTraceHeader system attribute
	hiddenPfx = tags.SQSAttributePrefix

	maxMessageAttributes = 10 // SQS's limit per message
)

var (
	attrNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,256}$`)
	typeRE     = regexp.MustCompile(`^(String|Number|Binary)(\.[A-Za-z0-9_.-]+)?$`)
	numberRE   = regexp.MustCompile(`^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$`)
)

// validText says whether s holds only the characters SQS takes in a
// message body or string attribute (XML's: #x9, #xA, #xD, #x20-#xD7FF,
// #xE000-#xFFFD, #x10000-#x10FFFF).
func validText(s string) bool {
	for i := 0; i < len(s); {
		// Eight bytes at a time while they are all printable ASCII
		// (0x20-0x7F), as bodies mostly are: a byte under 0x20 makes
		// x-0x20.. borrow into its top bit, one of 0x80 or more has it set.
		for ; i+8 <= len(s); i += 8 {
			x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if ((x-0x2020202020202020)|x)&0x8080808080808080 != 0 {
				break
			}
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c < 0x80 || c == 0x9 || c == 0xA || c == 0xD {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !allowedRune(r) || r == utf8.RuneError && n <= 1 {
			return false
		}
		i += n
	}
	return true
}

func allowedRune(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// deliverable is a body (or string attribute) as SQS can carry it: valid
// as it is in the common case; otherwise (bytes sent through tagq's own
// APIs) with each byte or character SQS cannot carry replaced by U+FFFD.
// MD5OfBody is the digest of what is delivered.
func deliverable(s string) string {
	if validText(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if allowedRune(r) {
			return r
		}
		return '\uFFFD'
	}, s)
}

// checkBody validates an SQS message body (param: its parameter name).
func checkBody(param string, body *string) *Error {
	if body == nil {
		return missing(param)
	}
	if *body == "" {
		return invalidValue(param, "", "a message body must not be empty")
	}
	if !validText(*body) {
		return errInvalidContents("Invalid characters found in %s: only #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF are allowed", param)
	}
	return nil
}

// toTagqAttributes validates a message's attributes and system
// attributes (SendMessage's, or a batch entry's; param prefixes the
// parameter names in errors) and makes them tagq's.
func toTagqAttributes(param string, attrs, system map[string]attrValue) (map[string]*tagqv1.MessageAttribute, *Error) {
	if len(attrs) > maxMessageAttributes {
		return nil, invalidValue(param+"MessageAttributes", "", "a message has at most 10 attributes")
	}
	if len(attrs)+len(system) == 0 {
		return nil, nil
	}
	out := make(map[string]*tagqv1.MessageAttribute, len(attrs)+2)
	var types []string
	for name, a := range attrs {
		p := param + "MessageAttribute." + clip(name)
		if e := checkAttrName(p, name); e != nil {
			return nil, e
		}
		v, e := checkAttrValue(p, a)
		if e != nil {
			return nil, e
		}
		out[name] = v
		if a.DataType != "String" && a.DataType != "Binary" {
			types = append(types, name+"="+a.DataType)
		}
	}
	if len(types) > 0 {
		sort.Strings(types)
		out[typesAttr] = &tagqv1.MessageAttribute{Value: &tagqv1.MessageAttribute_StringValue{StringValue: strings.Join(types, "\n")}}
	}
	for name, a := range system {
		p := param + "MessageSystemAttribute." + clip(name)
		if name != "AWSTraceHeader" {
			return nil, invalidValue(p, "", "the only system attribute a message may be sent with is AWSTraceHeader")
		}
		if a.DataType != "String" || a.StringValue == nil || *a.StringValue == "" {
			return nil, invalidValue(p, "", "AWSTraceHeader is a String with a value")
		}
		out[traceAttr] = &tagqv1.MessageAttribute{Value: &tagqv1.MessageAttribute_StringValue{StringValue: *a.StringValue}}
	}
	return out, nil
}

// checkAttrName applies SQS's rules for message attribute names.
func checkAttrName(param, name string) *Error {
	lower := strings.ToLower(name)
	switch {
	case !attrNameRE.MatchString(name):
		return invalidValue(param, "", "attribute names are 1-256 characters of A-Z a-z 0-9 _ - .")
	case strings.HasPrefix(lower, "aws.") || strings.HasPrefix(lower, "amazon."):
		return invalidValue(param, "", "attribute names must not start with AWS. or Amazon. (reserved)")
	case strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, ".."):
		return invalidValue(param, "", "attribute names must not start or end with a period, nor hold two in a row")
	}
	return nil
}

// checkAttrValue applies SQS's rules for a message attribute's type and
// value, and makes it tagq's.
func checkAttrValue(param string, a attrValue) (*tagqv1.MessageAttribute, *Error) {
	if a.DataType == "" {
		return nil, missing(param + ".DataType")
	}
	if len(a.DataType) > 256 || !typeRE.MatchString(a.DataType) {
		return nil, invalidValue(param+".DataType", clip(a.DataType), "data types are String, Number or Binary, optionally followed by .<label>")
	}
	if len(a.StringListValues) > 0 || len(a.BinaryListValues) > 0 {
		return nil, invalidValue(param, "", "StringListValues and BinaryListValues are not implemented (as in SQS)")
	}
	if isBinaryType(a.DataType) {
		if a.StringValue != nil || len(a.BinaryValue) == 0 {
			return nil, invalidValue(param, "", "a Binary attribute needs a non-empty BinaryValue and no StringValue")
		}
		return &tagqv1.MessageAttribute{Value: &tagqv1.MessageAttribute_BinaryValue{BinaryValue: a.BinaryValue}}, nil
	}
	if a.StringValue == nil || *a.StringValue == "" || a.BinaryValue != nil {
		return nil, invalidValue(param, "", "a String or Number attribute needs a non-empty StringValue and no BinaryValue")
	}
	if !validText(*a.StringValue) {
		return nil, errInvalidContents("Invalid characters found in %s.StringValue", param)
	}
	if strings.HasPrefix(a.DataType, "Number") && !numberRE.MatchString(*a.StringValue) {
		return nil, invalidValue(param+".StringValue", clip(*a.StringValue), "a Number attribute's value is a number")
	}
	return &tagqv1.MessageAttribute{Value: &tagqv1.MessageAttribute_StringValue{StringValue: *a.StringValue}}, nil
}

// toSQSAttributes are a tagq message's attributes as SQS's (hidden ones
// left out, data types restored), and its AWSTraceHeader.
func toSQSAttributes(in map[string]*tagqv1.MessageAttribute) (map[string]attrValue, string) {
	if len(in) == 0 {
		return nil, ""
	}
	types := map[string]string{}
	if t, ok := in[typesAttr]; ok {
		for _, line := range strings.Split(t.GetStringValue(), "\n") {
			if n, typ, ok := strings.Cut(line, "="); ok {
				types[n] = typ
			}
		}
	}
	out := make(map[string]attrValue, len(in))
	for name, a := range in {
		if strings.HasPrefix(name, hiddenPfx) {
			continue
		}
		var v attrValue
		if b, ok := a.GetValue().(*tagqv1.MessageAttribute_BinaryValue); ok {
			v = attrValue{DataType: "Binary", BinaryValue: b.BinaryValue}
			if v.BinaryValue == nil {
				v.BinaryValue = []byte{}
			}
			if t := types[name]; isBinaryType(t) {
				v.DataType = t
			}
		} else {
			s := deliverable(a.GetStringValue())
			v = attrValue{DataType: "String", StringValue: &s}
			if t := types[name]; t != "" && !isBinaryType(t) {
				v.DataType = t
			}
		}
		out[name] = v
	}
	return out, in[traceAttr].GetStringValue()
}

// selectAttributes keeps the attributes names asks for: "All" or ".*"
// for all, "<prefix>.*" for those starting with the prefix, else by name.
// SQS returns none unless asked.
func selectAttributes(attrs map[string]attrValue, names []string) map[string]attrValue {
	if len(attrs) == 0 || len(names) == 0 {
		return nil
	}
	out := map[string]attrValue{}
	for _, want := range names {
		if want == "All" || want == ".*" {
			return attrs
		}
		if prefix, ok := strings.CutSuffix(want, ".*"); ok {
			for n, a := range attrs {
				if strings.HasPrefix(n, prefix+".") {
					out[n] = a
				}
			}
			continue
		}
		if a, ok := attrs[want]; ok {
			out[want] = a
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sequenceNumber is a FIFO message's SequenceNumber, from its stream id
// (a partitioned queue's message id is its partition's stream id and
// "@<partition>": a topic lives in one partition, so its messages' numbers
// increase): increasing with the id ("" when the id is not a stream id).
func sequenceNumber(messageID string) string {
	id, _, _ := strings.Cut(messageID, "@")
	ms, seq, ok := streamid.Parse(id)
	if !ok {
		return ""
	}
	s := strconv.FormatUint(seq, 10)
	if len(s) < 10 {
		s = strings.Repeat("0", 10-len(s)) + s
	}
	return strconv.FormatUint(ms, 10) + s
}
