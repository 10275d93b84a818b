package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// JSONSchemaDraft is the JSON Schema dialect of the documents JSONSchema
// returns.
const JSONSchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// JSONSchemaBaseURL is the base of the $id of every exported JSON Schema:
// the schema of kind K has $id JSONSchemaBaseURL + K + ".json".
const JSONSchemaBaseURL = "https://sluice.dev/schemas/"

// jsonSchema is one JSON Schema object. Its fields marshal in declaration
// order, which keeps the documents stable and readable.
type jsonSchema struct {
	Schema               string           `json:"$schema,omitempty"`
	ID                   string           `json:"$id,omitempty"`
	Title                string           `json:"title,omitempty"`
	Description          string           `json:"description,omitempty"`
	Type                 schemaType       `json:"type,omitempty"`
	Const                string           `json:"const,omitempty"`
	Format               string           `json:"format,omitempty"`
	Pattern              string           `json:"pattern,omitempty"`
	MaxLength            int              `json:"maxLength,omitempty"`
	Minimum              json.Number      `json:"minimum,omitempty"`
	Maximum              json.Number      `json:"maximum,omitempty"`
	Items                *jsonSchema      `json:"items,omitempty"`
	Properties           schemaProperties `json:"properties,omitempty"`
	Required             []string         `json:"required,omitempty"`
	AdditionalProperties *jsonSchema      `json:"additionalProperties,omitempty"`
	// open and closed stand for the boolean schemas true and false; they are
	// only used as additionalProperties.
	open, closed bool
}

// MarshalJSON encodes the boolean schemas true and false, and every other
// schema as an object.
func (s *jsonSchema) MarshalJSON() ([]byte, error) {
	switch {
	case s.open:
		return []byte("true"), nil
	case s.closed:
		return []byte("false"), nil
	}
	type plain jsonSchema // without this method
	return json.Marshal((*plain)(s))
}

// boolSchema returns the boolean schema true (anything) or false (nothing).
func boolSchema(v bool) *jsonSchema { return &jsonSchema{open: v, closed: !v} }

// schemaType is the "type" keyword: one name, or a list when null is allowed.
type schemaType []string

// MarshalJSON encodes a single type as a string and several as an array.
func (t schemaType) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

func nullable(name string) schemaType { return schemaType{name, "null"} }

// schemaProperty is one entry of "properties".
type schemaProperty struct {
	name   string
	schema *jsonSchema
}

// schemaProperties is the "properties" keyword, encoded in slice order.
type schemaProperties []schemaProperty

// MarshalJSON encodes the properties as an object in slice order.
func (ps schemaProperties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(p.name))
		b.WriteByte(':')
		v, err := json.Marshal(p.schema)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", p.name, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// JSONSchema returns a JSON Schema (draft 2020-12) of the whole envelope of
// events of the kind, indented and with a stable key order. Producers may
// omit event_id, event_timestamp, account_id and principal, so only
// event_type and object are required. The object accepts fields the
// catalogue does not declare, as sluice keeps and delivers them; every
// declared field may be null, and secrets (Field.Secret) must be. Lists of
// objects may be null but their elements may not. It returns an error
// wrapping ErrUnknownKind for a kind the catalogue does not have.
func (c *Catalogue) JSONSchema(kind string) ([]byte, error) {
	k, ok := c.Kind(kind)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKind, kind)
	}
	desc := fmt.Sprintf("%s Class: %s.", k.Description, k.Class)
	if k.EmittedBySluice {
		desc += " Emitted by sluice itself about its own resources: publishing it is refused."
	}
	doc := &jsonSchema{
		Schema:      JSONSchemaDraft,
		ID:          JSONSchemaBaseURL + k.Name + ".json",
		Title:       k.Name,
		Description: desc,
		Type:        schemaType{"object"},
		Properties: schemaProperties{
			{"event_id", &jsonSchema{
				Description: "Unique id of the event: ev_ and a KSUID. Consumers deduplicate on it.",
				Type:        schemaType{"string"},
				Pattern:     "^" + PrefixEvent + "[0-9A-Za-z]{27}$",
			}},
			{"event_type", &jsonSchema{
				Description: "The event kind.",
				Type:        schemaType{"string"},
				Const:       k.Name,
			}},
			{"event_timestamp", &jsonSchema{
				Description: "When the event happened, RFC 3339 in UTC with milliseconds.",
				Type:        schemaType{"string"},
				Format:      "date-time",
			}},
			{"account_id", &jsonSchema{
				Description: "The account the event belongs to: ac_ and a KSUID. Sluice sets it from the publisher's credentials.",
				Type:        schemaType{"string"},
				Pattern:     "^" + PrefixAccount + "[0-9A-Za-z]{27}$",
			}},
			{"principal", principalSchema(k.Class)},
			{"object", objectSchema(k)},
		},
		Required:             []string{"event_type", "object"},
		AdditionalProperties: boolSchema(false),
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding JSON Schema of %s: %w", k.Name, err)
	}
	return append(out, '\n'), nil
}

// ExportJSONSchemas writes the JSON Schema of every kind to dir, one file
// named <kind>.schema.json per kind, creating dir if needed.
func (c *Catalogue) ExportJSONSchemas(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, k := range c.kinds {
		doc, err := c.JSONSchema(k.Name)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, k.Name+".schema.json")
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			return fmt.Errorf("writing JSON Schema of %s: %w", k.Name, err)
		}
	}
	return nil
}

