package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/strictjson"
)

// Errors of the families' types.
var (
	// errUndeclared is a field of a family's input type that the family
	// does not declare.
	errUndeclared = errors.New("the family declares no field")
	// errNoDocs is a family's type that package apiwire's source does
	// not declare.
	errNoDocs = errors.New("no struct of apiwire's source is the type")
	// errNoInput is a family with a create or an update but no input
	// type.
	errNoInput = errors.New("a family with a create or an update needs Schemas.Input")
	// errMaxLength is a field whose limit, Field.Max, is not the
	// maxLength of the shared schema its property refers to.
	errMaxLength = errors.New("the limit is not the maxLength of the schema")
)

// The descriptions every family's schemas share.
const (
	updateDescription = "The fields to change."
	echoedText        = ", as the official API clients repeat it: taken when it is the\n" +
		"path's, and 400 `ERR_SLUICE_340` naming both values otherwise.\n"
	shownOnceText = "Null; the token is shown only in the response to creation."
)

// schemas builds the schemas of a family from its types of package
// apiwire and the docs of their fields.
type schemas struct {
	spec resource.Spec
	docs wireDocs
	// source is the schemas of the source's components, which the
	// family's properties may refer to; nil for none.
	source *yaml.Node
}

// writeSchemas writes the family's schemas, at the indentation of the
// components' schemas: that of its ids, <Stem>, <Stem>Created when its
// create answers it, <Stem>Create, <Stem>Update and <Stem>List, each
// that it has.
func writeSchemas(out *bytes.Buffer, f resource.Spec, docs wireDocs, shared *yaml.Node) error {
	s := schemas{spec: f, docs: docs, source: shared}
	d, ss := f.Doc, f.Doc.Schemas
	top := mapping()
	set(top, d.IDSchemaName(), pairs(
		"description", scalar("The id of "+ss.ID+", `"+f.Prefix+"` and a KSUID."),
		"type", scalar("string"),
		"pattern", quoted("^"+f.Prefix+"[0-9A-Za-z]{27}$")))
	one, err := s.resource(ss.Resource, false)
	if err != nil {
		return err
	}
	set(top, d.Stem, one)
	if d.Create != nil && d.Create.Answer.Schema == d.Stem+"Created" {
		created, err := s.resource(ss.Created, true)
		if err != nil {
			return err
		}
		set(top, d.Stem+"Created", created)
	}
	if d.Create != nil {
		create, err := s.input(ss.Create, false)
		if err != nil {
			return err
		}
		set(top, d.Stem+"Create", create)
	}
	if d.Update != nil {
		description := cmp.Or(ss.Update, updateDescription)
		update, err := s.input(description, true)
		if err != nil {
			return err
		}
		set(top, d.Stem+"Update", update)
	}
	if d.List != nil {
		set(top, d.Stem+"List", s.list())
	}
	return encode(out, top, 2)
}

// writeResponses writes the family's response <Stem>200, at the
// indentation of the components' responses.
func writeResponses(out *bytes.Buffer, f resource.Spec) error {
	d := f.Doc
	top := mapping()
	set(top, d.Stem+"200", pairs(
		"description", scalar(d.Schemas.Response),
		"headers", pairs("Service-Operation-Id", refTo("headers", "OperationId")),
		"content", pairs("application/json", pairs("schema", refTo("schemas", d.Stem))),
	))
	return encode(out, top, 2)
}

// resource returns the schema of Wire; created shows the fields shown
// once, which are null otherwise.
func (s schemas) resource(description string, created bool) (*yaml.Node, error) {
	t := s.spec.Doc.Schemas.Wire
	docs, ok := s.docs[t.Name()]
	if !ok {
		return nil, fmt.Errorf("%s: %w %v", s.spec.Path, errNoDocs, t)
	}
	props, required := mapping(), flow()
	for sf := range t.Fields() {
		name, omitempty := jsonName(sf)
		if name == "" {
			continue
		}
		if !omitempty {
			required.Content = append(required.Content, scalar(name))
		}
		field, _ := s.spec.Lookup(name)
		if field.ShownOnce && !created {
			set(props, name, pairs("description", scalar(shownOnceText), "type", quoted("null")))
			continue
		}
		set(props, name, s.property(name, sf.Type, docs[sf.Name], !field.ShownOnce))
	}
	return object(description, required, props), nil
}

// input returns the schema of the body of a create or an update: the
// ids of the path, which the body may repeat (a nested family's parent
// and, of an update, the resource's own), then the fields of Input its
// kind of body takes.
func (s schemas) input(description string, update bool) (*yaml.Node, error) {
	t := s.spec.Doc.Schemas.Input
	if t == nil {
		return nil, fmt.Errorf("%s: %w", s.spec.Path, errNoInput)
	}
	docs, ok := s.docs[t.Name()]
	if !ok {
		return nil, fmt.Errorf("%s: %w %v", s.spec.Path, errNoDocs, t)
	}
	props, required := mapping(), flow()
	for _, m := range pathParameter.FindAllStringSubmatch(s.spec.Path, -1) {
		set(props, m[1], echoed("`"+m[1]+"`"))
	}
	if update {
		set(props, "id", echoed("id"))
	}
	for sf := range t.Fields() {
		name, _ := jsonName(sf)
		if name == "" {
			continue
		}
		field, ok := s.spec.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("%s: %v.%s: %w %s", s.spec.Path, t, sf.Name, errUndeclared, name)
		}
		if update && !field.Update || !update && !field.Create {
			continue
		}
		if field.Required && !update {
			required.Content = append(required.Content, scalar(name))
		}
		// A field not set is not sent: its pointer says no more, and a
		// pointer to a pointer sends null.
		typ := sf.Type
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		property := s.property(name, typ, docs[sf.Name], true)
		if err := s.limit(field, property); err != nil {
			return nil, err
		}
		set(props, name, property)
	}
	return object(description, required, props), nil
}

