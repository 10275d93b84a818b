// Package resource declares the fields of each resource family of the
// management API once: their names, kinds and limits, which bodies accept
// them, which are required at create, write-only or shown once; and what
// docs/openapi.yaml says of each (Doc). The store checks the limits it
// declares, the CLI makes its flags and their help from it, tests hold
// the API's bodies to it, and internal/tools/openapigen writes each
// family's paths, and schemas with the types of package apiwire, of
// docs/openapi.yaml from it.
package resource

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the JSON kind of a field's value.
type Kind string

// The kinds of a field.
const (
	String Kind = "string"
	Bool   Kind = "bool"
	List   Kind = "list"
	Object Kind = "object"
)

// Unit is what the limit of a text field counts.
type Unit string

// The units of a limit.
const (
	Bytes      Unit = "bytes"
	Characters Unit = "characters"
)

// The limits of the free-text fields description and metadata
// (specification section 5). API keys and destinations count them in
// bytes, subscriptions in characters.
const (
	MaxDescription = 255
	MaxMetadata    = 4096
)

// Field is a field of the body of a create or an update.
type Field struct {
	// Name is its JSON name, such as "destination_ids".
	Name string
	Kind Kind
	// Max is the longest value of a String, in Unit; 0 for no limit here.
	Max  int
	Unit Unit
	// Required fields must be in the body of a create.
	Required bool
	// Create and Update say which bodies accept the field: a field only
	// Create accepts is immutable after create.
	Create, Update bool
	// ShownOnce fields are returned only in the answer to the create,
	// null after.
	ShownOnce bool
	// Usage is the CLI's help of its flag, where "{limit}" stands for
	// Limit; "" when the CLI sets the field with a flag of its own.
	Usage string
}

// Limit says Max and Unit, such as "255 bytes".
func (f Field) Limit() string {
	return strconv.Itoa(f.Max) + " " + string(f.Unit)
}

// Help returns Usage with its limit.
func (f Field) Help() string {
	return strings.ReplaceAll(f.Usage, "{limit}", f.Limit())
}

// Spec is a resource family: the prefix of its ids, its path and the member
// of a page that holds its items (package client's), and the fields of its
// bodies.
type Spec struct {
	Prefix, Path, ListKey string
	Fields                []Field
	// Doc is what docs/openapi.yaml says of the family beyond its
	// fields.
	Doc Doc
}

// Field returns the field named name. The names are the declarations'
// below, so a name that is none of them is a mistake in the code: it
// panics.
func (s Spec) Field(name string) Field {
	f, ok := s.Lookup(name)
	if !ok {
		panic(fmt.Sprintf("resource: the family %s has no field %q", s.Path, name))
	}
	return f
}

// Lookup returns the field named name, and false when the family
// declares none.
func (s Spec) Lookup(name string) (Field, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// described returns description and metadata, which API keys,
// destinations and subscriptions have, counted in unit.
func described(unit Unit) []Field {
	return []Field{
		{Name: "description", Kind: String, Max: MaxDescription, Unit: unit, Create: true, Update: true,
			Usage: "free text for people, at most {limit}"},
		{Name: "metadata", Kind: String, Max: MaxMetadata, Unit: unit, Create: true, Update: true,
			Usage: "free text for programs, such as JSON, at most {limit}"},
	}
}
