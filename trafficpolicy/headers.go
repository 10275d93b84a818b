package trafficpolicy

import (
	"net/http"
	"reflect"
	"slices"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// headerMap is req.headers or res.headers for expressions: a CEL map of
// the header's names in lower case to their values, read from the
// http.Header as it is. The lookups expressions make most (a name in it,
// its values) allocate no map; the rest (size, iteration, comparison)
// work on a copy made once.
type headerMap struct {
	h     http.Header
	lower traits.Mapper // the copy, made when first needed
}

var _ traits.Mapper = (*headerMap)(nil)

// find returns the values of the header named name, in any case.
func (m *headerMap) find(name ref.Val) ([]string, bool) {
	s, ok := name.(types.String)
	if !ok {
		return nil, false
	}
	if values, ok := m.h[string(s)]; ok {
		return values, true
	}
	for key, values := range m.h {
		if strings.EqualFold(key, string(s)) {
			return values, true
		}
	}
	return nil, false
}

// Contains reports whether a header is named key.
func (m *headerMap) Contains(key ref.Val) ref.Val {
	_, ok := m.find(key)
	return types.Bool(ok)
}

// Get returns the values of the header named key.
func (m *headerMap) Get(key ref.Val) ref.Val {
	if values, ok := m.find(key); ok {
		return types.NewStringList(types.DefaultTypeAdapter, values)
	}
	return types.NewErr("no such key: %v", key)
}

// Find returns the values of the header named key.
func (m *headerMap) Find(key ref.Val) (ref.Val, bool) {
	if values, ok := m.find(key); ok {
		return types.NewStringList(types.DefaultTypeAdapter, values), true
	}
	return nil, false
}

func (m *headerMap) copy() traits.Mapper {
	if m.lower == nil {
		m.lower = types.NewStringInterfaceMap(types.DefaultTypeAdapter, lowerNames(m.h))
	}
	return m.lower
}

// Size returns the number of header names.
func (m *headerMap) Size() ref.Val { return m.copy().Size() }

// Iterator iterates over the names in lower case.
func (m *headerMap) Iterator() traits.Iterator { return m.copy().Iterator() }

// Equal compares the map of lower-case names with another.
func (m *headerMap) Equal(other ref.Val) ref.Val { return m.copy().Equal(other) }

// ConvertToNative converts the map of lower-case names.
func (m *headerMap) ConvertToNative(t reflect.Type) (any, error) {
	return m.copy().ConvertToNative(t)
}

// ConvertToType converts the map of lower-case names.
func (m *headerMap) ConvertToType(t ref.Type) ref.Val { return m.copy().ConvertToType(t) }

// Type returns CEL's map type.
func (m *headerMap) Type() ref.Type { return types.MapType }

// Value returns the map of lower-case names.
func (m *headerMap) Value() any { return m.copy().Value() }

// lowerNames returns h with its names in lower case, as a map CEL reads.
func lowerNames(h http.Header) map[string]any {
	m := make(map[string]any, len(h))
	for name, values := range h {
		lower := strings.ToLower(name)
		if prev, ok := m[lower].([]string); ok {
			values = slices.Concat(prev, values)
		}
		m[lower] = values
	}
	return m
}