// limit gives the property of field its limit, field.Max: as its
// maxLength or, when it refers to a shared schema, as the maxLength that
// schema of the source must have.
func (s schemas) limit(field resource.Field, property *yaml.Node) error {
	if field.Max == 0 {
		return nil
	}
	want := strconv.Itoa(field.Max)
	ref := get(property, "$ref")
	if ref == nil {
		set(property, "maxLength", scalar(want))
		return nil
	}
	var got *yaml.Node
	if name, ok := strings.CutPrefix(ref.Value, "#/components/schemas/"); ok && s.source != nil {
		if shared := get(s.source, name); shared != nil {
			got = get(shared, "maxLength")
		}
	}
	if got == nil || got.Value != want {
		return fmt.Errorf("%s: %s, at most %s: %w %s", s.spec.Path, field.Name, field.Limit(), errMaxLength, ref.Value)
	}
	return nil
}

// pathParameter matches a parameter of a family's path, such as
// {edge_id}.
var pathParameter = regexp.MustCompile(`\{(\w+)\}`)

// echoed returns the schema of a member of a body that repeats the
// path's parameter what.
func echoed(what string) *yaml.Node {
	return pairs("description", scalar("The path's "+what+echoedText), "type", scalar("string"))
}

// list returns the schema of a page of the family.
func (s schemas) list() *yaml.Node {
	props := pairs(
		s.spec.ListKey, pairs("type", scalar("array"), "items", refTo("schemas", s.spec.Doc.Stem)),
		"uri", refTo("schemas", "URI"),
		"next_page_uri", refTo("schemas", "NextPageURI"))
	required := flow(scalar(s.spec.ListKey), scalar("uri"), scalar("next_page_uri"))
	return object(s.spec.Doc.Schemas.List, required, props)
}

// property returns the schema of the property name of Go type t: the
// schema its doc's directives name (a schema directive with a type is
// the whole schema), or one that the family's fields share, or its
// type's; null too when nullable and t is a pointer.
func (s schemas) property(name string, t reflect.Type, d fieldDoc, nullable bool) *yaml.Node {
	nullable = nullable && t.Kind() == reflect.Pointer
	var schema *yaml.Node
	switch shared := s.shared(name); {
	case d.ref != "":
		schema = refTo("schemas", d.ref)
	case d.schema != nil && get(d.schema, "type") != nil:
		schema, nullable = mapping(), false
	case shared != "":
		schema, nullable = refTo("schemas", shared), false
	default:
		schema = typeSchema(t)
	}
	if nullable {
		schema = orNull(schema)
	}
	if d.schema != nil {
		for i := 0; i+1 < len(d.schema.Content); i += 2 {
			set(schema, d.schema.Content[i].Value, d.schema.Content[i+1])
		}
	}
	if d.text == "" {
		return schema
	}
	return prepend(schema, "description", scalar(d.text))
}

// shared returns the schema of the components that the property name
// is, as it is of every family: its id, URL and time of creation, and
// the description and metadata of a family that declares them.
func (s schemas) shared(name string) string {
	switch name {
	case "id":
		return s.spec.Doc.IDSchemaName()
	case "uri":
		return "URI"
	case "created_at":
		return "CreatedAt"
	case "description", "metadata":
		if _, ok := s.spec.Lookup(name); ok {
			return strings.ToUpper(name[:1]) + name[1:]
		}
	}
	return ""
}

// typeSchema returns the schema of the values of Go type t: a struct is
// the schema of its name.
func typeSchema(t reflect.Type) *yaml.Node {
	switch t.Kind() {
	case reflect.Pointer:
		return typeSchema(t.Elem())
	case reflect.String:
		return pairs("type", scalar("string"))
	case reflect.Bool:
		return pairs("type", scalar("boolean"))
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return pairs("type", scalar("integer"))
	case reflect.Float32, reflect.Float64:
		return pairs("type", scalar("number"))
	case reflect.Slice:
		return pairs("type", scalar("array"), "items", typeSchema(t.Elem()))
	case reflect.Map:
		return pairs("type", scalar("object"), "additionalProperties", typeSchema(t.Elem()))
	case reflect.Struct:
		return refTo("schemas", t.Name())
	}
	panic(fmt.Sprintf("openapigen: no schema of the Go type %v", t))
}

// orNull returns schema that null satisfies too.
func orNull(schema *yaml.Node) *yaml.Node {
	if typ := get(schema, "type"); typ != nil && typ.Kind == yaml.ScalarNode {
		set(schema, "type", flow(scalar(typ.Value), quoted("null")))
		return schema
	}
	return pairs("oneOf", &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{schema, pairs("type", quoted("null"))}})
}

// object returns the schema of a JSON object of exactly props.
func object(description string, required, props *yaml.Node) *yaml.Node {
	o := pairs("description", scalar(description), "type", scalar("object"))
	if len(required.Content) > 0 {
		set(o, "required", required)
	}
	set(o, "additionalProperties", scalar("false"))
	set(o, "properties", props)
	return o
}

// jsonName returns the JSON name of a field and whether it is
// omitempty; "" for a field JSON skips.
func jsonName(sf reflect.StructField) (string, bool) {
	name, ok := strictjson.FieldName(sf)
	if !ok {
		return "", false
	}
	_, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
	return name, strings.Contains(","+opts+",", ",omitempty,")
}
