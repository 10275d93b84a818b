package schemas

import (
	"fmt"
	"unicode/utf8"
)

// maxDepth bounds the nesting of objects and arrays in an event, so a hostile
// body cannot exhaust the stack. Real events nest a handful of levels.
const maxDepth = 64

// SyntaxError is malformed JSON, at a byte offset of the input.
type SyntaxError struct {
	Offset int    // byte offset of the error in the input
	Msg    string // what is wrong
}

// Error returns the offset and what is wrong.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("malformed JSON at byte %d: %s", e.Offset, e.Msg)
}

// jsonKind is the kind of a JSON value, told from its first byte.
type jsonKind uint8

const (
	kindInvalid jsonKind = iota
	kindNull
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
)

var jsonKindNames = [...]string{"invalid JSON", "null", "a boolean", "a number", "a string", "an object", "an array"}

func (k jsonKind) String() string { return jsonKindNames[k] }

// scanner is a strict JSON scanner over a byte slice. It accepts exactly
// RFC 8259 JSON in valid UTF-8, nested at most maxDepth levels, and returns
// a *SyntaxError for anything else. Of that JSON it refuses, in invalid, a
// value that different readers read differently, and goes on: an object
// with a member name twice (readers keep the first, the last, or both), a
// string with a lone UTF-16 surrogate escape (readers replace it, keep it,
// or fail), and a number beyond float64's range (readers fail, or read
// infinity). It never allocates on valid input whose open objects hold at
// most len(keyBuf) members in all.
type scanner struct {
	data   []byte
	pos    int
	depth  int
	spaced bool // whitespace was skipped: the input is not compact

	// invalid is the first value refused: a *FieldError naming its path.
	invalid error
	// pathRoot names the value the scan starts at in the paths of
	// invalid ("object", or "" for an event); the containers open at
	// depths below pathBase (a batch's array) are not in paths.
	pathRoot string
	pathBase int
	inKey    bool // a member name is being read

	frames [maxDepth]frame // the open objects and arrays, outermost first
	// The member names read so far of the open objects, outermost first:
	// the first len(keyBuf) in keyBuf, the others in more.
	keyBuf [64]keyRange
	more   []keyRange
	nkeys  int
}

// frame is an open object or array.
type frame struct {
	array bool
	index int // arrays: the element being read, from 0
	mark  int // the number of member names when it opened
}

// keyRange is the raw contents of a member name in the input.
type keyRange struct {
	start, end int
	escaped    bool
}

func (s *scanner) reset(data []byte) {
	s.data, s.pos, s.depth, s.spaced = data, 0, 0, false
	s.invalid, s.pathRoot, s.pathBase, s.inKey = nil, "", 0, false
	s.nkeys, s.more = 0, s.more[:0]
}

func (s *scanner) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: s.pos, Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) ws() {
	start := s.pos
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			if s.pos != start {
				s.spaced = true
			}
			return
		}
	}
	if s.pos != start {
		s.spaced = true
	}
}

// peek skips whitespace and tells the kind of the next value.
func (s *scanner) peek() jsonKind {
	s.ws()
	if s.pos >= len(s.data) {
		return kindInvalid
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return kindObject
	case c == '[':
		return kindArray
	case c == '"':
		return kindString
	case c == 't' || c == 'f':
		return kindBool
	case c == 'n':
		return kindNull
	case c == '-' || (c >= '0' && c <= '9'):
		return kindNumber
	}
	return kindInvalid
}

func (s *scanner) unexpected(what string) error {
	if s.pos >= len(s.data) {
		return s.errorf("unexpected end of input, expected %s", what)
	}
	return s.errorf("unexpected %q, expected %s", s.data[s.pos], what)
}

// end checks that nothing but whitespace follows.
func (s *scanner) end() error {
	s.ws()
	if s.pos != len(s.data) {
		return s.errorf("unexpected %q after the end of the value", s.data[s.pos])
	}
	return nil
}

func (s *scanner) literal(word string) error {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return s.unexpected(word)
	}
	s.pos += len(word)
	return nil
}

// boolean consumes true or false.
func (s *scanner) boolean() error {
	if s.data[s.pos] == 't' {
		return s.literal("true")
	}
	return s.literal("false")
}

// str consumes a string and returns its raw contents between the quotes, and
// whether they hold escapes (then unescape them before use).
func (s *scanner) str() (raw []byte, escaped bool, err error) {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return nil, false, s.unexpected("a string")
	}
	s.pos++
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			raw = s.data[start:s.pos]
			s.pos++
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			if err := s.escape(); err != nil {
				return nil, false, err
			}
		case c < 0x20:
			return nil, false, s.errorf("control character %#02x in string (escape it)", c)
		case c < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, false, s.errorf("invalid UTF-8 in string")
			}
			s.pos += size
		}
	}
	return nil, false, s.errorf("unterminated string")
}

func (s *scanner) escape() error {
	s.pos++ // the backslash
	if s.pos >= len(s.data) {
		return s.errorf("unterminated escape")
	}
	switch s.data[s.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return nil
	case 'u':
		s.pos++
		if len(s.data)-s.pos < 4 {
			return s.errorf("short \\u escape")
		}
		r, ok := hexValue(s.data[s.pos:])
		if !ok {
			return s.errorf("invalid \\u escape")
		}
		s.pos += 4
		switch {
		case r < 0xd800 || r > 0xdfff:
		case r <= 0xdbff && s.lowSurrogateNext():
			s.pos += 6
		default:
			s.refuseSurrogate(r)
		}
		return nil
	}
	return s.errorf("invalid escape %q", s.data[s.pos])
}

