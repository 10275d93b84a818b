// Package docs carries sluice's documents that the binary serves: the
// OpenAPI description of its HTTP API. It holds no code beyond embedding.
package docs

import _ "embed"

// OpenAPI is docs/openapi.yaml, the OpenAPI 3.1 description of the HTTP
// API, served at GET /openapi.yaml. It must not be modified.
//
//go:embed openapi.yaml
var OpenAPI []byte
