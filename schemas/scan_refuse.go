package schemas

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
)

// This file holds what the scanner refuses of valid JSON (see scanner):
// member names given twice, lone surrogates and numbers beyond float64,
// and the JSON path it names them by.

// refuse records the first value refused, at path.
func (s *scanner) refuse(path, format string, args ...any) {
	if s.invalid == nil {
		s.invalid = &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
	}
}

// pushKey adds the name of a member of the innermost object.
func (s *scanner) pushKey(k keyRange) {
	if s.nkeys < len(s.keyBuf) {
		s.keyBuf[s.nkeys] = k
	} else {
		s.more = append(s.more, k)
	}
	s.nkeys++
}

// key returns the i-th member name of the open objects.
func (s *scanner) key(i int) keyRange {
	if i < len(s.keyBuf) {
		return s.keyBuf[i]
	}
	return s.more[i-len(s.keyBuf)]
}

// endObject closes the innermost object: it refuses a member name given
// twice in it, and forgets its names.
func (s *scanner) endObject() {
	mark := s.frames[s.depth-1].mark
	if s.invalid == nil {
		if dup, ok := s.duplicateKey(mark, s.nkeys); ok {
			s.refuse(joinPath(s.path(s.depth-1), s.keyName(dup)),
				"the name appears twice in its object, and JSON readers keep either value, or both: give each name once")
		}
	}
	s.nkeys = mark
	if over := s.nkeys - len(s.keyBuf); over > 0 {
		s.more = s.more[:over]
	} else {
		s.more = s.more[:0]
	}
	s.depth--
}

// duplicateKey returns a member name of keys [from, to) given twice.
func (s *scanner) duplicateKey(from, to int) (keyRange, bool) {
	const pairwise = 16 // up to this many names, compare every pair
	if n := to - from; n <= pairwise && to <= len(s.keyBuf) {
		for i := from + 1; i < to; i++ {
			for j := from; j < i; j++ {
				if s.compareKeys(s.keyBuf[i], s.keyBuf[j]) == 0 {
					return s.keyBuf[i], true
				}
			}
		}
		return keyRange{}, false
	}
	// Many names: sort a copy (an object this large allocates).
	names := make([]keyRange, 0, to-from)
	for i := from; i < to; i++ {
		names = append(names, s.key(i))
	}
	slices.SortFunc(names, s.compareKeys)
	for i := 1; i < len(names); i++ {
		if s.compareKeys(names[i-1], names[i]) == 0 {
			return names[i], true
		}
	}
	return keyRange{}, false
}

// compareKeys orders member names by their decoded text: "a" and "\u0061"
// are the same name.
func (s *scanner) compareKeys(a, b keyRange) int {
	ra, rb := s.data[a.start:a.end], s.data[b.start:b.end]
	if a.escaped {
		ra = unescapeKey(ra) // allocates, but names with escapes are rare
	}
	if b.escaped {
		rb = unescapeKey(rb)
	}
	return bytes.Compare(ra, rb)
}

// keyName returns a member name as text.
func (s *scanner) keyName(k keyRange) string {
	raw := s.data[k.start:k.end]
	if k.escaped {
		raw = unescapeKey(raw)
	}
	return string(raw)
}

// path returns the JSON path of the value read at depth: pathRoot, then,
// for each container open from pathBase to depth, the name or index of its
// member being read, such as "object.http.request.headers.Accept[1]".
func (s *scanner) path(depth int) string {
	p := s.pathRoot
	for d := s.pathBase; d < depth; d++ {
		f := &s.frames[d]
		if f.array {
			p += "[" + strconv.Itoa(max(f.index, 0)) + "]"
			continue
		}
		end := s.nkeys // the names of this object end where the next container's begin
		if d+1 < s.depth {
			end = s.frames[d+1].mark
		}
		if end <= f.mark {
			break // no member read yet
		}
		p = joinPath(p, s.keyName(s.key(end-1)))
	}
	return p
}

// maxFloatExp is the decimal exponent of the largest float64, 1.8e308.
const maxFloatExp = 308

// inFloatRange reports whether raw, a JSON number, is within float64's
// range, as strconv.ParseFloat would read it without ErrRange. Numbers
// closer to 0 than the smallest float64 are in range: they read as 0. It
// only parses numbers whose magnitude is near the limit.
func inFloatRange(raw []byte) bool {
	i := 0
	if raw[i] == '-' {
		i++
	}
	// exp10 is the decimal exponent of the first significant digit.
	exp10, significant := 0, false
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
		if significant {
			exp10++
		}
		significant = significant || raw[i] != '0'
	}
	if i < len(raw) && raw[i] == '.' {
		for i++; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
			if !significant {
				exp10--
				significant = raw[i] != '0'
			}
		}
	}
	if !significant {
		return true // zero, whatever its exponent
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		neg := raw[i] == '-'
		if raw[i] == '+' || raw[i] == '-' {
			i++
		}
		e := 0
		for ; i < len(raw); i++ {
			if e < 1e15 { // beyond, the number is far out of range either way
				e = e*10 + int(raw[i]-'0')
			}
		}
		if neg {
			e = -e
		}
		exp10 += e
	}
	switch {
	case exp10 < maxFloatExp:
		return true
	case exp10 > maxFloatExp:
		return false
	}
	_, err := strconv.ParseFloat(string(raw), 64)
	return err == nil
}
