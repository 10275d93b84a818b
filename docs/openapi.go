// Package docs carries sluice's documents that the binary serves: the
// OpenAPI description of its HTTP API. It holds no code beyond embedding.
package docs

import (
	"bytes"
	_ "embed"
)

//go:generate go run github.com/sluicehq/sluice/internal/tools/openapigen -source openapi/source.yaml -wire ../apiwire -out openapi.yaml

// document is docs/openapi.yaml, which go generate writes from
// docs/openapi/source.yaml and the families of package resource.
//
//go:embed openapi.yaml
var document []byte

// OpenAPI is the OpenAPI 3.1 description of the HTTP API, served at GET
// /openapi.yaml: docs/openapi.yaml without its opening comment, which
// tells those who edit the repository how the file is made. It must not
// be modified.
var OpenAPI = withoutComment(document)

// withoutComment returns doc from its first line that is not a comment.
func withoutComment(doc []byte) []byte {
	for bytes.HasPrefix(doc, []byte("#")) {
		_, doc, _ = bytes.Cut(doc, []byte("\n"))
	}
	return doc
}
