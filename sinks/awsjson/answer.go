package awsjson

// Kind is the JSON type of a member of an answer that a sink does not use
// but that the SDK's deserializer checks.
type Kind uint8

// The kinds of members, as the SDK reads them.
const (
	String Kind = iota + 1 // a string
	Int32                  // an integer of 32 bits, without fraction or exponent
	Bool                   // true or false
)

// Member is a member of an answer's object that is checked as the SDK
// checks it, and otherwise ignored.
type Member struct {
	Name string
	Kind Kind
}

// AnswerShape is the shape of the answer of a call that carries records:
// a JSON object whose member List is the list of the per-record entries,
// each an object whose ErrorCode and ErrorMessage, strings, say whether
// and why its record failed.
type AnswerShape struct {
	// List names the list of entries: "Records".
	List string
	// Members are the answer's other members: FailedRecordCount.
	Members []Member
	// EntryMembers are an entry's members besides ErrorCode and
	// ErrorMessage: SequenceNumber, ShardId.
	EntryMembers []Member
}

// Entry is what an answer says of one record. Code and Message are the
// bytes of the answer, valid only during the call given them.
type Entry struct {
	// HasCode says whether the entry has an ErrorCode.
	HasCode       bool
	Code, Message []byte
}

// Read reads body as an answer of shape, calling entry for each entry in
// order, and reports whether it read it. It reads only what the SDK's
// deserializer reads to the same entries, and leaves to it (returns false,
// maybe after calling entry for some entries) all else: what is not JSON
// or not of shape, a null, an escaped member name, ErrorCode or
// ErrorMessage, a member given twice, anything after the object. It
// allocates nothing.
func (shape *AnswerShape) Read(body []byte, entry func(Entry)) bool {
	c := cursor{b: body}
	var seen uint64
	ok := c.object(func(name []byte) bool {
		if string(name) == shape.List {
			if !c.once(&seen, 63) {
				return false
			}
			return c.entries(shape, entry)
		}
		return c.member(name, shape.Members, &seen)
	})
	c.space()
	return ok && c.i == len(c.b)
}

// entries reads the list of entries.
func (c *cursor) entries(shape *AnswerShape, entry func(Entry)) bool {
	if !c.next('[') {
		return false
	}
	if c.next(']') {
		return true
	}
	for {
		var e Entry
		var seen uint64
		ok := c.object(func(name []byte) bool {
			var field *[]byte
			switch string(name) {
			case "ErrorCode":
				if !c.once(&seen, 63) {
					return false
				}
				e.HasCode = true
				field = &e.Code
			case "ErrorMessage":
				if !c.once(&seen, 62) {
					return false
				}
				field = &e.Message
			default:
				return c.member(name, shape.EntryMembers, &seen)
			}
			raw, escaped, ok := c.str()
			*field = raw
			return ok && !escaped
		})
		if !ok {
			return false
		}
		entry(e)
		if c.next(']') {
			return true
		}
		if !c.next(',') {
			return false
		}
	}
}

// member reads the value of the member name of an object: checked as its
// kind when members has it, once, and skipped otherwise.
func (c *cursor) member(name []byte, members []Member, seen *uint64) bool {
	for i, m := range members {
		if string(name) != m.Name {
			continue
		}
		if !c.once(seen, i) {
			return false
		}
		switch m.Kind {
		case String:
			_, _, ok := c.str()
			return ok
		case Int32:
			return c.int32()
		case Bool:
			return c.literal("true") || c.literal("false")
		}
		return false
	}
	return c.skip(0)
}

// cursor reads a JSON text as the SDK's parser (smithy-go's
// transport/http/protocol/internal/json) accepts it.
type cursor struct {
	b []byte
	i int // the next byte to read
}

// once reports whether bit is not in *seen yet, and adds it.
func (c *cursor) once(seen *uint64, bit int) bool {
	if *seen&(1<<bit) != 0 {
		return false
	}
	*seen |= 1 << bit
	return true
}

// space skips white space.
func (c *cursor) space() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// next reads b, after white space, and reports whether it was there.
func (c *cursor) next(b byte) bool {
	c.space()
	if c.i < len(c.b) && c.b[c.i] == b {
		c.i++
		return true
	}
	return false
}

