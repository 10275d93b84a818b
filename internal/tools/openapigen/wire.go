package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// errDirective is an //openapi: line of a field's comment that says
// nothing openapigen knows.
var errDirective = errors.New("unknown directive")

// fieldDoc is what the source of package apiwire says of a field of a
// struct: its doc comment, the document's description of the property,
// and the directives of that comment, which say what its Go type
// cannot:
//
//	//openapi:ref TunnelRef
//	//openapi:schema {format: date-time, pattern: "^...$"}
//
// ref makes the property a $ref to a schema of the components; schema
// adds the keys of a YAML flow mapping to the property's schema, or
// replaces those it has, and is the whole schema when it has a type.
type fieldDoc struct {
	text   string
	ref    string
	schema *yaml.Node // a mapping; nil for none
}

// wireDocs are the fieldDocs of the structs of package apiwire, by type
// name and Go field name.
type wireDocs map[string]map[string]fieldDoc

// readWire reads the fieldDocs of the Go files of dir, apiwire's
// source, but its tests.
func readWire(dir string) (wireDocs, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	docs := wireDocs{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			if err := docs.add(fset, decl); err != nil {
				return nil, err
			}
		}
	}
	return docs, nil
}

// add adds the fieldDocs of the structs that decl declares.
func (docs wireDocs) add(fset *token.FileSet, decl ast.Decl) error {
	gen, ok := decl.(*ast.GenDecl)
	if !ok || gen.Tok != token.TYPE {
		return nil
	}
	for _, spec := range gen.Specs {
		ts := spec.(*ast.TypeSpec)
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		fields := map[string]fieldDoc{}
		for _, field := range st.Fields.List {
			d, err := readFieldDoc(field.Doc)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", fset.Position(field.Pos()), ts.Name.Name, err)
			}
			for _, n := range field.Names {
				fields[n.Name] = d
			}
		}
		docs[ts.Name.Name] = fields
	}
	return nil
}

// readFieldDoc reads the doc comment of a field, nil for none.
func readFieldDoc(c *ast.CommentGroup) (fieldDoc, error) {
	var d fieldDoc
	if c == nil {
		return d, nil
	}
	d.text = strings.Join(strings.Fields(c.Text()), " ")
	for _, line := range c.List {
		directive, ok := strings.CutPrefix(line.Text, "//openapi:")
		if !ok {
			continue
		}
		verb, arg, _ := strings.Cut(directive, " ")
		switch verb {
		case "ref":
			d.ref = strings.TrimSpace(arg)
		case "schema":
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(arg), &n); err != nil {
				return d, fmt.Errorf("%s: %w", line.Text, err)
			}
			if len(n.Content) != 1 || n.Content[0].Kind != yaml.MappingNode {
				return d, fmt.Errorf("%s: not a mapping", line.Text)
			}
			d.schema = n.Content[0]
			blockMappings(d.schema)
		default:
			return d, fmt.Errorf("%s: %w", line.Text, errDirective)
		}
	}
	return d, nil
}

// blockMappings makes n and the mappings within it block mappings, as
// the document writes schemas; sequences keep their style, such as an
// enum's [a, b].
func blockMappings(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		n.Style = 0
	}
	for _, c := range n.Content {
		blockMappings(c)
	}
}
