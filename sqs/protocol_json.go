package sqs

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	jsonv1 "github.com/go-json-experiment/json/v1"
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

// parseJSON reads a JSON request body. An empty body is an empty request.
//
// It is decoded as encoding/json would (the same names, case folded;
// duplicates, the last one's value; invalid UTF-8, U+FFFD), by
// go-json-experiment/json's v1 emulation, encoding/json/v2's upstream:
// about 4x as fast on a SendMessageBatch of 10 KiB (BenchmarkParseJSON),
// where encoding/json's byte-at-a-time string scanning, done twice
// (validation, then decoding), was a tenth of tagqd's CPU on the SQS
// row.
func parseJSON(body []byte) (*request, error) {
	r := &request{}
	if len(bytes.TrimSpace(body)) == 0 {
		return r, nil
	}
	if err := jsonv1.Unmarshal(body, r); err != nil {
		var te *jsonv1.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" && te.Type != nil {
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
