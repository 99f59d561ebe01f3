// Command openapi3 turns the Swagger 2.0 document that protoc-gen-openapiv2
// makes from proto/ and tagq.http.yaml into the OpenAPI 3.1 document tagqd
// serves at /openapi.json. `make generate` runs it:
//
//	go run ./tools/openapi3 -o gen/openapi/tagq.openapi.json gen/openapi/tagq.swagger.json
//
// protoc-gen-openapiv2 is the one generator that reads the gateway's HTTP
// rules as grpc-gateway itself does (from tagq.http.yaml, not from
// google.api.http options), so the paths cannot drift from the routes
// served; kin-openapi's openapi2conv converts its output to 3.0, and this
// program then fixes what neither knows about tagq and declares the result
// 3.1 (the 3.0 constructs that 3.1 dropped, nullable above all, are never
// written: null is a type here; the rest openapi2conv does not emit for
// protoc-gen-openapiv2's output). Everything here is
// generic over services and paths, so a new service in proto/ needs no
// change:
//
//   - info: title "tagq", version "v1" (the API version: the /v1 paths and
//     the tagq.v1 package), a description; servers.
//   - security: every operation takes a bearer API key
//     (`Authorization: Bearer <key>`) or a client certificate (mutualTLS)
//     mapped to a principal, as tagqd's authentication does.
//   - path templates that differ only in their variables' names (GetQueue's
//     /v1/queues/{name} and UpdateQueue's /v1/queues/{queue.name}) become
//     one: the variables are renamed to those of the template with the
//     fewest dotted names, and the operations are merged into one path item.
//   - fields that hold a message (a $ref to an object, or a Timestamp) may
//     be null: the gateway emits unset ones so (EmitUnpopulated).
//   - errors: every operation answers 4XX and 5XX with the JSON form of
//     google.rpc.Status, whose details are typed as ErrorInfo, BadRequest or
//     any other Any.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

func main() {
	out := flag.String("o", "", "write the OpenAPI 3 document to this file")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: openapi3 -o out.json swagger.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapi3:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	v2, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	doc, err := Convert(v2)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// Convert turns protoc-gen-openapiv2's Swagger 2.0 JSON into tagq's
// OpenAPI 3.1 document, validated.
func Convert(v2 []byte) (*openapi3.T, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(v2, &doc2); err != nil {
		return nil, err
	}
	doc, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, err
	}
	doc.OpenAPI = "3.1.0"
	var fields fieldDocs
	if err := json.Unmarshal(v2, &fields); err != nil {
		return nil, err
	}
	describe(doc)
	dropConverterNotes(doc)
	documentUpdateMasks(doc)
	nullableMessages(doc, fields)
	if err := mergeEquivalentPaths(doc); err != nil {
		return nil, err
	}
	if err := errorResponses(doc); err != nil {
		return nil, err
	}
	// Round-trip so every $ref is resolved for Validate as a loader would.
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	loaded, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, err
	}
	if err := loaded.Validate(openapi3.NewLoader().Context); err != nil {
		return nil, fmt.Errorf("the converted document is invalid: %w", err)
	}
	return doc, nil
}

const apiDescription = `tagq is a message queue where every queue is read by many independent
tags (readers), each with its own cursor, in-flight messages, receive counts
and counters. This is its REST API (grpc-gateway over the gRPC services of
the tagq.v1 package; generated from proto/tagq/v1 and tagq.http.yaml).

JSON field names are the protos' (snake_case); 64-bit integers are strings;
bytes are base64; timestamps RFC 3339; unset message fields are null.
Every request with a body needs ` + "`Content-Type: application/json`" + ` (else 415).

Errors are the JSON form of google.rpc.Status: code (the gRPC code), message,
and details with a google.rpc.ErrorInfo (domain "tagq", a reason such as
QUEUE_NOT_FOUND, metadata.field naming the request field at fault) and, when
a field is at fault, a google.rpc.BadRequest.`

const bearerDescription = `An API key of a principal, sent as ` + "`Authorization: Bearer <key>`" + `.
Checked when tagqd runs with authentication on (--auth); without it, a
request needs no credentials.`

