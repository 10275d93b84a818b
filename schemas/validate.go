package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// ErrUnknownKind is returned for an event_type the catalogue does not know.
var ErrUnknownKind = errors.New("unknown event kind")

// ErrEmittedBySluice is wrapped by the error for an event of a kind sluice
// emits itself about its own resources (Kind.EmittedBySluice), which no one
// else may publish.
var ErrEmittedBySluice = errors.New("emitted by sluice itself")

// FieldError is a field whose value does not have its declared type, or an
// envelope field that is missing or malformed.
type FieldError struct {
	Path string // where, such as "object.conn.server_port" or "event_id"
	Msg  string // what is wrong and what was expected
	Err  error  // the sentinel error it wraps, such as ErrEmittedBySluice; or nil
}

// Error returns the path and what is wrong: "object.conn.server_port: expected int32, got a string".
func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// Unwrap returns the sentinel error the FieldError wraps, or nil.
func (e *FieldError) Unwrap() error { return e.Err }

// validator walks a JSON value along a catalogue node. Syntax errors stop
// it; the first type error is kept, with what the cursor refuses, in
// s.invalid, and the walk goes on, so that the caller can still find where
// the value ends.
type validator struct {
	s       Cursor
	unknown int
	// now is the time of ingestion, which the event window is counted
	// from; zero: the window is not checked.
	now time.Time
}

func (v *validator) fail(path, format string, args ...any) {
	v.s.refuse(path, format, args...)
}

// failWith records e unless an error is recorded already.
func (v *validator) failWith(e *FieldError) {
	if v.s.invalid == nil {
		v.s.invalid = e
	}
}

// value checks the next value against n.
func (v *validator) value(n *node) error {
	if n.isGroup() {
		if n.list {
			return v.groupList(n)
		}
		return v.group(n)
	}
	return v.leaf(n)
}

func (v *validator) group(n *node) error {
	switch k := v.s.Peek(); k {
	case JSONNull:
		return v.s.ReadNull()
	case JSONObject:
	default:
		return v.mismatch(n.path, "an object", k)
	}
	if err := v.s.BeginObject(); err != nil {
		return err
	}
	for first := true; ; first = false {
		key, escaped, ok, err := v.s.NextKey(first)
		if err != nil || !ok {
			return err
		}
		if escaped {
			key = unescapeKey(key)
		}
		child := n.children[string(key)]
		if child == nil {
			v.unknown++
			if err := v.s.Skip(); err != nil {
				return err
			}
			continue
		}
		if err := v.value(child); err != nil {
			return err
		}
	}
}

func (v *validator) groupList(n *node) error {
	switch k := v.s.Peek(); k {
	case JSONNull:
		return v.s.ReadNull()
	case JSONArray:
	default:
		return v.mismatch(n.path, "a list of objects", k)
	}
	if err := v.s.BeginArray(); err != nil {
		return err
	}
	for i, first := 0, true; ; i, first = i+1, false {
		ok, err := v.s.NextElem(first)
		if err != nil || !ok {
			return err
		}
		if k := v.s.Peek(); k != JSONObject {
			err = v.mismatch(elementPath(n.path, nil, i), "an object", k)
		} else {
			err = v.group(n)
		}
		if err != nil {
			return err
		}
	}
}

// mismatch records a value of the wrong kind and skips it.
func (v *validator) mismatch(path, want string, got JSONKind) error {
	if got == JSONInvalid {
		return v.s.unexpected("a JSON value")
	}
	v.fail(path, "expected %s, got %s", want, got)
	return v.s.Skip()
}

