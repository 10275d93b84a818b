package filters

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/sluicehq/sluice/schemas"
)

// EnvelopeName is the name under which a reading filter sees the fields of
// the event's envelope, as in envelope.event_type.
const EnvelopeName = "envelope"

// envelopeMaxBytes bounds, for the cost estimate, the envelope's strings:
// ids are "ev_" or "ac_" and 27 characters, kinds are short names.
const envelopeMaxBytes = 128

// envelopeVar is a field of the envelope a reading filter may use.
type envelopeVar struct {
	field string // its name in the envelope, such as event_type
	typ   *cel.Type
	zero  ref.Val
}

// envelopeVars are the envelope's fields a reading filter may use, as
// envelope.<field>.
var envelopeVars = []envelopeVar{
	{"event_id", cel.StringType, types.String("")},
	{"event_type", cel.StringType, types.String("")},
	{"event_timestamp", cel.TimestampType, types.Timestamp{Time: time.Unix(0, 0).UTC()}},
	{"account_id", cel.StringType, types.String("")},
}

// EnvelopeFields returns the names a reading filter may use for the
// envelope's fields: envelope.event_id, envelope.event_type, ...
func EnvelopeFields() []string {
	names := make([]string, len(envelopeVars))
	for i, v := range envelopeVars {
		names[i] = EnvelopeName + "." + v.field
	}
	return names
}

// ReadingFilter is a filter of one event kind for readers of delivered
// events (sluice tail). It is a subscription's filter (Compile), with the
// same ev, the event's object, and the same checks, that may also use the
// envelope's fields as envelope.event_id, envelope.event_type,
// envelope.event_timestamp (a timestamp) and envelope.account_id. So a
// subscription's filter reads delivered events as it chose them. For an
// audit kind, which has no filterable field, it may use only the
// envelope's fields. It is immutable and safe for concurrent use.
type ReadingFilter struct {
	program *Program
}

// CompileReading parses and type-checks a reading filter for events of the
// kind. It returns ErrUnknownKind, or a *CompileError as Compile does.
func (e *Env) CompileReading(kind, expr string) (*ReadingFilter, error) {
	ke, ok := e.kinds[kind]
	if !ok {
		if ke, ok = e.audit[kind]; !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownKind, kind)
		}
	}
	opts := make([]cel.EnvOption, 0, len(envelopeVars))
	est := sizeEstimator{sizes: maps.Clone(ke.estimator.sizes)}
	for _, v := range envelopeVars {
		name := EnvelopeName + "." + v.field
		opts = append(opts, cel.Variable(name, v.typ))
		if v.typ == cel.StringType {
			est.sizes[name] = envelopeMaxBytes
		}
	}
	env, err := ke.cel.Extend(opts...)
	if err != nil {
		return nil, fmt.Errorf("declaring the envelope's fields: %w", err)
	}
	program, err := ke.compileIn(env, est, expr)
	if err != nil {
		return nil, err
	}
	return &ReadingFilter{program: program}, nil
}

// Kind returns the event kind the filter is for.
func (f *ReadingFilter) Kind() string { return f.program.Kind() }

// Expr returns the expression as written.
func (f *ReadingFilter) Expr() string { return f.program.Expr() }

// Fields returns the paths of the object's fields the filter reads, such
// as "conn.server_port", sorted.
func (f *ReadingFilter) Fields() []string { return f.program.Fields() }