const mtlsDescription = `A client certificate signed by one of the CAs of tagqd's --tls-client-ca
(which then requires one on every connection). With authentication on, a
certificate mapped to a principal stands for it, as an API key does.`

func describe(doc *openapi3.T) {
	doc.Info = &openapi3.Info{Title: "tagq", Version: "v1", Description: apiDescription}
	doc.Servers = openapi3.Servers{{
		URL:         "{scheme}://{host}",
		Description: "A tagqd's --http-addr (default :8080); https when it runs with --tls-cert.",
		Variables: map[string]*openapi3.ServerVariable{
			"scheme": {Enum: []string{"http", "https"}, Default: "http"},
			"host":   {Default: "localhost:8080"},
		},
	}}
	if doc.Components == nil {
		doc.Components = &openapi3.Components{}
	}
	if doc.Components.SecuritySchemes == nil {
		doc.Components.SecuritySchemes = openapi3.SecuritySchemes{}
	}
	doc.Components.SecuritySchemes["bearerAuth"] = &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
		Type: "http", Scheme: "bearer", BearerFormat: "tagq API key", Description: bearerDescription,
	}}
	doc.Components.SecuritySchemes["mutualTLS"] = &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
		Type: "mutualTLS", Description: mtlsDescription,
	}}
	// Alternatives: a key, or a client certificate.
	doc.Security = openapi3.SecurityRequirements{{"bearerAuth": []string{}}, {"mutualTLS": []string{}}}
}

const updateMaskDescription = `One value: a google.protobuf.FieldMask as comma-separated snake_case field
names of the body, e.g. ` + "`delay_seconds,redrive_policy`" + `. Left out, the fields present in the
body are updated.`

// dropConverterNotes removes the x-originalParamName that openapi2conv
// leaves on each request body (the Swagger 2.0 body parameter's name, of
// no use to a reader of the 3.1 document).
func dropConverterNotes(doc *openapi3.T) {
	for _, p := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(p).Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				delete(op.RequestBody.Value.Extensions, "x-originalParamName")
			}
		}
	}
}

// documentUpdateMasks says how the update_mask query parameter of a PATCH
// is written: grpc-gateway reads it as one comma-separated value, and when
// it is absent infers the mask from the body's fields.
func documentUpdateMasks(doc *openapi3.T) {
	for _, p := range doc.Paths.InMatchingOrder() {
		if op := doc.Paths.Value(p).Patch; op != nil {
			if pr := op.Parameters.GetByInAndName(openapi3.ParameterInQuery, "update_mask"); pr != nil {
				pr.Description = strings.TrimSpace(pr.Description + "\n\n" + updateMaskDescription)
			}
		}
	}
}

var pathVar = regexp.MustCompile(`\{([^{}]+)\}`)

// mergeEquivalentPaths makes one path template of the templates that match
// the same URLs (OpenAPI forbids two: "/v1/queues/{name}" and
// "/v1/queues/{queue.name}"), renaming the path parameters of the
// operations moved over.
func mergeEquivalentPaths(doc *openapi3.T) error {
	groups := map[string][]string{}
	for _, p := range doc.Paths.InMatchingOrder() {
		shape := pathVar.ReplaceAllString(p, "{}")
		groups[shape] = append(groups[shape], p)
	}
	for _, shape := range slices.Sorted(maps.Keys(groups)) {
		paths := groups[shape]
		if len(paths) < 2 {
			continue
		}
		// Keep the template with the fewest dotted variables (a top-level
		// field reads better than a nested one), then the shortest.
		slices.SortFunc(paths, func(a, b string) int {
			if d := strings.Count(a, ".") - strings.Count(b, "."); d != 0 {
				return d
			}
			if d := len(a) - len(b); d != 0 {
				return d
			}
			return strings.Compare(a, b)
		})
		keep := doc.Paths.Value(paths[0])
		keepVars := pathVar.FindAllStringSubmatch(paths[0], -1)
		for _, p := range paths[1:] {
			item := doc.Paths.Value(p)
			rename := map[string]string{}
			for i, m := range pathVar.FindAllStringSubmatch(p, -1) {
				rename[m[1]] = keepVars[i][1]
			}
			for method, op := range item.Operations() {
				if keep.GetOperation(method) != nil {
					return fmt.Errorf("%s %s and %s %s serve the same URLs", method, paths[0], method, p)
				}
				for _, pr := range op.Parameters {
					if pr.Value != nil && pr.Value.In == openapi3.ParameterInPath && rename[pr.Value.Name] != "" {
						pr.Value.Name = rename[pr.Value.Name]
					}
				}
				keep.SetOperation(method, op)
			}
			doc.Paths.Delete(p)
		}
	}
	return nil
}

