package docs

import (
	"bytes"
	"testing"
)

func TestOpenAPIIsServedWithoutItsComment(t *testing.T) {
	if !bytes.HasPrefix(document, []byte("# Code generated ")) {
		t.Errorf("docs/openapi.yaml starts %.40q, want its generated header", document)
	}
	if !bytes.HasPrefix(OpenAPI, []byte("openapi: 3.1")) {
		t.Errorf("OpenAPI starts %.40q, want openapi: 3.1", OpenAPI)
	}
}

func TestWithoutComment(t *testing.T) {
	tests := []struct{ in, want string }{
		{"# a\n# b\nopenapi: 3.1.0\n", "openapi: 3.1.0\n"},
		{"openapi: 3.1.0\n# not a header\n", "openapi: 3.1.0\n# not a header\n"},
		{"# only\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := string(withoutComment([]byte(tt.in))); got != tt.want {
			t.Errorf("withoutComment(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