func (v *validator) leaf(n *node) error {
	k := v.s.Peek()
	switch {
	case k == JSONNull:
		return v.s.ReadNull()
	case n.secret:
		v.fail(n.path, "must be null: events never carry secrets such as tokens and secret keys")
		return v.s.Skip()
	case k == JSONBool && n.typ == TypeBool:
		return v.s.ReadBool()
	case k == JSONString && n.typ == TypeString:
		raw, escaped, err := v.s.ReadString()
		if err == nil && n.maxBytes > 0 && len(raw) > n.maxBytes {
			if size := decodedLen(raw, escaped); size > n.maxBytes {
				v.fail(n.path, "is %d bytes long, over its limit of %d bytes", size, n.maxBytes)
				return nil
			}
		}
		if err == nil && n.value == ValueIP && (escaped || !isIP(raw)) {
			v.fail(n.path, "expected an IPv4 or IPv6 address without a zone, such as 203.0.113.7 or 2001:db8::7, got %q", raw)
		}
		return err
	case k == JSONString && n.typ == TypeTimestamp:
		raw, escaped, err := v.s.ReadString()
		switch {
		case err != nil:
		case escaped || !isTimestamp(raw):
			v.fail(n.path, "expected an RFC 3339 timestamp such as 2026-11-22T10:04:05.123Z, got %q", raw)
		case n.value == ValueRecent && !v.now.IsZero():
			if t, perr := ParseEventTime(raw); perr == nil {
				v.checkWindow(n.path, t)
			}
		}
		return err
	case k == JSONNumber && (n.typ == TypeInt32 || n.typ == TypeInt64 || n.typ == TypeUint64):
		raw, integer, err := v.s.ReadNumber()
		switch {
		case err != nil:
		case !(integer && intInRange(raw, n.typ)):
			v.fail(n.path, "expected %s (%s), got %s", n.typ, intRange(n.typ), raw)
		case n.value == ValuePort && !isPort(raw):
			v.fail(n.path, "expected a port, an integer from 1 to 65535, got %s", raw)
		}
		return err
	case k == JSONNumber && n.typ == TypeFloat64:
		_, _, err := v.s.ReadNumber()
		return err
	case k == JSONArray && n.typ == TypeStringList:
		return v.listOf(n.path, nil, JSONString)
	case k == JSONArray && n.typ == TypeMapList:
		return v.listOf(n.path, nil, JSONObject)
	case k == JSONObject && (n.typ == TypeStringMap || n.typ == TypeHeaderMap):
		return v.mapOf(n)
	case k == JSONObject && n.typ == TypeObject:
		return v.s.Skip()
	}
	return v.mismatch(n.path, n.typ.String(), k)
}

// listOf checks an array (already peeked) whose elements must all be of
// kind want. The array is at path, or at path.key when key is not nil: the
// path of an error is only built when there is one.
func (v *validator) listOf(path string, key []byte, want JSONKind) error {
	if err := v.s.BeginArray(); err != nil {
		return err
	}
	for i, first := 0, true; ; i, first = i+1, false {
		ok, err := v.s.NextElem(first)
		if err != nil || !ok {
			return err
		}
		if k := v.s.Peek(); k != want {
			err = v.mismatch(elementPath(path, key, i), want.String(), k)
		} else {
			err = v.s.Skip()
		}
		if err != nil {
			return err
		}
	}
}

// mapOf checks an object (already peeked) whose values are strings
// (TypeStringMap) or lists of strings (TypeHeaderMap).
func (v *validator) mapOf(n *node) error {
	if err := v.s.BeginObject(); err != nil {
		return err
	}
	for first := true; ; first = false {
		key, _, ok, err := v.s.NextKey(first)
		if err != nil || !ok {
			return err
		}
		k := v.s.Peek()
		switch {
		case n.typ == TypeStringMap && k == JSONString:
			_, _, err = v.s.ReadString()
		case n.typ == TypeHeaderMap && k == JSONArray:
			err = v.listOf(n.path, key, JSONString)
		case n.typ == TypeStringMap:
			err = v.mismatch(n.path+"."+string(key), "a string", k)
		default:
			err = v.mismatch(n.path+"."+string(key), "a list of strings", k)
		}
		if err != nil {
			return err
		}
	}
}

// decodedLen returns the length in bytes of the string whose raw contents,
// between the quotes, are raw, once its escapes are decoded as
// encoding/json decodes them (a lone surrogate becomes U+FFFD). It does not
// allocate.
func decodedLen(raw []byte, escaped bool) int {
	if !escaped {
		return len(raw)
	}
	n := 0
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			n++
			i++
			continue
		}
		if raw[i+1] != 'u' {
			n++
			i += 2
			continue
		}
		r, _ := HexValue(raw[i+2 : i+6]) // the cursor checked the digits
		i += 6
		if utf16.IsSurrogate(r) && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
			if low, _ := HexValue(raw[i+2 : i+6]); utf16.DecodeRune(r, low) != utf8.RuneError {
				n += 4
				i += 6
				continue
			}
		}
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
		}
		n += utf8.RuneLen(r)
	}
	return n
}

// checkWindow refuses t, the time at path, unless it is within the event
// window counted from v.now: not before MinEventTime, and at most
// MaxEventAhead past v.now.
func (v *validator) checkWindow(path string, t time.Time) {
	switch {
	case t.Before(MinEventTime):
		v.fail(path, "is %s, before %s: sluice takes events from %s on (a time such as 1970-01-01 is a clock or encoding gone wrong)",
			t.UTC().Format(TimeLayout), MinEventTime.Format(TimeLayout), MinEventTime.Format(time.DateOnly))
	case t.After(v.now.Add(MaxEventAhead)):
		v.fail(path, "is %s, more than %s after sluice received it (%s): check the producer's clock (CloudWatch Logs refuses events over 2 hours ahead)",
			t.UTC().Format(TimeLayout), MaxEventAhead, v.now.UTC().Format(TimeLayout))
	}
}

