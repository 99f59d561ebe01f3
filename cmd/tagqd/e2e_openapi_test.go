package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/stretchr/testify/require"
)

// openAPICheck sends REST calls to a tagqd and holds each request and
// answer to the OpenAPI document that tagqd serves.
type openAPICheck struct {
	t    *testing.T
	d    *daemon
	doc  *openapi3.T
	seen map[string]bool // operation ids called
}

func newOpenAPICheck(t *testing.T, d *daemon) *openAPICheck {
	raw, err := httpGet("http://" + d.http + "/openapi.json")
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData([]byte(raw))
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	return &openAPICheck{t: t, d: d, doc: doc, seen: map[string]bool{}}
}

var templateVar = regexp.MustCompile(`\{([^{}]+)\}`)

// route finds the operation of a request by its path template. (kin-openapi's
// routers do not match a variable followed by a custom verb, as in
// /v1/queues/{name}:purge.) A variable matches one path segment up to a
// colon: tagq's names and ids have none.
func (c *openAPICheck) route(req *http.Request) (*routers.Route, map[string]string) {
	c.t.Helper()
	for _, path := range c.doc.Paths.InMatchingOrder() {
		var names []string
		re, last := "^", 0
		for _, v := range templateVar.FindAllStringSubmatchIndex(path, -1) {
			re += regexp.QuoteMeta(path[last:v[0]]) + `([^/:]+)`
			names = append(names, path[v[2]:v[3]])
			last = v[1]
		}
		re += regexp.QuoteMeta(path[last:]) + "$"
		m := regexp.MustCompile(re).FindStringSubmatch(req.URL.Path)
		item := c.doc.Paths.Value(path)
		if m == nil || item.GetOperation(req.Method) == nil {
			continue
		}
		params := map[string]string{}
		for i, name := range names {
			params[name] = m[i+1]
		}
		return &routers.Route{Spec: c.doc, Path: path, PathItem: item, Method: req.Method,
			Operation: item.GetOperation(req.Method)}, params
	}
	c.t.Fatalf("%s %s is not in the document", req.Method, req.URL.Path)
	return nil, nil
}