// nullableMessages lets every property that holds a message be null: the
// gateway marshals with EmitUnpopulated, so an unset message field (a $ref
// to an object schema, or a google.protobuf.Timestamp) is null.
// Proto3 optional scalars and oneof members are left out instead, and lists
// and maps are [] and {}, so those stay as they are.
func nullableMessages(doc *openapi3.T, fields fieldDocs) {
	isObject := func(ref string) bool {
		s := doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		return s != nil && s.Value != nil && s.Value.Type.Is(openapi3.TypeObject)
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
		nullableIn(doc.Components.Schemas[name], isObject, fields.Definitions[name].Properties)
	}
	for _, p := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(p).Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					nullableIn(mt.Schema, isObject, fields.body(p, method))
				}
			}
		}
	}
}

// fieldDocs holds the descriptions protoc-gen-openapiv2 gives fields of
// message type, beside their $ref: openapi2conv drops them (a $ref takes no
// siblings), and nullableIn puts them back.
type fieldDocs struct {
	Definitions map[string]struct {
		Properties map[string]fieldDoc `json:"properties"`
	} `json:"definitions"`
	Paths map[string]map[string]struct {
		Parameters []struct {
			In     string `json:"in"`
			Schema struct {
				Properties map[string]fieldDoc `json:"properties"`
			} `json:"schema"`
		} `json:"parameters"`
	} `json:"paths"`
}

type fieldDoc struct {
	Description string `json:"description"`
}

// body returns the field docs of an operation's inline body schema.
func (f fieldDocs) body(path, method string) map[string]fieldDoc {
	for _, p := range f.Paths[path][strings.ToLower(method)].Parameters {
		if p.In == "body" {
			return p.Schema.Properties
		}
	}
	return nil
}

func nullSchema() *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeNull}})
}

func nullableIn(s *openapi3.SchemaRef, isObject func(string) bool, docs map[string]fieldDoc) {
	if s == nil || s.Ref != "" || s.Value == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(s.Value.Properties)) {
		prop := s.Value.Properties[name]
		switch {
		case prop.Ref != "" && isObject(prop.Ref):
			// The message or null. The field's own description if it has
			// one, else its message's.
			desc := docs[name].Description
			if desc == "" && prop.Value != nil {
				desc = prop.Value.Description
			}
			s.Value.Properties[name] = &openapi3.SchemaRef{Value: &openapi3.Schema{
				AnyOf: openapi3.SchemaRefs{{Ref: prop.Ref}, nullSchema()}, Description: desc,
			}}
		case prop.Ref == "" && prop.Value != nil && prop.Value.Type.Is(openapi3.TypeString) && prop.Value.Format == "date-time":
			prop.Value.Type = &openapi3.Types{openapi3.TypeString, openapi3.TypeNull}
		default:
			nullableIn(prop, isObject, nil)
		}
	}
}

// The names of the error schemas and response added to components.
const (
	statusSchema     = "rpcStatus"
	errorInfoSchema  = "rpcErrorInfo"
	badRequestSchema = "rpcBadRequest"
	errorResponse    = "Error"
)