// isPort reports whether raw, a JSON integer in the int32 range, is a port
// from 1 to 65535.
func isPort(raw []byte) bool {
	if raw[0] == '-' || raw[0] == '0' || len(raw) > 5 {
		return false
	}
	p := 0
	for _, c := range raw {
		p = p*10 + int(c-'0')
	}
	return p <= 65535
}

// isIP reports whether raw, a string without escapes, is an IPv4 or IPv6
// address without a zone, as net/netip parses it. It does not allocate for
// an address: the string it parses shares raw's bytes, and netip keeps
// none of them in an Addr without a zone (the error of a string that is
// no address does, and is dropped here).
func isIP(raw []byte) bool {
	if len(raw) == 0 || len(raw) > MaxIPBytes {
		return false
	}
	addr, err := netip.ParseAddr(unsafe.String(unsafe.SliceData(raw), len(raw)))
	return err == nil && addr.Zone() == ""
}

func elementPath(path string, key []byte, i int) string {
	if key != nil {
		path += "." + string(key)
	}
	return path + "[" + strconv.Itoa(i) + "]"
}

// unescapeKey decodes an object key holding escapes. It allocates, but keys
// with escapes are rare.
func unescapeKey(raw []byte) []byte {
	var s string
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	if err := json.Unmarshal(quoted, &s); err != nil {
		return raw
	}
	return []byte(s)
}

func intRange(t Type) string {
	switch t {
	case TypeInt32:
		return "an integer from -2147483648 to 2147483647"
	case TypeUint64:
		return "an integer from 0 to 18446744073709551615"
	}
	return "an integer from -9223372036854775808 to 9223372036854775807"
}

// intInRange reports whether raw, a JSON integer, fits t.
func intInRange(raw []byte, t Type) bool {
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	var u uint64
	for _, c := range raw {
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return false
		}
		u = u*10 + d
	}
	switch t {
	case TypeInt32:
		if neg {
			return u <= -math.MinInt32
		}
		return u <= math.MaxInt32
	case TypeInt64:
		if neg {
			return u <= 1<<63
		}
		return u <= math.MaxInt64
	}
	return !neg || u == 0
}

// isTimestamp reports whether b is an RFC 3339 date-time as Go's time
// package parses it: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), with a
// day that exists, seconds 00-59 and upper-case T and Z.
func isTimestamp(b []byte) bool {
	num := func(i, n, lo, hi int) bool {
		if i+n > len(b) {
			return false
		}
		v := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return false
			}
			v = v*10 + int(c-'0')
		}
		return v >= lo && v <= hi
	}
	if len(b) < 20 || !num(0, 4, 0, 9999) || b[4] != '-' || !num(5, 2, 1, 12) || b[7] != '-' ||
		!num(8, 2, 1, daysIn(b)) || b[10] != 'T' || !num(11, 2, 0, 23) || b[13] != ':' ||
		!num(14, 2, 0, 59) || b[16] != ':' || !num(17, 2, 0, 59) {
		return false
	}
	i := 19
	if b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(b) && b[i] == 'Z' {
		return i+1 == len(b)
	}
	return i+6 == len(b) && (b[i] == '+' || b[i] == '-') && num(i+1, 2, 0, 23) && b[i+3] == ':' && num(i+4, 2, 0, 59)
}

// ValidateObject checks object, the JSON of an event's object, against the
// kind's fields. Fields the kind does not declare are allowed, and counted in
// unknown. It returns a *SyntaxError for malformed JSON, or a *FieldError for
// the first field whose value does not have its declared type, or that
// JSON readers read differently: a member name twice in an object, a lone
// surrogate, a number beyond float64's range.
func (k *Kind) ValidateObject(object []byte) (unknown int, err error) {
	var v validator
	v.s.resetChecking(object)
	v.s.pathRoot = k.root.path
	if err := v.object(k.root); err != nil {
		return 0, err
	}
	if err := v.s.End(); err != nil {
		return 0, err
	}
	return v.unknown, v.s.invalid
}

// object checks the next value, which must be a JSON object, against root.
func (v *validator) object(root *node) error {
	if k := v.s.Peek(); k != JSONObject {
		if k == JSONInvalid {
			return v.s.unexpected("a JSON object")
		}
		v.fail(root.path, "expected a JSON object, got %s", k)
		return v.s.Skip()
	}
	return v.group(root)
}

// compact returns b without insignificant whitespace.
func compact(b []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(b))
	if err := json.Compact(&out, b); err != nil {
		return b // b was validated; cannot happen
	}
	return out.Bytes()
}

// daysIn returns the number of days of the month of b (YYYY-MM-...), or 31
// when the year or month is not numeric (then b is refused anyway).
func daysIn(b []byte) int {
	year, month := 0, 0
	for _, c := range b[0:4] {
		year = year*10 + int(c-'0')
	}
	for _, c := range b[5:7] {
		month = month*10 + int(c-'0')
	}
	if month < 1 || month > 12 || year < 0 {
		return 31
	}
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