// object reads an object, calling member with each member's name (not
// escaped) to read its value.
func (c *cursor) object(member func(name []byte) bool) bool {
	if !c.next('{') {
		return false
	}
	if c.next('}') {
		return true
	}
	for {
		name, escaped, ok := c.str()
		if !ok || escaped || !c.next(':') || !member(name) {
			return false
		}
		if c.next('}') {
			return true
		}
		if !c.next(',') {
			return false
		}
	}
}

// str reads a string and returns its bytes between the quotes, and whether
// they have an escape.
func (c *cursor) str() (raw []byte, escaped, ok bool) {
	if !c.next('"') {
		return nil, false, false
	}
	start := c.i
	for c.i < len(c.b) {
		switch b := c.b[c.i]; {
		case b == '"':
			c.i++
			return c.b[start : c.i-1], escaped, true
		case b < 0x20:
			return nil, false, false
		case b == '\\':
			escaped = true
			if !c.escape() {
				return nil, false, false
			}
		default:
			c.i++
		}
	}
	return nil, false, false
}

// escape reads an escape, from its backslash.
func (c *cursor) escape() bool {
	c.i++
	if c.i >= len(c.b) {
		return false
	}
	b := c.b[c.i]
	c.i++
	switch b {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if c.i+4 > len(c.b) {
			return false
		}
		for _, h := range c.b[c.i : c.i+4] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		c.i += 4
		return true
	}
	return false
}

// literal reads lit.
func (c *cursor) literal(lit string) bool {
	c.space()
	if len(c.b)-c.i < len(lit) || string(c.b[c.i:c.i+len(lit)]) != lit {
		return false
	}
	c.i += len(lit)
	return true
}

// number reads a number and returns its integer part (sign and digits),
// and whether it has a fraction or an exponent.
func (c *cursor) number() (integer []byte, more, ok bool) {
	c.space()
	start := c.i
	if c.i < len(c.b) && c.b[c.i] == '-' {
		c.i++
	}
	if !c.digits(true) {
		return nil, false, false
	}
	integer = c.b[start:c.i]
	if c.i < len(c.b) && c.b[c.i] == '.' {
		c.i++
		more = true
		if !c.digits(false) {
			return nil, false, false
		}
	}
	if c.i < len(c.b) && (c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		c.i++
		more = true
		if c.i < len(c.b) && (c.b[c.i] == '+' || c.b[c.i] == '-') {
			c.i++
		}
		if !c.digits(false) {
			return nil, false, false
		}
	}
	return integer, more, true
}

// digits reads one digit or more; no leading zero when integer.
func (c *cursor) digits(integer bool) bool {
	start := c.i
	for c.i < len(c.b) && '0' <= c.b[c.i] && c.b[c.i] <= '9' {
		c.i++
	}
	return c.i > start && !(integer && c.b[start] == '0' && c.i-start > 1)
}

// int32 reads an integer of 32 bits, with no fraction or exponent.
func (c *cursor) int32() bool {
	integer, more, ok := c.number()
	if !ok || more {
		return false
	}
	negative := integer[0] == '-'
	if negative {
		integer = integer[1:]
	}
	if len(integer) > 10 {
		return false
	}
	var n int64
	for _, d := range integer {
		n = n*10 + int64(d-'0')
	}
	if negative {
		n = -n
	}
	return -1<<31 <= n && n <= 1<<31-1
}

// maxDepth is the deepest nesting of a value that skip reads; the SDK's is
// deeper, and reads what is deeper.
const maxDepth = 64

// skip reads any value, nested depth deep.
func (c *cursor) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	c.space()
	if c.i >= len(c.b) {
		return false
	}
	switch c.b[c.i] {
	case '"':
		_, _, ok := c.str()
		return ok
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	case 'n':
		return c.literal("null")
	case '[':
		c.i++
		if c.next(']') {
			return true
		}
		for {
			if !c.skip(depth + 1) {
				return false
			}
			if c.next(']') {
				return true
			}
			if !c.next(',') {
				return false
			}
		}
	case '{':
		return c.object(func([]byte) bool { return c.skip(depth + 1) })
	}
	_, _, ok := c.number()
	return ok
}
