package sqs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

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
func parseJSON(body []byte) (*request, error) {
	r := &request{}
	if len(bytes.TrimSpace(body)) == 0 {
		return r, nil
	}
	if e := checkJSONSize(body); e != nil {
		return nil, e
	}
	if err := json.Unmarshal(body, r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, errSerialization("the value of %s is not of the member's type (%s expected, got a JSON %s)", clip(te.Field), te.Type.String(), te.Value)
		}
		return nil, errSerialization("the request body is not a JSON object of the action's members: %s", clip(err.Error()))
	}
	return r, nil
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
