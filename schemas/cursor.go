package schemas

import (
	"bytes"
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

// JSONKind is the kind of a JSON value, told from its first byte.
type JSONKind uint8

// The kinds of JSON values.
const (
	JSONInvalid JSONKind = iota // not the start of a value
	JSONNull
	JSONBool
	JSONNumber
	JSONString
	JSONObject
	JSONArray
)

var jsonKindNames = [...]string{"invalid JSON", "null", "a boolean", "a number", "a string", "an object", "an array"}

// String names the kind as validation's messages do: "a string", "an object".
func (k JSONKind) String() string { return jsonKindNames[k] }

// Cursor reads JSON from a byte slice, a value at a time, without
// allocating (but for its errors) and without decoding what it does not
// return: it is how validation reads what producers publish, how delivery
// reads stored events back, and how the Kinesis and Firehose sinks read
// their answers (package sinks/awsjson). Its errors are *SyntaxError, at
// an offset of the slice.
//
// Its reads are strict: it accepts exactly RFC 8259 JSON in valid UTF-8,
// nested at most 64 levels below where it starts, and Skip checks the
// whole of a value. SkipTrusted skips a value of JSON known to be valid
// (a stored event, validated when it was published) faster, checking only
// what keeps it within the slice.
//
// The zero Cursor reads an empty slice; Reset points it at data. A Cursor
// is not safe for concurrent use; reuse one to read many values.
type Cursor struct {
	data   []byte
	pos    int
	depth  int
	spaced bool // whitespace was skipped: the input is not compact

	// checking turns on what validation refuses of valid JSON (see
	// cursor_refuse.go); the fields below serve it, and stay unused
	// otherwise.
	checking bool
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

// Reset makes c read data from offset pos, outside any object or array.
func (c *Cursor) Reset(data []byte, pos int) {
	c.data, c.pos, c.depth, c.spaced = data, pos, 0, false
	c.checking, c.invalid, c.pathRoot, c.pathBase, c.inKey = false, nil, "", 0, false
	c.nkeys, c.more = 0, c.more[:0]
}

// Pos returns the offset in the data of the next byte c reads.
func (c *Cursor) Pos() int { return c.pos }

func (c *Cursor) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: c.pos, Msg: fmt.Sprintf(format, args...)}
}

// SkipSpace moves past whitespace.
func (c *Cursor) SkipSpace() {
	// Most JSON read is compact: answer that without a call.
	if c.pos < len(c.data) && c.data[c.pos] > ' ' {
		return
	}
	c.skipSpace()
}

func (c *Cursor) skipSpace() {
	start := c.pos
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			if c.pos != start {
				c.spaced = true
			}
			return
		}
	}
	if c.pos != start {
		c.spaced = true
	}
}

// Peek skips whitespace and tells the kind of the next value, from its
// first byte: JSONInvalid when no value can start there.
func (c *Cursor) Peek() JSONKind {
	if c.pos < len(c.data) {
		if k := kindOf[c.data[c.pos]]; k != JSONInvalid {
			return k // no whitespace first, as in compact JSON
		}
	}
	return c.peekSpaced()
}

// peekSpaced is Peek at a byte that starts no value: whitespace, maybe.
func (c *Cursor) peekSpaced() JSONKind {
	c.skipSpace()
	if c.pos >= len(c.data) {
		return JSONInvalid
	}
	return kindOf[c.data[c.pos]]
}

// kindOf is the kind of the value each byte can start.
var kindOf = func() (kinds [256]JSONKind) {
	kinds['{'], kinds['['], kinds['"'] = JSONObject, JSONArray, JSONString
	kinds['t'], kinds['f'], kinds['n'] = JSONBool, JSONBool, JSONNull
	kinds['-'] = JSONNumber
	for b := '0'; b <= '9'; b++ {
		kinds[b] = JSONNumber
	}
	return kinds
}()

func (c *Cursor) unexpected(what string) error {
	if c.pos >= len(c.data) {
		return c.errorf("unexpected end of input, expected %s", what)
	}
	return c.errorf("unexpected %q, expected %s", c.data[c.pos], what)
}

