package main

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// A minimal protoc-gen-openapiv2 output with the shapes Convert rewrites:
// a Get and an Update of one resource under differently named variables,
// a message field, a timestamp and the default error response.
const swagger = `{
  "swagger": "2.0",
  "info": {"title": "x/v1/x.proto", "version": "version not set"},
  "consumes": ["application/json"], "produces": ["application/json"],
  "paths": {
    "/v1/things/{name}": {"get": {"operationId": "S_GetThing",
      "parameters": [{"name": "name", "in": "path", "required": true, "type": "string"}],
      "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/v1Thing"}},
                    "default": {"description": "error", "schema": {"$ref": "#/definitions/rpcStatus"}}}}},
    "/v1/things/{thing.name}": {"patch": {"operationId": "S_UpdateThing",
      "parameters": [{"name": "thing.name", "in": "path", "required": true, "type": "string"},
                     {"name": "thing", "in": "body", "required": true, "schema": {"type": "object",
                       "properties": {"part": {"$ref": "#/definitions/v1Part", "description": "The part."}}}},
                     {"name": "update_mask", "in": "query", "required": false, "type": "string"}],
      "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/v1Thing"}},
                    "default": {"description": "error", "schema": {"$ref": "#/definitions/rpcStatus"}}}}}
  },
  "definitions": {
    "v1Thing": {"type": "object", "properties": {
      "name": {"type": "string"},
      "count": {"type": "string", "format": "int64"},
      "part": {"$ref": "#/definitions/v1Part", "description": "The thing's part."},
      "create_time": {"type": "string", "format": "date-time"}}},
    "v1Part": {"type": "object", "description": "A part.", "properties": {"x": {"type": "integer", "format": "int32"}}},
    "protobufAny": {"type": "object", "properties": {"@type": {"type": "string"}}, "additionalProperties": {}},
    "rpcStatus": {"type": "object", "properties": {"code": {"type": "integer", "format": "int32"},
      "message": {"type": "string"}, "details": {"type": "array", "items": {"$ref": "#/definitions/protobufAny"}}}}
  }
}`

func TestConvert_MergesPathsAndCompletesTheDocument(t *testing.T) {
	doc, err := Convert([]byte(swagger))
	require.NoError(t, err)
	require.Equal(t, "tagq", doc.Info.Title)
	require.Equal(t, []string{"/v1/things/{name}"}, doc.Paths.InMatchingOrder(), "one template for both")
	item := doc.Paths.Value("/v1/things/{name}")
	require.Equal(t, "S_GetThing", item.Get.OperationID)
	require.Equal(t, "S_UpdateThing", item.Patch.OperationID)
	require.NotNil(t, item.Patch.Parameters.GetByInAndName(openapi3.ParameterInPath, "name"), "renamed from thing.name")
	require.Contains(t, item.Patch.Parameters.GetByInAndName(openapi3.ParameterInQuery, "update_mask").Description, "comma-separated")

	thing := doc.Components.Schemas["v1Thing"].Value
	require.Equal(t, "3.1.0", doc.OpenAPI)
	part := thing.Properties["part"].Value
	require.Len(t, part.AnyOf, 2, "the message or null")
	require.Equal(t, "#/components/schemas/v1Part", part.AnyOf[0].Ref)
	require.Equal(t, &openapi3.Types{"null"}, part.AnyOf[1].Value.Type)
	require.Equal(t, "The thing's part.", part.Description, "the field's description, not the message's")
	require.Equal(t, &openapi3.Types{"string", "null"}, thing.Properties["create_time"].Value.Type)
	require.Equal(t, &openapi3.Types{"string"}, thing.Properties["count"].Value.Type, "a scalar is never null")
	require.NotContains(t, item.Patch.RequestBody.Value.Extensions, "x-originalParamName")
	body := item.Patch.RequestBody.Value.Content.Get("application/json").Schema.Value
	require.Equal(t, "The part.", body.Properties["part"].Value.Description)

	for _, op := range []*openapi3.Operation{item.Get, item.Patch} {
		require.Nil(t, op.Responses.Default())
		require.Equal(t, "#/components/responses/Error", op.Responses.Value("4XX").Ref)
	}
}

func TestConvert_RefusesTwoOperationsOnTheSameURLs(t *testing.T) {
	doc := openapi3.T{Paths: openapi3.NewPaths(
		openapi3.WithPath("/v1/a/{x}", &openapi3.PathItem{Get: &openapi3.Operation{}}),
		openapi3.WithPath("/v1/a/{y.z}", &openapi3.PathItem{Get: &openapi3.Operation{}}),
	)}
	require.ErrorContains(t, mergeEquivalentPaths(&doc), "serve the same URLs")
}