const errorDescription = `An error: google.rpc.Status as JSON. The HTTP status follows the gRPC code
as grpc-gateway maps it: INVALID_ARGUMENT, FAILED_PRECONDITION and
OUT_OF_RANGE 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403, NOT_FOUND 404,
ALREADY_EXISTS and ABORTED 409, RESOURCE_EXHAUSTED 429, UNIMPLEMENTED 501,
UNAVAILABLE 503, DEADLINE_EXCEEDED 504, others 500. The REST layer adds 413
(REQUEST_TOO_LARGE), 415 (UNSUPPORTED_MEDIA_TYPE) and 405
(METHOD_NOT_ALLOWED). The first detail is always a google.rpc.ErrorInfo.`

// errorResponses gives every operation a 4XX and a 5XX response with the
// status schema, in place of protoc-gen-openapiv2's untyped default one,
// and types the status's details.
func errorResponses(doc *openapi3.T) error {
	schemas := doc.Components.Schemas
	st := schemas[statusSchema]
	if st == nil || st.Value == nil || st.Value.Properties["details"] == nil {
		return errors.New("no rpcStatus schema with details: did protoc-gen-openapiv2 change?")
	}
	if _, ok := schemas["protobufAny"]; !ok {
		return errors.New("no protobufAny schema: did protoc-gen-openapiv2 change?")
	}
	str := func(desc string) *openapi3.SchemaRef {
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Description: desc})
	}
	typeURL := func(name string) *openapi3.SchemaRef {
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString},
			Enum: []any{"type.googleapis.com/" + name}})
	}
	schemas[errorInfoSchema] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "google.rpc.ErrorInfo: why the call failed. tagq's domain is \"tagq\"; metadata.field names the request field at fault.",
		Required:    []string{"@type", "reason", "domain"},
		Properties: openapi3.Schemas{
			"@type":  typeURL("google.rpc.ErrorInfo"),
			"reason": str("UPPER_SNAKE_CASE reason, such as QUEUE_NOT_FOUND or INVALID_NAME."),
			"domain": str("\"tagq\" for tagq's own errors."),
			"metadata": openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject},
				AdditionalProperties: openapi3.AdditionalProperties{Schema: str("")}}),
		},
	})
	violation := openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject},
		Properties: openapi3.Schemas{
			"field":       str("The request field at fault, as a path (queue.name)."),
			"description": str(""),
			"reason":      str("The ErrorInfo reason."),
			"localized_message": openapi3.NewSchemaRef("", &openapi3.Schema{
				Description: "google.rpc.LocalizedMessage; tagq leaves it null.",
				Type:        &openapi3.Types{openapi3.TypeObject, openapi3.TypeNull}}),
		}})
	schemas[badRequestSchema] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type:        &openapi3.Types{openapi3.TypeObject},
		Description: "google.rpc.BadRequest: the field at fault.",
		Required:    []string{"@type"},
		Properties: openapi3.Schemas{
			"@type":            typeURL("google.rpc.BadRequest"),
			"field_violations": openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: violation}),
		},
	})
	st.Value.Description = "google.rpc.Status: the gRPC code, a message, and typed details."
	st.Value.Properties["details"].Value.Items = openapi3.NewSchemaRef("", &openapi3.Schema{AnyOf: openapi3.SchemaRefs{
		openapi3.NewSchemaRef("#/components/schemas/"+errorInfoSchema, nil),
		openapi3.NewSchemaRef("#/components/schemas/"+badRequestSchema, nil),
		openapi3.NewSchemaRef("#/components/schemas/protobufAny", nil),
	}})

	if doc.Components.Responses == nil {
		doc.Components.Responses = openapi3.ResponseBodies{}
	}
	doc.Components.Responses[errorResponse] = &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription(errorDescription).
		WithJSONSchemaRef(openapi3.NewSchemaRef("#/components/schemas/"+statusSchema, nil))}
	ref := &openapi3.ResponseRef{Ref: "#/components/responses/" + errorResponse}
	for _, p := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(p).Operations() {
			if op.Responses.Default() == nil {
				return fmt.Errorf("%s %s has no default (error) response: did protoc-gen-openapiv2 change?", method, p)
			}
			op.Responses.Delete("default")
			op.Responses.Set("4XX", ref)
			op.Responses.Set("5XX", ref)
		}
	}
	return nil
}
