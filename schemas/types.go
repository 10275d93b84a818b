package schemas

import (
	"fmt"
	"strings"
	"time"
)

// Type is the declared type of a catalogue field.
type Type uint8

// The field types of the catalogue. Every field may also be null.
const (
	TypeBool       Type = iota + 1 // JSON true or false
	TypeString                     // JSON string
	TypeInt32                      // JSON integer in the int32 range
	TypeInt64                      // JSON integer in the int64 range
	TypeUint64                     // JSON integer in the uint64 range
	TypeFloat64                    // any JSON number
	TypeTimestamp                  // JSON string in RFC 3339 format
	TypeStringList                 // JSON array of strings
	TypeStringMap                  // JSON object of strings
	TypeHeaderMap                  // JSON object of arrays of strings (HTTP headers)
	TypeMapList                    // JSON array of objects of any values
	TypeObject                     // JSON object of any values (structure not specified)
)

var typeNames = [...]string{
	TypeBool:       "bool",
	TypeString:     "string",
	TypeInt32:      "int32",
	TypeInt64:      "int64",
	TypeUint64:     "uint64",
	TypeFloat64:    "float64",
	TypeTimestamp:  "timestamp",
	TypeStringList: "List<string>",
	TypeStringMap:  "Map<string, string>",
	TypeHeaderMap:  "Map<string, List<string>>",
	TypeMapList:    "List<Map<string, any>>",
	TypeObject:     "object",
}

// String returns the type's name as the specification writes it.
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", t)
}

// Value is a rule a field's value keeps beyond its type, which validation
// of what producers publish (Catalogue.DecodeBatch) checks.
type Value uint8

// The rules of values.
const (
	ValueAny Value = iota // any value of the type
	// ValuePort is an int32 from 1 to 65535: the port of a TCP connection
	// (0 is no port a connection can come in on).
	ValuePort
	// ValueIP is a string holding an IPv4 or IPv6 address as net/netip
	// parses it (203.0.113.7, 2001:db8::7, ::ffff:203.0.113.7), without a
	// zone.
	ValueIP
	// ValueRecent is a timestamp of what happened when the event did: it
	// is within the event window, as event_timestamp is (MinEventTime,
	// MaxEventAhead).
	ValueRecent
)

// The event window: DecodeBatch refuses an event_timestamp, or a
// timestamp field of ValueRecent, before MinEventTime or more than
// MaxEventAhead past the time of ingestion. CloudWatch Logs refuses a log
// event more than 2 hours ahead of when it is put (and one before 1970,
// or more than 14 days old); Kinesis and Firehose take any. So an event
// from the future would be dead-lettered by CloudWatch Logs destinations
// only, and a year such as 1970 or 9999 is a producer's clock or
// encoding gone wrong, not traffic sluice could have seen. Events older
// than 14 days are taken: Kinesis and Firehose destinations deliver them;
// CloudWatch Logs dead-letters them as too old.
var MinEventTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxEventAhead is how far past the time of ingestion an event_timestamp
// may be: the 2 hours of CloudWatch Logs (see MinEventTime).
const MaxEventAhead = 2 * time.Hour

// Class says whether an event kind describes traffic or a configuration change.
type Class uint8

// The classes of event kinds.
const (
	ClassTraffic Class = iota + 1 // emitted by the edge for each request or connection
	ClassAudit                    // emitted when configuration changes
)

// String returns "traffic" or "audit".
func (c Class) String() string {
	switch c {
	case ClassTraffic:
		return "traffic"
	case ClassAudit:
		return "audit"
	}
	return fmt.Sprintf("Class(%d)", c)
}

// Field is one leaf field of an event kind's object.
type Field struct {
	// Path is the dotted name of the field, as the specification writes it:
	// "http.request.method" is object.http.request.method in the envelope.
	// A field inside a list of objects is named through the list:
	// "sources.type" is the type of each element of object.sources.
	Path string
	// Type is the field's declared type.
	Type Type
	// Filterable marks the fields a CEL filter may use.
	Filterable bool
	// MaxBytes is the longest value of a string field, in bytes of UTF-8
	// once its JSON escapes are decoded, or 0 when the field has no limit
	// of its own (the event's size bounds it). Validation refuses a longer
	// value; every filterable string field has one, and a filter's cost
	// estimate assumes it.
	MaxBytes int
	// Value is the rule the field's value keeps beyond its type, such as
	// ValuePort for conn.server_port; validation refuses a value that
	// breaks it.
	Value Value
	// Selectable marks the fields a subscription source may select.
	Selectable bool
	// Extension marks a field sluice adds to what the specification lists.
	Extension bool
	// Secret marks a field that must always be null in events (API key
	// tokens, AWS secret access keys): secrets are never carried in events.
	Secret bool
	// InList is the dotted path of the enclosing list of objects, or "".
	InList string
	// Description says what the field holds.
	Description string
}

// Kind is one event kind of the catalogue, such as "http_request_complete.v0".
type Kind struct {
	// Name is the event kind, with its version suffix.
	Name string
	// Class is traffic or audit.
	Class Class
	// Family groups the created, updated and deleted kinds of one resource,
	// or the two agent session kinds; for traffic kinds it is the name
	// without its version.
	Family string
	// Description says when the event is emitted.
	Description string
	// EmittedBySluice marks the audit kinds sluice emits about its own
	// resources (API keys, event destinations, event subscriptions). They
	// are sluice's alone: POST /events, Catalogue.DecodeBatch,
	// Catalogue.Encode and the producer package refuse them, so that no one
	// can forge what sluice asserts; sluice makes them with
	// Catalogue.EncodeBySluice.
	EmittedBySluice bool
	// Fields are the leaf fields of the object, sorted by path.
	Fields []Field

	root   *node
	byPath map[string]*Field
}

// Field returns the field of the kind with the dotted path, and whether it exists.
func (k *Kind) Field(path string) (*Field, bool) {
	f, ok := k.byPath[path]
	return f, ok
}

// node is one level of a kind's object, built from the fields' paths, and
// walked by validation.
type node struct {
	typ      Type             // the leaf type; 0 for an object or list of objects
	secret   bool             // a leaf that must be null
	maxBytes int              // the longest string value of a leaf, or 0
	value    Value            // the rule of a leaf's value
	list     bool             // a list of objects whose elements are children
	children map[string]*node // for objects and lists of objects
	path     string           // dotted path, for errors
}

func (n *node) isGroup() bool { return n.children != nil }

func newGroup(path string) *node {
	return &node{children: map[string]*node{}, path: path}
}

// insert adds a leaf at the segments of spec path p ("a.b[].c"), creating
// intermediate objects and lists of objects. maxBytes is the longest string
// value of the leaf, or 0; value the rule of its value.
func (n *node) insert(p string, t Type, secret bool, maxBytes int, value Value) error {
	cur := n
	segs := strings.Split(p, ".")
	for i, seg := range segs {
		list := strings.HasSuffix(seg, "[]")
		name := strings.TrimSuffix(seg, "[]")
		child := cur.children[name]
		if i == len(segs)-1 {
			if child != nil || list {
				return fmt.Errorf("field %q declared twice or as a list", p)
			}
			cur.children[name] = &node{typ: t, secret: secret, maxBytes: maxBytes, value: value, path: joinPath(cur.path, name)}
			return nil
		}
		if child == nil {
			child = newGroup(joinPath(cur.path, name))
			child.list = list
			cur.children[name] = child
		} else if !child.isGroup() || child.list != list {
			return fmt.Errorf("field %q conflicts with another field at %q", p, name)
		}
		cur = child
	}
	return nil
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
