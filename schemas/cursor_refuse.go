package schemas

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
)

// This file holds what validation refuses of valid JSON, with a Cursor
// checking (see resetChecking): member names given twice, lone surrogates
// and numbers beyond float64, and the JSON path it names them by.

// resetChecking makes c read data from its start, as Reset does, refusing
// what JSON readers read differently: the first value refused is in
// c.invalid, as a *FieldError naming its path.
func (c *Cursor) resetChecking(data []byte) {
	c.Reset(data, 0)
	c.checking = true
}

// refuse records the first value refused, at path.
func (c *Cursor) refuse(path, format string, args ...any) {
	if c.invalid == nil {
		c.invalid = &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
	}
}

// refuseSurrogate refuses the string being read for the lone surrogate r.
func (c *Cursor) refuseSurrogate(r rune) {
	if c.invalid != nil {
		return
	}
	what := "the string"
	path := c.path(c.depth)
	if c.inKey {
		what, path = "a member name", c.path(c.depth-1)
	}
	c.refuse(path, "%s holds \\u%04x, half of a UTF-16 surrogate pair without its other half, which JSON readers "+
		"read differently (or not at all): send the character in UTF-8, or escape it as a whole pair", what, r)
}

// checkRange refuses raw, the number just read, if it is beyond float64's
// range.
func (c *Cursor) checkRange(raw []byte) {
	if c.invalid == nil && !inFloatRange(raw) {
		c.refuse(c.path(c.depth), "the number %.40s is beyond the range of a float64 (about ±1.8e308), "+
			"which JSON readers refuse or read as infinity: send a number within it, or a string", raw)
	}
}

// pushKey adds the name of a member of the innermost object.
func (c *Cursor) pushKey(k keyRange) {
	if c.nkeys < len(c.keyBuf) {
		c.keyBuf[c.nkeys] = k
	} else {
		c.more = append(c.more, k)
	}
	c.nkeys++
}

// key returns the i-th member name of the open objects.
func (c *Cursor) key(i int) keyRange {
	if i < len(c.keyBuf) {
		return c.keyBuf[i]
	}
	return c.more[i-len(c.keyBuf)]
}

// endObject closes the innermost object, before the depth goes down: it
// refuses a member name given twice in it, and forgets its names.
func (c *Cursor) endObject() {
	mark := c.frames[c.depth-1].mark
	if c.invalid == nil {
		if dup, ok := c.duplicateKey(mark, c.nkeys); ok {
			c.refuse(joinPath(c.path(c.depth-1), c.keyName(dup)),
				"the name appears twice in its object, and JSON readers keep either value, or both: give each name once")
		}
	}
	c.nkeys = mark
	if over := c.nkeys - len(c.keyBuf); over > 0 {
		c.more = c.more[:over]
	} else {
		c.more = c.more[:0]
	}
}

// duplicateKey returns a member name of keys [from, to) given twice.
func (c *Cursor) duplicateKey(from, to int) (keyRange, bool) {
	const pairwise = 16 // up to this many names, compare every pair
	if n := to - from; n <= pairwise && to <= len(c.keyBuf) {
		for i := from + 1; i < to; i++ {
			for j := from; j < i; j++ {
				if c.compareKeys(c.keyBuf[i], c.keyBuf[j]) == 0 {
					return c.keyBuf[i], true
				}
			}
		}
		return keyRange{}, false
	}
	// Many names: sort a copy (an object this large allocates).
	names := make([]keyRange, 0, to-from)
	for i := from; i < to; i++ {
		names = append(names, c.key(i))
	}
	slices.SortFunc(names, c.compareKeys)
	for i := 1; i < len(names); i++ {
		if c.compareKeys(names[i-1], names[i]) == 0 {
			return names[i], true
		}
	}
	return keyRange{}, false
}

// compareKeys orders member names by their decoded text: "a" and "\u0061"
// are the same name.
func (c *Cursor) compareKeys(a, b keyRange) int {
	ra, rb := c.data[a.start:a.end], c.data[b.start:b.end]
	if a.escaped {
		ra = unescapeKey(ra) // allocates, but names with escapes are rare
	}
	if b.escaped {
		rb = unescapeKey(rb)
	}
	return bytes.Compare(ra, rb)
}

// keyName returns a member name as text.
func (c *Cursor) keyName(k keyRange) string {
	raw := c.data[k.start:k.end]
	if k.escaped {
		raw = unescapeKey(raw)
	}
	return string(raw)
}

// path returns the JSON path of the value read at depth: pathRoot, then,
// for each container open from pathBase to depth, the name or index of its
// member being read, such as "object.http.request.headers.Accept[1]".
func (c *Cursor) path(depth int) string {
	p := c.pathRoot
	for d := c.pathBase; d < depth; d++ {
		f := &c.frames[d]
		if f.array {
			p += "[" + strconv.Itoa(max(f.index, 0)) + "]"
			continue
		}
		end := c.nkeys // the names of this object end where the next container's begin
		if d+1 < c.depth {
			end = c.frames[d+1].mark
		}
		if end <= f.mark {
			break // no member read yet
		}
		p = joinPath(p, c.keyName(c.key(end-1)))
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

// CheckJSON checks that data holds one JSON value that JSON readers all
// read the same, by the rules validation holds events to: well-formed
// RFC 8259 JSON in valid UTF-8, nested at most 64 levels, with no member
// name twice in an object, no lone surrogate and no number beyond
// float64's range. It is how sluice's management API refuses, as ingest
// does, the bodies encoding/json would read differently (it reads invalid
// UTF-8 and lone surrogates as U+FFFD, so that two names would collide).
// It returns a *SyntaxError for malformed JSON, invalid UTF-8 included, or
// a *FieldError naming the JSON path of the first value refused.
func CheckJSON(data []byte) error {
	c := new(Cursor)
	c.resetChecking(data)
	if err := c.Skip(); err != nil {
		return err
	}
	if err := c.End(); err != nil {
		return err
	}
	return c.invalid
}