// Match reports whether the delivered event, its envelope's JSON, passes
// the filter. A field the event lacks, or holds as null, has its zero
// value, as in a subscription's filter (after a field selection, the
// fields left out are lacking). It returns an error for JSON that is not
// an envelope, for a field whose value does not have the catalogue's type,
// and for the errors of Program.Match.
func (f *ReadingFilter) Match(ctx context.Context, envelope []byte) (bool, error) {
	var ev struct {
		Type      *string         `json:"event_type"`
		ID        *string         `json:"event_id"`
		Timestamp *string         `json:"event_timestamp"`
		AccountID *string         `json:"account_id"`
		Object    json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(envelope, &ev); err != nil {
		return false, fmt.Errorf("reading the event: %w", err)
	}
	act := &readingActivation{fields: f.program.NewFields(), envelope: map[string]ref.Val{}}
	var tooLong error
	set := func(name string, s *string) {
		switch {
		case s == nil:
		case len(*s) > envelopeMaxBytes:
			// The estimate took it to be at most envelopeMaxBytes.
			tooLong = fmt.Errorf("the event's %s is %d bytes, over the %d a reading filter takes", name, len(*s), envelopeMaxBytes)
		default:
			act.envelope[EnvelopeName+"."+name] = types.String(*s)
		}
	}
	set("event_type", ev.Type)
	set("event_id", ev.ID)
	set("account_id", ev.AccountID)
	if tooLong != nil {
		return false, tooLong
	}
	if ev.Timestamp != nil {
		ts, err := schemas.ParseEventTime([]byte(*ev.Timestamp))
		if err != nil {
			return false, fmt.Errorf("event_timestamp %q: %w", *ev.Timestamp, err)
		}
		act.envelope[EnvelopeName+".event_timestamp"] = types.Timestamp{Time: ts}
	}
	if len(f.program.fields) > 0 && len(ev.Object) > 0 && !bytes.Equal(ev.Object, []byte("null")) {
		if err := setObjectFields(act.fields, f.program.fields, ev.Object); err != nil {
			return false, err
		}
	}
	return f.program.eval(ctx, act)
}

// setObjectFields sets in fields the value of each path of the object.
func setObjectFields(fields *Fields, paths []string, object json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(object))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("reading the event's object: %w", err)
	}
	for _, path := range paths {
		v, ok := lookup(obj, path)
		if !ok || v == nil {
			continue
		}
		if err := setValue(fields, path, v); err != nil {
			return fmt.Errorf("object.%s: %w", path, err)
		}
	}
	return nil
}

// lookup returns the value at a dotted path of a decoded object.
func lookup(obj map[string]any, path string) (any, bool) {
	segs := strings.Split(path, ".")
	var v any = obj
	for _, seg := range segs {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

// setValue sets the field at path to the decoded JSON value v, converted
// to the field's type.
func setValue(fields *Fields, path string, v any) error {
	i := slices.IndexFunc(fields.kind.vars, func(v variable) bool { return v.path == path })
	if i < 0 {
		return fmt.Errorf("%w: %s of %s", ErrNotFilterable, path, fields.kind.name)
	}
	typ := fields.kind.vars[i].typ
	wrong := fmt.Errorf("%w: %s of %s is %s, the event has %v", ErrFieldType, path, fields.kind.name, typ, v)
	switch typ {
	case schemas.TypeString:
		if s, ok := v.(string); ok {
			return fields.SetString(path, s)
		}
	case schemas.TypeBool:
		if b, ok := v.(bool); ok {
			return fields.SetBool(path, b)
		}
	case schemas.TypeInt32, schemas.TypeInt64:
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return fields.SetInt(path, i)
			}
		}
	case schemas.TypeUint64:
		if n, ok := v.(json.Number); ok {
			if u, err := strconv.ParseUint(n.String(), 10, 64); err == nil {
				return fields.SetUint(path, u)
			}
		}
	case schemas.TypeFloat64:
		if n, ok := v.(json.Number); ok {
			if d, err := n.Float64(); err == nil {
				return fields.SetDouble(path, d)
			}
		}
	case schemas.TypeTimestamp:
		if s, ok := v.(string); ok {
			if ts, err := schemas.ParseEventTime([]byte(s)); err == nil {
				return fields.SetTimestamp(path, ts)
			}
		}
	}
	return wrong
}

// readingActivation holds the variables of a reading filter: the
// object's fields and the envelope's.
type readingActivation struct {
	fields   *Fields
	envelope map[string]ref.Val // by CEL name; a field the event lacks is absent
}

// ResolveName returns the value of an envelope field, missing ones as
// their zero value, or of an object field. It implements
// interpreter.Activation.
func (a *readingActivation) ResolveName(name string) (any, bool) {
	if field, ok := strings.CutPrefix(name, EnvelopeName+"."); ok {
		if v, ok := a.envelope[name]; ok {
			return v, true
		}
		for _, v := range envelopeVars {
			if v.field == field {
				return v.zero, true
			}
		}
		return nil, false
	}
	return a.fields.ResolveName(name)
}

// Parent returns nil: the activation is whole. It implements
// interpreter.Activation.
func (a *readingActivation) Parent() interpreter.Activation { return nil }