// Consume moves past lit if the data continues with it, as it is (no
// whitespace first), and reports whether it did.
func (c *Cursor) Consume(lit string) bool {
	if len(c.data)-c.pos < len(lit) || string(c.data[c.pos:c.pos+len(lit)]) != lit {
		return false
	}
	c.pos += len(lit)
	return true
}

// End checks that nothing but whitespace follows.
func (c *Cursor) End() error {
	c.SkipSpace()
	if c.pos != len(c.data) {
		return c.errorf("unexpected %q after the end of the value", c.data[c.pos])
	}
	return nil
}

func (c *Cursor) literal(word string) error {
	if !c.Consume(word) {
		return c.unexpected(word)
	}
	return nil
}

// ReadNull consumes null (Peek must have said JSONNull).
func (c *Cursor) ReadNull() error { return c.literal("null") }

// ReadBool consumes true or false (Peek must have said JSONBool).
func (c *Cursor) ReadBool() error {
	if c.data[c.pos] == 't' {
		return c.literal("true")
	}
	return c.literal("false")
}

// ReadString consumes a string and returns its raw contents between the
// quotes, and whether they hold escapes (then unescape them before use).
func (c *Cursor) ReadString() (raw []byte, escaped bool, err error) {
	if c.pos >= len(c.data) || c.data[c.pos] != '"' {
		return nil, false, c.unexpected("a string")
	}
	c.pos++
	start := c.pos
	for {
		data, i := c.data, c.pos
		for i < len(data) && plainByte[data[i]] {
			i++
		}
		if c.pos = i; i == len(data) {
			return nil, false, c.errorf("unterminated string")
		}
		switch b := data[i]; {
		case b == '"':
			c.pos++
			return data[start:i], escaped, nil
		case b == '\\':
			escaped = true
			if err := c.escape(); err != nil {
				return nil, false, err
			}
		case b < 0x20:
			return nil, false, c.errorf("control character %#02x in string (escape it)", b)
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false, c.errorf("invalid UTF-8 in string")
			}
			c.pos += size
		}
	}
}

// plainByte marks the bytes a string holds as they are: not the quote,
// the backslash, a control character or a byte of a multi-byte UTF-8
// sequence, each of which ReadString looks at closer.
var plainByte = func() (plain [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		plain[b] = b != '"' && b != '\\'
	}
	return plain
}()

func (c *Cursor) escape() error {
	c.pos++ // the backslash
	if c.pos >= len(c.data) {
		return c.errorf("unterminated escape")
	}
	switch c.data[c.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		c.pos++
		return nil
	case 'u':
		c.pos++
		if len(c.data)-c.pos < 4 {
			return c.errorf("short \\u escape")
		}
		r, ok := HexValue(c.data[c.pos:])
		if !ok {
			return c.errorf("invalid \\u escape")
		}
		c.pos += 4
		switch {
		case r < 0xd800 || r > 0xdfff:
		case r <= 0xdbff && c.lowSurrogateNext():
			c.pos += 6
		case c.checking:
			c.refuseSurrogate(r)
		}
		return nil
	}
	return c.errorf("invalid escape %q", c.data[c.pos])
}

// lowSurrogateNext reports whether a \u escape of a low surrogate
// (DC00-DFFF) comes next, completing the pair of the high one before it.
func (c *Cursor) lowSurrogateNext() bool {
	rest := c.data[c.pos:]
	if len(rest) < 6 || rest[0] != '\\' || rest[1] != 'u' {
		return false
	}
	r, ok := HexValue(rest[2:])
	return ok && r >= 0xdc00 && r <= 0xdfff
}

