package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/internal/resource"
)

const (
	sourcePath   = "../../../docs/openapi/source.yaml"
	documentPath = "../../../docs/openapi.yaml"
	wirePath     = "../../../apiwire"
)

// generated returns the document that the source and the families make.
func generated(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile(sourcePath)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := readWire(wirePath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := generate(src, resource.Families(), docs)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestDocumentIsGenerated is the check that docs/openapi.yaml is what
// go generate writes from the source and the declarations.
func TestDocumentIsGenerated(t *testing.T) {
	want := generated(t)
	got, err := os.ReadFile(documentPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/openapi.yaml is not what docs/openapi/source.yaml and the families of internal/resource make "+
			"(run go generate ./...): %s", firstDifference(got, want))
	}
}

// firstDifference says the first line where got and want differ.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d is %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("it has %d lines, want %d", len(g), len(w))
}

// TestDocumentSaysTheDeclarations parses the document and checks that
// each family's operations carry the summary and description declared,
// so that prose the YAML would read otherwise (a plain scalar with ": ")
// cannot slip through.
func TestDocumentSaysTheDeclarations(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]yaml.Node // "parameters" is no operation
	}
	if err := yaml.Unmarshal(generated(t), &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range resource.Families() {
		d := f.Doc
		for _, op := range []struct {
			path, method, id string
			op               *resource.Op
		}{
			{f.Path, "post", "create" + d.Stem, d.Create},
			{f.Path, "get", "list" + d.Plural, d.List},
			{f.Path + "/{id}", "get", "get" + d.Stem, d.Get},
			{f.Path + "/{id}", "patch", "update" + d.Stem, d.Update},
			{f.Path + "/{id}", "delete", "delete" + d.Stem, d.Delete},
		} {
			node, ok := doc.Paths[op.path][op.method]
			if ok != (op.op != nil) {
				t.Errorf("%s %s in the document: %t, want %t", op.method, op.path, ok, op.op != nil)
				continue
			}
			if !ok {
				continue
			}
			var got struct {
				OperationID string `yaml:"operationId"`
				Summary     string
				Description string
				Responses   map[string]any
			}
			if err := node.Decode(&got); err != nil {
				t.Fatalf("%s %s: %v", op.method, op.path, err)
			}
			if got.OperationID != op.id || got.Summary != op.op.Summary || got.Description != op.op.Description {
				t.Errorf("%s %s reads %q %q %q, want %q %q %q", op.method, op.path,
					got.OperationID, got.Summary, got.Description, op.id, op.op.Summary, op.op.Description)
			}
			for _, status := range op.op.Errors {
				if _, ok := got.Responses[fmt.Sprint(status)]; !ok {
					t.Errorf("%s %s: no %d response", op.method, op.path, status)
				}
			}
		}
	}
}

func TestGenerateRefusesAMisplacedFamily(t *testing.T) {
	both := "paths:\n  # openapigen: paths of /api_keys\n  # openapigen: paths of /bot_users\n"
	tests := []struct {
		name, source string
		botDelete    *resource.Op // replaces the bot users' delete when not nil
		want         error
	}{
		{"unknown family", both + "  # openapigen: paths of /widgets\n", nil, errUnknownFamily},
		{"family not placed", "paths:\n  # openapigen: paths of /api_keys\n", nil, errFamilyPlaced},
		{"family placed twice", both + "  # openapigen: paths of /api_keys\n", nil, errFamilyPlaced},
		{"error status without a response", both, &resource.Op{Summary: "Delete a bot user.", Errors: []int{418}}, errStatus},
		{"schemas of a family without wire types", both + "  # openapigen: schemas of /bot_users\n", nil, errFamilyPlaced},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fams := []resource.Spec{resource.APIKeys(), resource.BotUsers()}
			for i := range fams {
				fams[i].Doc.Schemas = resource.Schemas{} // their paths only
			}
			if tt.botDelete != nil {
				fams[1].Doc.Delete = tt.botDelete
			}
			if _, err := generate([]byte(tt.source), fams, nil); !errors.Is(err, tt.want) {
				t.Errorf("generate: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestGenerateDropsTheSourcesNotes(t *testing.T) {
	doc, err := generate([]byte("# a note\n# another\nopenapi: 3.1.0\n# kept\n"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := header + "openapi: 3.1.0\n# kept\n"; string(doc) != want {
		t.Errorf("generate = %q, want %q", doc, want)
	}
}
