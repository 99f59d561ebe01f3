// Package openapi holds tagq's OpenAPI 3.1 document, served at
// /openapi.json: made by protoc-gen-openapiv2 from proto/tagq/v1 and
// tagq.http.yaml, then converted and completed by tools/openapi3
// (`make generate`).
package openapi

import _ "embed"

// JSON is the merged OpenAPI document of every tagq service.
//
//go:embed tagq.openapi.json
var JSON []byte
