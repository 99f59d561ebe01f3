package sqs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/tagq/tagq/internal/jsonlimit"
)

// The AWS JSON 1.0 protocol (current aws-sdk-go-v2, AWS SDK for
// JavaScript v3, recent botocore): POST / with
// X-Amz-Target: AmazonSQS.<Action> and a JSON body of the request's
// members; the answer is the result's members as JSON. Errors carry the
// shape in __type and, because SQS's model is query-compatible, the
// query protocol's code and fault in x-amzn-query-error (from which the
// SDKs take the error code).

const (
	jsonContentType = "application/x-amz-json-1.0"
	targetPrefix    = "AmazonSQS."
)

// jsonAction is the action an X-Amz-Target names ("" when it names none
// of SQS's).
func jsonAction(target string) string {
	a, ok := strings.CutPrefix(target, targetPrefix)
	if !ok {
		return ""
	}
	return a
}

// Bounds on a JSON request's lists and maps, checked before it is decoded
// (a decoder builds an element per item: 8 MiB of empty Entries, [{},…],
// took 1.2 GB): Entries at SQS's most, 10 (more is
// TooManyEntriesInBatchRequest, as SQS answers), and every other list or
// map, at any depth, at maxJSONItems (SQS's longest, a queue's tags, hold
// 50).
const maxJSONItems = 100

var jsonShape = func() *jsonlimit.Shape {
	any := &jsonlimit.Shape{Max: maxJSONItems}
	any.Elem, any.Other = any, any
	entry := &jsonlimit.Shape{Fields: map[string]*jsonlimit.Shape{}, Other: any}
	entries := &jsonlimit.Shape{Name: "Entries", Max: maxBatchEntries, Elem: entry}
	root := &jsonlimit.Shape{Fields: map[string]*jsonlimit.Shape{"Entries": entries}, Other: any}
	for _, f := range []*jsonlimit.Shape{root, entry} { // named, for the error
		for _, name := range []string{"Attributes", "AttributeNames", "MessageAttributeNames", "MessageSystemAttributeNames",
			"MessageAttributes", "MessageSystemAttributes", "Tags", "tags", "TagKeys"} {
			f.Fields[name] = &jsonlimit.Shape{Name: name, Max: maxJSONItems, Elem: any, Other: any}
		}
	}
	return root
}()

// checkJSONSize refuses a body with a list or map over its bound.
func checkJSONSize(body []byte) *Error {
	v := jsonlimit.Check(body, jsonShape)
	switch {
	case v == nil:
		return nil
	case v.Path == "Entries":
		return errTooManyEntries("Maximum number of entries per request are %d. You have sent more.", maxBatchEntries)
	}
	name := v.Path
	if name == "" {
		name = "the request"
	}
	return invalidValue(clip(name), "", fmt.Sprintf("a list or map holds at most %d items", maxJSONItems))
}

// parseJSON reads a JSON request body. An empty body is an empty request.
//
// It is decoded as encoding/json would (the same names, case folded, an
// exact match first; duplicates, the last one's value; invalid UTF-8,
// U+FFFD; base64 bytes; unknown members ignored), by
// go-json-experiment/json (encoding/json/v2's upstream) with its v1
// options: about 4x as fast on a SendMessageBatch of 10 KiB
// (BenchmarkParseJSON), where encoding/json's byte-at-a-time string
// scanning, done twice (validation, then decoding), was a tenth of
// tagqd's CPU on the SQS row. Only errors are reported as v2 reports
// them: in one pass, without validating the whole body first (which
// costs a third of the time), the request being dropped on any error.
// Before it, checkJSONSize walks the bytes once, building nothing
// (internal/jsonlimit), so that a list or map over its bound is refused
// before the decoder makes an element per item.
func parseJSON(body []byte) (*request, error) {
	r := &request{}
	if len(bytes.TrimSpace(body)) == 0 {
		return r, nil
	}
	if e := checkJSONSize(body); e != nil {
		return nil, e
	}
	if err := jsonv2.Unmarshal(body, r, jsonOptions); err != nil {
		var se *jsonv2.SemanticError
		if errors.As(err, &se) && se.JSONPointer != "" && se.GoType != nil {
			member := strings.Join(slices.Collect(se.JSONPointer.Tokens()), ".")
			got := jsonKind(se.JSONKind)
			if se.JSONKind == '0' && len(se.JSONValue) > 0 {
				got += " " + string(se.JSONValue)
			}
			return nil, errSerialization("the value of %s is not of the member's type (%s expected, got a JSON %s)", clip(member), expectedKind(se.GoType), clip(got))
		}
		return nil, errSerialization("the request body is not a JSON object of the action's members: %s", clip(err.Error()))
	}
	return r, nil
}

var (
	jsonOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false))
	bytesType   = reflect.TypeFor[[]byte]()
)

// expectedKind names what a member of Go type t takes: its Go type when
// it is a scalar (int32, string), else its JSON kind.
func expectedKind(t reflect.Type) string {
	switch {
	case t == bytesType:
		return "base64 bytes"
	case t.Kind() == reflect.Pointer:
		return expectedKind(t.Elem())
	case t.Kind() == reflect.Slice:
		return "array"
	case t.Kind() == reflect.Map || t.Kind() == reflect.Struct:
		return "object"
	}
	return t.String()
}

// jsonKind names a JSON value's kind.
func jsonKind(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// jsonError is the JSON protocol's error body.
type jsonError struct {
	Type    string `json:"__type"`
	Message string `json:"message"`
}

func writeJSONError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	h.Set("Content-Type", jsonContentType)
	h.Set("X-Amzn-Query-Error", e.Code+";"+e.fault())
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(jsonError{Type: e.jsonType(), Message: e.Message})
}
