package filters

import (
	"fmt"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/sluicehq/sluice/schemas"
)

// Fields holds the values of one event's filterable fields, for
// Program.Match. It is a flat, fixed-size set indexed by the kind's
// filterable fields, so filling it allocates no map: the delivery engine
// keeps one per worker and kind, and for each event calls Reset and sets the
// fields the program needs (Program.Fields). A field not set has its zero
// value.
//
// Fields is not safe for concurrent use. The setters return
// ErrNotFilterable for a path that is not a filterable field of the kind,
// and ErrFieldType for a value of another type than the field's.
//
// Fields implements CEL's interpreter.Activation.
type Fields struct {
	kind   *kindEnv
	values []ref.Val // by index in kind.vars; nil for a missing field
}

var _ interpreter.Activation = (*Fields)(nil)

// NewFields returns an empty set of field values for the kind. It returns
// ErrUnknownKind or ErrNotTraffic.
func (e *Env) NewFields(kind string) (*Fields, error) {
	ke, err := e.kind(kind)
	if err != nil {
		return nil, err
	}
	return ke.newFields(), nil
}

func (ke *kindEnv) newFields() *Fields {
	return &Fields{kind: ke, values: make([]ref.Val, len(ke.vars))}
}

// Kind returns the event kind the fields are for.
func (f *Fields) Kind() string { return f.kind.name }

// Reset marks every field missing.
func (f *Fields) Reset() { clear(f.values) }

// SetString sets a string field, such as "conn.client_ip". It returns
// ErrNotFilterable, ErrFieldType, or ErrFieldTooLong for a value longer
// than the field's maximum (schemas.Field.MaxBytes), which validation
// refuses and the cost estimate of filters assumes: such a value is never
// evaluated.
func (f *Fields) SetString(path, v string) error {
	i, err := f.index(path, schemas.TypeString)
	if err != nil {
		return err
	}
	if max := f.kind.vars[i].maxBytes; len(v) > max {
		return fmt.Errorf("%w: %s of %s is %d bytes long, over its limit of %d bytes", ErrFieldTooLong, path, f.kind.name, len(v), max)
	}
	f.values[i] = types.String(v)
	return nil
}

// SetInt sets an int32 or int64 field, such as "conn.server_port". It
// returns ErrNotFilterable or ErrFieldType.
func (f *Fields) SetInt(path string, v int64) error {
	return f.set(path, types.Int(v), schemas.TypeInt32, schemas.TypeInt64)
}

// SetUint sets a uint64 field. It returns ErrNotFilterable or ErrFieldType.
func (f *Fields) SetUint(path string, v uint64) error {
	return f.set(path, types.Uint(v), schemas.TypeUint64)
}

// SetBool sets a bool field. It returns ErrNotFilterable or ErrFieldType.
func (f *Fields) SetBool(path string, v bool) error {
	return f.set(path, types.Bool(v), schemas.TypeBool)
}

// SetDouble sets a float64 field. It returns ErrNotFilterable or ErrFieldType.
func (f *Fields) SetDouble(path string, v float64) error {
	return f.set(path, types.Double(v), schemas.TypeFloat64)
}

// SetTimestamp sets a timestamp field. It returns ErrNotFilterable or ErrFieldType.
func (f *Fields) SetTimestamp(path string, v time.Time) error {
	return f.set(path, types.Timestamp{Time: v}, schemas.TypeTimestamp)
}

func (f *Fields) set(path string, v ref.Val, accepted ...schemas.Type) error {
	i, err := f.index(path, accepted...)
	if err != nil {
		return err
	}
	f.values[i] = v
	return nil
}

// index returns the index of the field at path if it has one of the
// accepted types, or ErrNotFilterable or ErrFieldType.
func (f *Fields) index(path string, accepted ...schemas.Type) (int, error) {
	for i := range f.kind.vars {
		field := &f.kind.vars[i]
		if field.path != path {
			continue
		}
		for _, t := range accepted {
			if field.typ == t {
				return i, nil
			}
		}
		return -1, fmt.Errorf("%w: %s of %s is %s, not %s", ErrFieldType, path, f.kind.name, field.typ, accepted[0])
	}
	return -1, fmt.Errorf("%w: %s of %s", ErrNotFilterable, path, f.kind.name)
}

// ResolveName returns the value of the variable name, such as
// "ev.conn.client_ip": the value set, or the field's zero value. It
// implements interpreter.Activation.
func (f *Fields) ResolveName(name string) (any, bool) {
	i := f.kind.variableIndex(name)
	if i < 0 {
		return nil, false
	}
	if v := f.values[i]; v != nil {
		return v, true
	}
	return f.kind.vars[i].zero, true
}

// Parent returns nil: Fields is a whole activation. It implements
// interpreter.Activation.
func (f *Fields) Parent() interpreter.Activation { return nil }
