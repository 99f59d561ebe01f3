package openapi

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(JSON)
	require.NoError(t, err)
	return doc
}

// The served document is valid OpenAPI 3.1, by kin-openapi's validator,
// with none of 3.0's nullable (3.1 writes null as a type).
func TestOpenAPI_Valid(t *testing.T) {
	doc := load(t)
	require.NoError(t, doc.Validate(context.Background()))
	require.Equal(t, "3.1.0", doc.OpenAPI)
	require.NotContains(t, string(JSON), `"nullable"`)
}

// The defects of the Swagger 2.0 document it replaces stay gone: a title
// and version of its own, servers, on every operation a bearer API key or
// a client certificate.
func TestOpenAPI_InfoServersAndSecurity(t *testing.T) {
	doc := load(t)
	require.Equal(t, "tagq", doc.Info.Title)
	require.Equal(t, "v1", doc.Info.Version)
	require.NotEmpty(t, doc.Servers)
	require.Equal(t, "localhost:8080", doc.Servers[0].Variables["host"].Default)

	scheme := doc.Components.SecuritySchemes["bearerAuth"]
	require.NotNil(t, scheme)
	require.Equal(t, "http", scheme.Value.Type)
	require.Equal(t, "bearer", scheme.Value.Scheme)
	require.Equal(t, "mutualTLS", doc.Components.SecuritySchemes["mutualTLS"].Value.Type)
	require.Equal(t, openapi3.SecurityRequirements{{"bearerAuth": []string{}}, {"mutualTLS": []string{}}}, doc.Security)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			require.Nil(t, op.Security, "%s %s overrides the document's security", method, path)
		}
	}
}

var pathVar = regexp.MustCompile(`\{[^{}]+\}`)

// No two path templates match the same URLs ({name} and {queue.name} were
// two), and every route of tagq.http.yaml (additional bindings too),
// whatever its service, is in the document with its method.
func TestOpenAPI_OnePathPerRouteAndEveryRoute(t *testing.T) {
	doc := load(t)
	byShape := map[string]string{}
	for path := range doc.Paths.Map() {
		shape := pathVar.ReplaceAllString(path, "{}")
		require.NotContains(t, byShape, shape, "%s and %s match the same URLs", path, byShape[shape])
		byShape[shape] = path
	}
	rules, err := os.ReadFile("../../proto/tagq/v1/tagq.http.yaml")
	require.NoError(t, err)
	routes := regexp.MustCompile(`(?m)^\s*(?:-\s*)?(get|put|post|patch|delete):\s*(\S+)\s*$`).FindAllStringSubmatch(string(rules), -1)
	require.Greater(t, len(routes), 20)
	ops := 0
	for _, item := range doc.Paths.Map() {
		ops += len(item.Operations())
	}
	require.Equal(t, len(routes), ops, "one operation per HTTP rule")
	for _, r := range routes {
		path, ok := byShape[pathVar.ReplaceAllString(r[2], "{}")]
		require.True(t, ok, "%s %s is not in the document", r[1], r[2])
		require.NotNil(t, doc.Paths.Value(path).GetOperation(strings.ToUpper(r[1])), "%s %s", r[1], r[2])
	}
}

// Every PATCH documents update_mask, as the query parameter the gateway
// reads.
func TestOpenAPI_PatchDocumentsUpdateMask(t *testing.T) {
	doc := load(t)
	patches := 0
	for path, item := range doc.Paths.Map() {
		if item.Patch == nil {
			continue
		}
		patches++
		p := item.Patch.Parameters.GetByInAndName(openapi3.ParameterInQuery, "update_mask")
		require.NotNil(t, p, "PATCH %s has no update_mask query parameter", path)
		require.True(t, p.Schema.Value.Type.Is(openapi3.TypeString))
		require.Contains(t, p.Description, "comma-separated")
	}
	require.NotZero(t, patches)
	update := doc.Paths.Value("/v1/queues/{name}").Patch
	require.NotNil(t, update)
	require.Equal(t, "QueueService_UpdateQueue", update.OperationID)
}

// 64-bit integers are strings, as grpc-gateway's JSON (protojson) writes
// them: no schema anywhere says integer with a 64-bit format.
func TestOpenAPI_Int64AsStrings(t *testing.T) {
	doc := load(t)
	var int64s []string
	var walk func(where string, s *openapi3.SchemaRef)
	walk = func(where string, s *openapi3.SchemaRef) {
		if s == nil || s.Value == nil || s.Ref != "" { // a $ref is walked as a component
			return
		}
		v := s.Value
		if slices.Contains([]string{"int64", "uint64"}, v.Format) {
			require.True(t, v.Type.Is(openapi3.TypeString), "%s: %s is %v, want string", where, v.Format, v.Type)
			int64s = append(int64s, where)
		}
		for name, p := range v.Properties {
			walk(where+"."+name, p)
		}
		walk(where+"[]", v.Items)
		walk(where+"{}", v.AdditionalProperties.Schema)
		for _, sub := range slices.Concat(v.AllOf, v.AnyOf, v.OneOf) {
			walk(where, sub)
		}
	}
	for name, s := range doc.Components.Schemas {
		walk(name, &openapi3.SchemaRef{Value: s.Value})
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range op.Parameters {
				walk(method+" "+path+" "+p.Value.Name, p.Value.Schema)
			}
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walk(method+" "+path+" body", mt.Schema)
				}
			}
		}
	}
	require.Contains(t, int64s, "v1TagState.available", "the walk found the counters")
}

// Errors: every operation answers 4XX and 5XX with google.rpc.Status, whose
// details are typed (ErrorInfo, BadRequest, any other Any).
func TestOpenAPI_ErrorResponses(t *testing.T) {
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, code := range []string{"4XX", "5XX"} {
				r := op.Responses.Value(code)
				require.NotNil(t, r, "%s %s has no %s response", method, path, code)
				require.Equal(t, "#/components/responses/Error", r.Ref)
			}
			require.NotNil(t, op.Responses.Status(200), "%s %s", method, path)
		}
	}
	st := doc.Components.Responses["Error"].Value.Content.Get("application/json").Schema
	require.Equal(t, "#/components/schemas/rpcStatus", st.Ref)
	var details []string
	for _, s := range st.Value.Properties["details"].Value.Items.Value.AnyOf {
		details = append(details, s.Ref)
	}
	require.Equal(t, []string{"#/components/schemas/rpcErrorInfo", "#/components/schemas/rpcBadRequest",
		"#/components/schemas/protobufAny"}, details)
	info := doc.Components.Schemas["rpcErrorInfo"].Value
	require.Equal(t, []any{"type.googleapis.com/google.rpc.ErrorInfo"}, info.Properties["@type"].Value.Enum)
	require.Contains(t, info.Properties, "reason")
}