// HexValue decodes the 4 hexadecimal digits at the start of b, as of a
// \u escape, and reports whether they are hexadecimal digits.
func HexValue(b []byte) (rune, bool) {
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

// ReadNumber consumes a number and returns its text and whether it is an
// integer (no fraction, no exponent).
func (c *Cursor) ReadNumber() (raw []byte, integer bool, err error) {
	start := c.pos
	if c.pos < len(c.data) && c.data[c.pos] == '-' {
		c.pos++
	}
	switch {
	case c.pos < len(c.data) && c.data[c.pos] == '0':
		c.pos++
	case c.pos < len(c.data) && c.data[c.pos] >= '1' && c.data[c.pos] <= '9':
		c.digits()
	default:
		return nil, false, c.unexpected("a digit")
	}
	integer = true
	if c.pos < len(c.data) && c.data[c.pos] == '.' {
		integer = false
		c.pos++
		if !c.digits() {
			return nil, false, c.unexpected("a digit after the decimal point")
		}
	}
	if c.pos < len(c.data) && (c.data[c.pos] == 'e' || c.data[c.pos] == 'E') {
		integer = false
		c.pos++
		if c.pos < len(c.data) && (c.data[c.pos] == '+' || c.data[c.pos] == '-') {
			c.pos++
		}
		if !c.digits() {
			return nil, false, c.unexpected("a digit in the exponent")
		}
	}
	raw = c.data[start:c.pos]
	if c.checking {
		c.checkRange(raw)
	}
	return raw, integer, nil
}

// ReadInt32 consumes a number, as ReadNumber does, and returns it when it
// is an integer (no fraction, no exponent) from -2147483648 to 2147483647.
// A number that is not is refused with a *SyntaxError at its start, though
// consumed.
func (c *Cursor) ReadInt32() (int32, error) {
	start := c.pos
	raw, integer, err := c.ReadNumber()
	if err != nil {
		return 0, err
	}
	if !integer || !intInRange(raw, TypeInt32) {
		return 0, &SyntaxError{Offset: start, Msg: fmt.Sprintf("expected an int32 (%s), got %.40s", intRange(TypeInt32), raw)}
	}
	digits, negative := raw, raw[0] == '-'
	if negative {
		digits = raw[1:]
	}
	var n int64
	for _, d := range digits {
		n = n*10 + int64(d-'0')
	}
	if negative {
		n = -n
	}
	return int32(n), nil
}

func (c *Cursor) digits() bool {
	start := c.pos
	for c.pos < len(c.data) && c.data[c.pos] >= '0' && c.data[c.pos] <= '9' {
		c.pos++
	}
	return c.pos > start
}

// BeginObject skips whitespace and consumes the '{' of an object.
func (c *Cursor) BeginObject() error {
	c.SkipSpace()
	if c.pos >= len(c.data) || c.data[c.pos] != '{' {
		return c.unexpected("'{'")
	}
	if c.depth++; c.depth > maxDepth {
		return c.errorf("nested deeper than %d levels", maxDepth)
	}
	if c.checking {
		c.frames[c.depth-1] = frame{mark: c.nkeys}
	}
	c.pos++
	return nil
}

// NextKey moves to the next member of the object BeginObject opened: it
// consumes the separator (unless first), the name, its colon and the
// whitespace after it, and returns the name's raw contents between the
// quotes and whether they hold escapes. ok is false at the closing brace,
// which it consumes.
func (c *Cursor) NextKey(first bool) (key []byte, escaped, ok bool, err error) {
	c.SkipSpace()
	if c.pos < len(c.data) && c.data[c.pos] == '}' {
		c.pos++
		if c.checking {
			c.endObject()
		}
		c.depth--
		return nil, false, false, nil
	}
	if !first {
		if c.pos >= len(c.data) || c.data[c.pos] != ',' {
			return nil, false, false, c.unexpected("',' or '}'")
		}
		c.pos++
		c.SkipSpace()
	}
	start := c.pos + 1
	c.inKey = true
	key, escaped, err = c.ReadString()
	c.inKey = false
	if err != nil {
		return nil, false, false, err
	}
	if c.checking {
		c.pushKey(keyRange{start: start, end: start + len(key), escaped: escaped})
	}
	c.SkipSpace()
	if c.pos >= len(c.data) || c.data[c.pos] != ':' {
		return nil, false, false, c.unexpected("':'")
	}
	c.pos++
	c.SkipSpace()
	return key, escaped, true, nil
}

// BeginArray skips whitespace and consumes the '[' of an array.
func (c *Cursor) BeginArray() error {
	c.SkipSpace()
	if c.pos >= len(c.data) || c.data[c.pos] != '[' {
		return c.unexpected("'['")
	}
	if c.depth++; c.depth > maxDepth {
		return c.errorf("nested deeper than %d levels", maxDepth)
	}
	if c.checking {
		c.frames[c.depth-1] = frame{array: true, index: -1, mark: c.nkeys}
	}
	c.pos++
	return nil
}

// NextElem moves to the next element of the array BeginArray opened,
// consuming the separator (unless first); ok is false at the closing
// bracket, which it consumes.
func (c *Cursor) NextElem(first bool) (ok bool, err error) {
	c.SkipSpace()
	if c.pos < len(c.data) && c.data[c.pos] == ']' {
		c.pos++
		c.depth--
		return false, nil
	}
	if !first {
		if c.pos >= len(c.data) || c.data[c.pos] != ',' {
			return false, c.unexpected("',' or ']'")
		}
		c.pos++
	}
	if c.checking {
		c.frames[c.depth-1].index++
	}
	return true, nil
}

// Skip consumes any value, checking its syntax.
func (c *Cursor) Skip() error {
	switch c.Peek() {
	case JSONNull:
		return c.ReadNull()
	case JSONBool:
		return c.ReadBool()
	case JSONNumber:
		_, _, err := c.ReadNumber()
		return err
	case JSONString:
		_, _, err := c.ReadString()
		return err
	case JSONObject:
		if err := c.BeginObject(); err != nil {
			return err
		}
		for first := true; ; first = false {
			_, _, ok, err := c.NextKey(first)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if err := c.Skip(); err != nil {
				return err
			}
		}
	case JSONArray:
		if err := c.BeginArray(); err != nil {
			return err
		}
		for first := true; ; first = false {
			ok, err := c.NextElem(first)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if err := c.Skip(); err != nil {
				return err
			}
		}
	}
	return c.unexpected("a JSON value")
}

// SkipTrusted consumes a value of JSON known to be valid, such as a stored
// event's, faster than Skip: it finds the end of strings with
// bytes.IndexByte and of objects and arrays by counting brackets, and
// checks only that the value ends within the data. What it consumes of
// invalid JSON is unspecified, but within the data.
func (c *Cursor) SkipTrusted() error {
	c.SkipSpace()
	if c.pos >= len(c.data) {
		return c.unexpected("a JSON value")
	}
	switch c.data[c.pos] {
	case '"':
		return c.skipTrustedString()
	case '{', '[':
		return c.skipTrustedNested()
	case ',', ':', '}', ']':
		return c.unexpected("a JSON value")
	}
	// A number or a literal: up to the next delimiter.
	for ; c.pos < len(c.data); c.pos++ {
		switch c.data[c.pos] {
		case ',', ':', '}', ']', '{', '[', '"', ' ', '\t', '\n', '\r':
			return nil
		}
	}
	return nil
}

// skipTrustedString consumes the string whose opening quote is at the
// cursor, up to the first quote not escaped.
func (c *Cursor) skipTrustedString() error {
	data := c.data
	for i := c.pos + 1; i < len(data); i++ {
		// Most strings are short (names, values of fields): look at a
		// few bytes one by one before calling IndexByte.
		if j := min(i+16, len(data)); data[i] != '"' {
			for i++; i < j && data[i] != '"'; i++ {
			}
			if i == j {
				n := bytes.IndexByte(data[i:], '"')
				if n < 0 {
					break
				}
				i += n
			}
		}
		// The quote ends the string unless an odd number of backslashes
		// escapes it.
		backslashes := 0
		for k := i - 1; data[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			c.pos = i + 1
			return nil
		}
	}
	return c.errorf("unterminated string")
}

// skipTrustedNested consumes the object or array at the cursor, with all
// it holds.
func (c *Cursor) skipTrustedNested() error {
	depth := 0
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case '"':
			if err := c.skipTrustedString(); err != nil {
				return err
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				c.pos++
				return nil
			}
		}
		c.pos++
	}
	return c.errorf("unterminated object or array")
}