// lowSurrogateNext reports whether a \u escape of a low surrogate
// (DC00-DFFF) comes next, completing the pair of the high one before it.
func (s *scanner) lowSurrogateNext() bool {
	rest := s.data[s.pos:]
	if len(rest) < 6 || rest[0] != '\\' || rest[1] != 'u' {
		return false
	}
	r, ok := hexValue(rest[2:])
	return ok && r >= 0xdc00 && r <= 0xdfff
}

// refuseSurrogate refuses the string being read for the lone surrogate r.
func (s *scanner) refuseSurrogate(r rune) {
	if s.invalid != nil {
		return
	}
	what := "the string"
	path := s.path(s.depth)
	if s.inKey {
		what, path = "a member name", s.path(s.depth-1)
	}
	s.refuse(path, "%s holds \\u%04x, half of a UTF-16 surrogate pair without its other half, which JSON readers "+
		"read differently (or not at all): send the character in UTF-8, or escape it as a whole pair", what, r)
}

// hexValue decodes the 4 hexadecimal digits at the start of b.
func hexValue(b []byte) (rune, bool) {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number consumes a number and returns its text and whether it is an
// integer (no fraction, no exponent).
func (s *scanner) number() (raw []byte, integer bool, err error) {
	start := s.pos
	if s.pos < len(s.data) && s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case s.pos < len(s.data) && s.data[s.pos] >= '1' && s.data[s.pos] <= '9':
		s.digits()
	default:
		return nil, false, s.unexpected("a digit")
	}
	integer = true
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		integer = false
		s.pos++
		if !s.digits() {
			return nil, false, s.unexpected("a digit after the decimal point")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		integer = false
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if !s.digits() {
			return nil, false, s.unexpected("a digit in the exponent")
		}
	}
	raw = s.data[start:s.pos]
	if !inFloatRange(raw) && s.invalid == nil {
		s.refuse(s.path(s.depth), "the number %.40s is beyond the range of a float64 (about ±1.8e308), "+
			"which JSON readers refuse or read as infinity: send a number within it, or a string", raw)
	}
	return raw, integer, nil
}

func (s *scanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}

// beginObject consumes '{' (peek must have said kindObject).
func (s *scanner) beginObject() error {
	if s.depth++; s.depth > maxDepth {
		return s.errorf("nested deeper than %d levels", maxDepth)
	}
	s.frames[s.depth-1] = frame{mark: s.nkeys}
	s.pos++
	return nil
}

// nextKey moves to the next member of an object: it consumes the separator
// and the key and its colon, and returns the key's raw contents; ok is false
// at the closing brace, which it consumes, having checked that no name
// came twice.
func (s *scanner) nextKey(first bool) (key []byte, escaped, ok bool, err error) {
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.endObject()
		return nil, false, false, nil
	}
	if !first {
		if s.pos >= len(s.data) || s.data[s.pos] != ',' {
			return nil, false, false, s.unexpected("',' or '}'")
		}
		s.pos++
		s.ws()
	}
	start := s.pos + 1
	s.inKey = true
	key, escaped, err = s.str()
	s.inKey = false
	if err != nil {
		return nil, false, false, err
	}
	s.pushKey(keyRange{start: start, end: start + len(key), escaped: escaped})
	s.ws()
	if s.pos >= len(s.data) || s.data[s.pos] != ':' {
		return nil, false, false, s.unexpected("':'")
	}
	s.pos++
	return key, escaped, true, nil
}

// beginArray consumes '[' (peek must have said kindArray).
func (s *scanner) beginArray() error {
	if s.depth++; s.depth > maxDepth {
		return s.errorf("nested deeper than %d levels", maxDepth)
	}
	s.frames[s.depth-1] = frame{array: true, index: -1, mark: s.nkeys}
	s.pos++
	return nil
}

// nextElem moves to the next element of an array, consuming the separator;
// ok is false at the closing bracket, which it consumes.
func (s *scanner) nextElem(first bool) (ok bool, err error) {
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		return false, nil
	}
	if !first {
		if s.pos >= len(s.data) || s.data[s.pos] != ',' {
			return false, s.unexpected("',' or ']'")
		}
		s.pos++
	}
	s.frames[s.depth-1].index++
	return true, nil
}

// skip consumes any value, checking its syntax.
func (s *scanner) skip() error {
	switch s.peek() {
	case kindNull:
		return s.literal("null")
	case kindBool:
		return s.boolean()
	case kindNumber:
		_, _, err := s.number()
		return err
	case kindString:
		_, _, err := s.str()
		return err
	case kindObject:
		if err := s.beginObject(); err != nil {
			return err
		}
		for first := true; ; first = false {
			_, _, ok, err := s.nextKey(first)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if err := s.skip(); err != nil {
				return err
			}
		}
	case kindArray:
		if err := s.beginArray(); err != nil {
			return err
		}
		for first := true; ; first = false {
			ok, err := s.nextElem(first)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if err := s.skip(); err != nil {
				return err
			}
		}
	}
	return s.unexpected("a JSON value")
}
