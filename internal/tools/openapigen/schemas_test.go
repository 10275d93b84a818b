package main

import (
	"bytes"
	"errors"
	"go/ast"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/internal/resource"
)

type widget struct {
	ID    string   `json:"id"`
	URI   string   `json:"uri"`
	Name  string   `json:"name"`
	Token *string  `json:"token"`
	Owner *string  `json:"owner"`
	Tags  []string `json:"tags,omitempty"`
	Ref   *widget  `json:"ref"`
}

type widgetInput struct {
	Name  *string  `json:"name,omitempty"`
	Owner *string  `json:"owner,omitempty"`
	Ref   **widget `json:"ref,omitempty"`
}

func widgets() resource.Spec {
	return resource.Spec{
		Prefix: "wd_", Path: "/widgets", ListKey: "widgets",
		Fields: []resource.Field{
			{Name: "name", Kind: resource.String, Max: 64, Unit: resource.Bytes, Required: true, Create: true},
			{Name: "owner", Kind: resource.String, Create: true, Update: true},
			{Name: "token", Kind: resource.String, ShownOnce: true},
			{Name: "ref", Kind: resource.Object, Create: true},
		},
		Doc: resource.Doc{
			Stem:   "Widget",
			Create: &resource.Op{Answer: resource.Answer{Schema: "WidgetCreated"}},
			Update: &resource.Op{}, List: &resource.Op{},
			Schemas: resource.Schemas{Wire: reflect.TypeFor[widget](), Input: reflect.TypeFor[widgetInput](),
				ID: "a widget", Resource: "A widget.", Created: "A new widget.", Create: "A new widget.", List: "A page of widgets."},
		},
	}
}

const widgetSchemas = `    WidgetID:
      description: The id of a widget, ` + "`wd_`" + ` and a KSUID.
      type: string
      pattern: "^wd_[0-9A-Za-z]{27}$"
    Widget:
      description: A widget.
      type: object
      required: [id, uri, name, token, owner, ref]
      additionalProperties: false
      properties:
        id:
          $ref: "#/components/schemas/WidgetID"
        uri:
          type: string
          pattern: ^/widgets/
        name:
          description: 'Its name: unique.'
          $ref: "#/components/schemas/WidgetName"
        token:
          description: Null; the token is shown only in the response to creation.
          type: "null"
        owner:
          type: [string, "null"]
          format: uri
        tags:
          type: array
          items:
            type: string
        ref:
          oneOf:
            - $ref: "#/components/schemas/widget"
            - type: "null"
    WidgetCreated:
      description: A new widget.
      type: object
      required: [id, uri, name, token, owner, ref]
      additionalProperties: false
      properties:
        id:
          $ref: "#/components/schemas/WidgetID"
        uri:
          type: string
          pattern: ^/widgets/
        name:
          description: 'Its name: unique.'
          $ref: "#/components/schemas/WidgetName"
        token:
          type: string
        owner:
          type: [string, "null"]
          format: uri
        tags:
          type: array
          items:
            type: string
        ref:
          oneOf:
            - $ref: "#/components/schemas/widget"
            - type: "null"
    WidgetCreate:
      description: A new widget.
      type: object
      required: [name]
      additionalProperties: false
      properties:
        name:
          type: string
          maxLength: 64
        owner:
          type: string
        ref:
          oneOf:
            - $ref: "#/components/schemas/widget"
            - type: "null"
    WidgetUpdate:
      description: The fields to change.
      type: object
      additionalProperties: false
      properties:
        id:
          description: |
            The path's id, as the official API clients repeat it: taken when it is the
            path's, and 400 ` + "`ERR_SLUICE_340`" + ` naming both values otherwise.
          type: string
        owner:
          type: string
    WidgetList:
      description: A page of widgets.
      type: object
      required: [widgets, uri, next_page_uri]
      additionalProperties: false
      properties:
        widgets:
          type: array
          items:
            $ref: "#/components/schemas/Widget"
        uri:
          $ref: "#/components/schemas/URI"
        next_page_uri:
          $ref: "#/components/schemas/NextPageURI"
`

func TestWriteSchemas(t *testing.T) {
	docs := wireDocs{
		"widget": {
			"Name":  {text: "Its name: unique.", ref: "WidgetName"},
			"URI":   {schema: pairs("type", scalar("string"), "pattern", scalar("^/widgets/"))},
			"Owner": {schema: pairs("format", scalar("uri"))},
		},
		"widgetInput": {},
	}
	var out bytes.Buffer
	if err := writeSchemas(&out, widgets(), docs, nil); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != widgetSchemas {
		t.Errorf("writeSchemas wrote\n%s\nwant\n%s", got, widgetSchemas)
	}
}

func TestWriteSchemasRefuses(t *testing.T) {
	shared := pairs("WidgetName", pairs("type", scalar("string"), "maxLength", scalar("63")))
	tests := []struct {
		name string
		edit func(*resource.Spec)
		docs wireDocs
		want error
	}{
		{"limit not the shared schema's", func(*resource.Spec) {},
			wireDocs{"widget": {}, "widgetInput": {"Name": {ref: "WidgetName"}}}, errMaxLength},
		{"no docs of the type", func(*resource.Spec) {}, wireDocs{"widgetInput": {}}, errNoDocs},
		{"no input type", func(s *resource.Spec) { s.Doc.Schemas.Input = nil },
			wireDocs{"widget": {}}, errNoInput},
		{"input field not declared", func(s *resource.Spec) { s.Fields = s.Fields[:1] },
			wireDocs{"widget": {}, "widgetInput": {}}, errUndeclared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := widgets()
			tt.edit(&f)
			if err := writeSchemas(&bytes.Buffer{}, f, tt.docs, shared); !errors.Is(err, tt.want) {
				t.Errorf("writeSchemas: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestReadFieldDoc(t *testing.T) {
	group := func(lines ...string) *ast.CommentGroup {
		g := &ast.CommentGroup{}
		for _, l := range lines {
			g.List = append(g.List, &ast.Comment{Text: l})
		}
		return g
	}
	d, err := readFieldDoc(group("// When it started,", "// in RFC 3339.", "//openapi:ref Timestamp",
		`//openapi:schema {pattern: "^x$"}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.text != "When it started, in RFC 3339." || d.ref != "Timestamp" || get(d.schema, "pattern").Value != "^x$" {
		t.Errorf("readFieldDoc = %+v", d)
	}
	for _, bad := range []string{"//openapi:nullable", "//openapi:schema [a]", "//openapi:schema {a"} {
		if _, err := readFieldDoc(group(bad)); err == nil {
			t.Errorf("readFieldDoc(%q) = nil error", bad)
		}
	}
	if _, err := readFieldDoc(group("//openapi:nullable")); !errors.Is(err, errDirective) {
		t.Errorf("readFieldDoc of an unknown directive: %v, want %v", err, errDirective)
	}
}
