package filters

import (
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"

	"github.com/sluicehq/sluice/schemas"
)

// Limits on filter expressions, checked by Compile.
const (
	// MaxExprLen is the longest filter expression accepted, in bytes.
	MaxExprLen = 4096

	// MaxCost is the highest cost a filter may have, in CEL's cost units
	// (about one per operation; string and list operations count their
	// size). It bounds the static estimate, checked when the filter is
	// written, and the actual cost of each evaluation of a filter with a
	// loop (cel.CostLimit; one without cannot go past its estimate, see
	// programOptions), so no filter can hold a delivery worker for long: a
	// filter at the limit, a loop in a loop over 110 integers, takes about
	// 4 ms per event.
	//
	// The estimate assumes each string field is as long as its maximum,
	// schemas.Field.MaxBytes, which validation enforces on every event, so
	// no event can make a filter cost more than its estimate.
	//
	// The filters one writes for real cost far less: comparing a field costs
	// 2, a short regular expression on the server name under 1,000 (it is
	// charged by the size of its compiled program), a list of 230 CIDR
	// ranges (about as many as MaxExprLen allows) under 2,000. The limit is
	// there to stop nested loops over large literals, which can cost
	// millions. Raising it later is safe; lowering it would reject stored
	// subscriptions, so it starts low.
	MaxCost = 100_000

	// MaxEvalTime bounds the wall-clock time of one evaluation of a filter
	// with a comprehension, checked every interruptCheckFrequency
	// iterations. MaxCost keeps evaluations far shorter; this is the
	// backstop for a machine so loaded that they are not, or a cost the
	// estimate got wrong.
	MaxEvalTime = time.Second

	// interruptCheckFrequency is how many comprehension iterations run
	// between two checks of the evaluation's context.
	interruptCheckFrequency = 100
)

// Env holds the CEL environments of every traffic kind of a catalogue: one
// per kind, built once by NewEnv, in which the kind's filterable fields are
// declared. It is immutable and safe for concurrent use; build one per
// process and share it.
type Env struct {
	catalogue *schemas.Catalogue
	kinds     map[string]*kindEnv // traffic kinds only
	audit     map[string]*kindEnv // audit kinds, which have no filterable field, for CompileReading
}

// kindEnv is what an Env knows of one traffic kind.
type kindEnv struct {
	name       string
	kind       *schemas.Kind
	cel        *cel.Env
	vars       []variable // the filterable fields, sorted by path
	varList    string     // "ev.conn.client_ip, ev.conn.server_ip, ..." for messages
	estimator  sizeEstimator
	selection  selection
	allMissing *Fields // every field missing, for Match(ctx, nil)
}

// variable is a filterable field, declared in CEL as "ev." + its path.
type variable struct {
	path     string
	name     string
	typ      schemas.Type
	maxBytes int     // the longest value of a string field (schemas.Field.MaxBytes)
	zero     ref.Val // the value of the field when the event lacks it
}

// The expression sees the event's object as ev, and each filterable field
// as a variable named varPrefix + its path.
const (
	evName    = "ev"
	varPrefix = evName + "."
)

// NewEnv builds the CEL environment of every traffic kind of c. It returns
// an error if a filterable field has a type a filter cannot use (lists, maps
// and objects), or is a string without a maximum length
// (schemas.Field.MaxBytes), which the cost estimate of filters needs.
func NewEnv(c *schemas.Catalogue) (*Env, error) {
	base, err := cel.NewEnv(
		ext.Strings(),
		cidrLibrary(),
		regexLibrary(),
		cel.ExtendedValidations(),
	)
	if err != nil {
		return nil, fmt.Errorf("building the base CEL environment: %w", err)
	}
	e := &Env{catalogue: c, kinds: map[string]*kindEnv{}, audit: map[string]*kindEnv{}}
	for _, k := range c.Kinds() {
		ke, err := newKindEnv(base, k)
		if err != nil {
			return nil, fmt.Errorf("kind %s: %w", k.Name, err)
		}
		if k.Class == schemas.ClassTraffic {
			e.kinds[k.Name] = ke
		} else {
			e.audit[k.Name] = ke
		}
	}
	return e, nil
}

func newKindEnv(base *cel.Env, k *schemas.Kind) (*kindEnv, error) {
	ke := &kindEnv{
		name:      k.Name,
		kind:      k,
		estimator: sizeEstimator{sizes: map[string]uint64{}},
		selection: newSelection(k),
	}
	var opts []cel.EnvOption
	var names []string
	for _, f := range k.Fields {
		if !f.Filterable {
			continue
		}
		typ, zero, ok := celType(f.Type)
		if !ok {
			return nil, fmt.Errorf("filterable field %s has type %s, which a filter cannot use", f.Path, f.Type)
		}
		v := variable{path: f.Path, name: varPrefix + f.Path, typ: f.Type, maxBytes: f.MaxBytes, zero: zero}
		ke.vars = append(ke.vars, v)
		names = append(names, v.name)
		opts = append(opts, cel.Variable(v.name, typ))
		if f.Type == schemas.TypeString {
			if f.MaxBytes <= 0 {
				return nil, fmt.Errorf("filterable string field %s has no maximum length, which the cost estimate of filters needs", f.Path)
			}
			// CEL measures a string in code points, never more than its bytes.
			ke.estimator.sizes[v.name] = uint64(f.MaxBytes)
		}
	}
	env, err := base.Extend(opts...)
	if err != nil {
		return nil, fmt.Errorf("declaring fields: %w", err)
	}
	ke.cel = env
	ke.varList = strings.Join(names, ", ")
	if len(names) == 0 {
		ke.varList = "(none: this kind has no filterable field)"
	}
	ke.allMissing = ke.newFields()
	return ke, nil
}

// celType returns the CEL type of a catalogue type and its zero value, or
// false for the types a filter cannot use.
func celType(t schemas.Type) (*cel.Type, ref.Val, bool) {
	switch t {
	case schemas.TypeBool:
		return cel.BoolType, types.False, true
	case schemas.TypeString:
		return cel.StringType, types.String(""), true
	case schemas.TypeInt32, schemas.TypeInt64:
		return cel.IntType, types.IntZero, true
	case schemas.TypeUint64:
		return cel.UintType, types.Uint(0), true
	case schemas.TypeFloat64:
		return cel.DoubleType, types.Double(0), true
	case schemas.TypeTimestamp:
		return cel.TimestampType, types.Timestamp{Time: time.Unix(0, 0).UTC()}, true
	}
	return nil, nil, false
}

// kind returns the environment of a traffic kind, or ErrUnknownKind or
// ErrNotTraffic.
func (e *Env) kind(name string) (*kindEnv, error) {
	if ke, ok := e.kinds[name]; ok {
		return ke, nil
	}
	if _, ok := e.catalogue.Kind(name); ok {
		return nil, fmt.Errorf("%w: %s is an audit kind", ErrNotTraffic, name)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownKind, name)
}

// FilterableFields returns the paths of the fields a filter of the kind may
// use, sorted; in the expression each is written after "ev.". It returns
// ErrUnknownKind or ErrNotTraffic.
func (e *Env) FilterableFields(kind string) ([]string, error) {
	ke, err := e.kind(kind)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(ke.vars))
	for i, v := range ke.vars {
		paths[i] = v.path
	}
	return paths, nil
}

// variableIndex returns the index of the variable with the CEL name, or -1.
func (ke *kindEnv) variableIndex(name string) int {
	for i := range ke.vars {
		if ke.vars[i].name == name {
			return i
		}
	}
	return -1
}