// principalSchema returns the schema of the envelope's principal. Like the
// validator, it lets every field of an audit principal be null and keeps
// fields it does not list.
func principalSchema(class Class) *jsonSchema {
	if class != ClassAudit {
		return &jsonSchema{
			Description: "Always null for traffic events.",
			Type:        schemaType{"null"},
		}
	}
	str := func(desc string) *jsonSchema {
		return &jsonSchema{Description: desc, Type: nullable("string")}
	}
	return &jsonSchema{
		Description: "Who made the change, or null when not known.",
		Type:        nullable("object"),
		Properties: schemaProperties{
			{"id", str("Id of the actor (the API key's id for changes through the API).")},
			{"subject", str("Who the actor is, for people reading the event.")},
			{"source", str("Where the change came from, such as API.")},
			{"credential", &jsonSchema{
				Description:          "The credential used to make the change.",
				Type:                 nullable("object"),
				Properties:           schemaProperties{{"id", str("Id of the credential.")}, {"uri", str("URI of the credential.")}},
				AdditionalProperties: boolSchema(true),
			}},
		},
		AdditionalProperties: boolSchema(true),
	}
}

// schemaTree is the object of a kind, built from its fields' dotted paths.
type schemaTree struct {
	field    *Field                 // the leaf, or nil for an object
	list     bool                   // an array of objects whose items are children
	children map[string]*schemaTree // for objects
}

func objectSchema(k *Kind) *jsonSchema {
	root := &schemaTree{children: map[string]*schemaTree{}}
	for i := range k.Fields {
		root.add(&k.Fields[i])
	}
	s := root.schema()
	s.Type = schemaType{"object"}
	s.Description = "The event's payload. Fields not listed here are allowed and kept."
	return s
}

// add places f at its path, making the group at f.InList a list of objects.
func (t *schemaTree) add(f *Field) {
	cur := t
	segs := strings.Split(f.Path, ".")
	for i, seg := range segs[:len(segs)-1] {
		child := cur.children[seg]
		if child == nil {
			child = &schemaTree{children: map[string]*schemaTree{}}
			child.list = f.InList == strings.Join(segs[:i+1], ".")
			cur.children[seg] = child
		}
		cur = child
	}
	cur.children[segs[len(segs)-1]] = &schemaTree{field: f}
}

// schema returns the schema of the tree node.
func (t *schemaTree) schema() *jsonSchema {
	if t.field != nil {
		return leafSchema(t.field)
	}
	obj := &jsonSchema{Type: nullable("object"), AdditionalProperties: boolSchema(true)}
	for _, name := range slices.Sorted(maps.Keys(t.children)) {
		obj.Properties = append(obj.Properties, schemaProperty{name, t.children[name].schema()})
	}
	if !t.list {
		return obj
	}
	obj.Type = schemaType{"object"}
	return &jsonSchema{
		Description: "A list of objects, each with the properties of items.",
		Type:        nullable("array"),
		Items:       obj,
	}
}

// secretNote ends the description of a secret field in the JSON Schemas.
const secretNote = "always null (secret): events never carry secrets, and sluice refuses any other value"

// leafSchema returns the schema of a field's value: its type, or null. A
// secret is always null.
func leafSchema(f *Field) *jsonSchema {
	if f.Secret {
		return &jsonSchema{Description: f.Description + " (" + secretNote + ")", Type: schemaType{"null"}}
	}
	s := &jsonSchema{Description: f.Description}
	str := &jsonSchema{Type: schemaType{"string"}}
	switch f.Type {
	case TypeBool:
		s.Type = nullable("boolean")
	case TypeString:
		s.Type = nullable("string")
		if f.MaxBytes > 0 {
			// maxLength counts characters, which are never more than
			// bytes: the limit in bytes is in the description.
			s.MaxLength = f.MaxBytes
			s.Description += fmt.Sprintf(" (at most %d bytes of UTF-8)", f.MaxBytes)
		}
		if f.Value == ValueIP {
			s.Description += " (an IPv4 or IPv6 address without a zone)"
		}
	case TypeInt32:
		s.Type, s.Minimum, s.Maximum = nullable("integer"), "-2147483648", "2147483647"
		if f.Value == ValuePort {
			s.Minimum, s.Maximum = "1", "65535"
			s.Description += " (a port: 1 to 65535)"
		}
	case TypeInt64:
		s.Type, s.Minimum, s.Maximum = nullable("integer"), "-9223372036854775808", "9223372036854775807"
	case TypeUint64:
		s.Type, s.Minimum, s.Maximum = nullable("integer"), "0", "18446744073709551615"
	case TypeFloat64:
		s.Type = nullable("number")
	case TypeTimestamp:
		s.Type, s.Format = nullable("string"), "date-time"
		if f.Value == ValueRecent {
			s.Description += " (in the event window: from " + MinEventTime.Format("2006-01-02") + " to 2 hours after ingestion)"
		}
	case TypeStringList:
		s.Type, s.Items = nullable("array"), str
	case TypeStringMap:
		s.Type, s.AdditionalProperties = nullable("object"), str
	case TypeHeaderMap:
		s.Type = nullable("object")
		s.AdditionalProperties = &jsonSchema{Type: schemaType{"array"}, Items: str}
	case TypeMapList:
		s.Type, s.Items = nullable("array"), &jsonSchema{Type: schemaType{"object"}}
	case TypeObject:
		s.Type = nullable("object")
	}
	return s
}