// call sends the request, checks it and the answer against the document,
// requires the HTTP status, and returns the decoded answer.
func (c *openAPICheck) call(method, path, body string, want int) map[string]any {
	c.t.Helper()
	req, err := http.NewRequest(method, "http://"+c.d.http+path, bytes.NewReader([]byte(body)))
	require.NoError(c.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	route, params := c.route(req)
	c.seen[route.Operation.OperationID] = true
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	require.NoError(c.t, openapi3filter.ValidateRequest(context.Background(), in), "%s %s: the request", method, path)
	// ValidateRequest read the body: send it again.
	req.Body = io.NopCloser(bytes.NewReader([]byte(body)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	require.Equal(c.t, want, resp.StatusCode, "%s %s: %s", method, path, raw)
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body:    io.NopCloser(bytes.NewReader(raw)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	require.NoError(c.t, err, "%s %s: the answer %s", method, path, raw)
	var out map[string]any
	require.NoError(c.t, json.Unmarshal(raw, &out))
	return out
}

// TestE2E_RESTAnswersMatchTheOpenAPIDocument drives every REST operation
// of a real tagqd, unset fields (null) and errors included, and validates
// each request and answer against the served document: its types (64-bit
// counters as strings, nullable messages, typed error details) are the
// ones on the wire.
func TestE2E_RESTAnswersMatchTheOpenAPIDocument(t *testing.T) {
	d := start(t, backend{name: "embedded"})
	c := newOpenAPICheck(t, d)

	c.call("POST", "/v1/queues", `{"name": "dlq", "dead_letter_queue": true}`, 200)
	q := c.call("POST", "/v1/queues", `{"name": "q", "redrive_policy": {"dead_letter_queue": "dlq", "max_receive_count": 3}}`, 200)
	require.Equal(t, "0", jget(q, "queue", "state", "retained_messages"), "int64 as a string")
	c.call("POST", "/v1/queues", `{"name": "plain"}`, 200)
	require.Nil(t, jget(c.call("GET", "/v1/queues/plain", "", 200), "queue", "redrive_policy"), "an unset message is null")
	c.call("GET", "/v1/queues?prefix=q&page_size=10", "", 200)
	upd := c.call("PATCH", "/v1/queues/q?update_mask=delay_seconds,visibility_timeout_seconds",
		`{"delay_seconds": 0, "visibility_timeout_seconds": 45}`, 200)
	require.EqualValues(t, 45, jget(upd, "queue", "visibility_timeout_seconds"))
	c.call("POST", "/v1/queues/q/tags", `{"name": "t"}`, 200)
	c.call("GET", "/v1/queues/q/tags", "", 200)

	c.call("POST", "/v1/queues/q/messages", `{"body": "aGk=", "attributes": {"k": {"string_value": "v"}}}`, 200)
	batch := c.call("POST", "/v1/queues/q/messages:batchSend",
		`{"entries": [{"id": "a", "body": "YQ=="}, {"id": "b", "body": "Yg=="}, {"id": "c", "body": "Yw=="}, {"id": "d", "body": "ZA=="},
		  {"id": "e", "body": "ZQ=="}, {"id": "f", "body": "Zg=="}, {"id": "g", "body": "Zw=="}, {"id": "h", "body": "aA=="},
		  {"id": "i", "body": "aQ=="}]}`, 200)
	require.Len(t, jget(batch, "successful"), 9)
	c.call("POST", "/v1/queues/q/messages:peek", `{"tag": "t", "max_messages": 2}`, 200)
	got := c.call("POST", "/v1/queues/q/messages:receive", `{"tag": "t", "max_messages": 10}`, 200)
	msgs, _ := got["messages"].([]any)
	require.Len(t, msgs, 10)
	h := func(i int) string { return jget(msgs[i], "receipt_handle").(string) }
	require.Nil(t, jget(msgs[0], "dead_letter"), "not a dead letter: null")
	c.call("POST", "/v1/queues/q/messages:delete", `{"receipt_handle": "`+h(0)+`"}`, 200)
	c.call("POST", "/v1/queues/q/messages:batchDelete", `{"entries": [{"id": "1", "receipt_handle": "`+h(1)+`"}]}`, 200)
	c.call("POST", "/v1/queues/q/messages:changeVisibility", `{"receipt_handle": "`+h(2)+`", "visibility_seconds": 60}`, 200)
	c.call("POST", "/v1/queues/q/messages:batchChangeVisibility",
		`{"entries": [{"id": "1", "receipt_handle": "`+h(2)+`", "visibility_seconds": 30}]}`, 200)
	c.call("POST", "/v1/queues/q/messages:dead", `{"receipt_handle": "`+h(3)+`", "reason": "BAD"}`, 200)
	c.call("POST", "/v1/queues/q/messages:batchDead", `{"entries": [{"id": "1", "receipt_handle": "`+h(4)+`", "reason": "BAD"}]}`, 200)
	// The same without the queue: the handle names it.
	c.call("POST", "/v1/messages:delete", `{"receipt_handle": "`+h(5)+`"}`, 200)
	c.call("POST", "/v1/messages:batchDelete", `{"entries": [{"id": "1", "receipt_handle": "`+h(6)+`"}]}`, 200)
	c.call("POST", "/v1/messages:changeVisibility", `{"receipt_handle": "`+h(7)+`", "visibility_seconds": 60}`, 200)
	c.call("POST", "/v1/messages:batchChangeVisibility",
		`{"queue": "q", "entries": [{"id": "1", "receipt_handle": "`+h(7)+`", "visibility_seconds": 30}]}`, 200)
	c.call("POST", "/v1/messages:dead", `{"receipt_handle": "`+h(8)+`", "reason": "BAD"}`, 200)
	c.call("POST", "/v1/messages:batchDead", `{"entries": [{"id": "1", "receipt_handle": "`+h(9)+`", "reason": "BAD"}]}`, 200)
	tag := c.call("GET", "/v1/queues/q/tags/t", "", 200)
	require.Equal(t, "4", jget(tag, "tag", "state", "dead_total"))
	sought := c.call("POST", "/v1/queues/q/tags/t:seek", `{"message_id": "`+jget(msgs[9], "message_id").(string)+`"}`, 200)
	require.Equal(t, "4", jget(sought, "tag", "state", "dead_total"), "totals stay")
	c.call("POST", "/v1/queues/q/tags/t:seek", `{"message_id": "1-1"}`, 404)
	// Rates over time: the series' shape (the sampler's figures are
	// e2e_rates_test.go's), a tag's alone, and a window out of range.
	rates := c.call("GET", "/v1/queues/q/rates?window_seconds=600", "", 200)
	require.EqualValues(t, 10, jget(rates, "resolution_seconds"))
	c.call("GET", "/v1/queues/q/rates?tag=t", "", 200)
	c.call("GET", "/v1/queues/q/rates?window_seconds=5", "", 400)

	move := c.call("POST", "/v1/queues/dlq:startMessageMove", `{"source_queue": "q", "max_messages_per_second": 1}`, 200)
	task, _ := jget(move, "task", "task_id").(string)
	require.NotEmpty(t, task)
	c.call("GET", "/v1/queues/dlq/messageMoves", "", 200)
	c.call("POST", "/v1/queues/dlq/messageMoves/"+task+":cancel", `{}`, 200)

	c.call("POST", "/v1/queues/q:purge", `{}`, 200)
	c.call("DELETE", "/v1/queues/q/tags/t", "", 200)
	c.call("DELETE", "/v1/queues/plain", "", 200)

	// Errors: google.rpc.Status with typed details, under 4XX.
	e := c.call("GET", "/v1/queues/nope", "", 404)
	require.Equal(t, "QUEUE_NOT_FOUND", jget(e, "details", 0, "reason"))
	e = c.call("POST", "/v1/queues", `{"name": "has space"}`, 400)
	require.Equal(t, "type.googleapis.com/google.rpc.BadRequest", jget(e, "details", 1, "@type"))
	require.Equal(t, "queue.name", jget(e, "details", 1, "field_violations", 0, "field"))

	// Every operation of the services this test drives was called (a
	// service added later is logged, to be added here).
	driven := []string{"QueueService", "MessageService", "RedriveService"}
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if slices.ContainsFunc(op.Tags, func(tag string) bool { return slices.Contains(driven, tag) }) {
				require.True(t, c.seen[op.OperationID], "%s %s (%s) was not called", method, path, op.OperationID)
			} else if !c.seen[op.OperationID] {
				t.Logf("not checked against live answers: %s %s (%s)", method, path, op.OperationID)
			}
		}
	}
}
