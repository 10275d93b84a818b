package awsjson

import "github.com/sluicehq/sluice/schemas"

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
// allocates nothing when it reads the answer (when it leaves one to the
// SDK, the cursor's error allocates, a trifle beside the SDK's read).
//
// It reads with schemas.Cursor, which is stricter than the SDK's parser
// (smithy-go's transport/http/protocol/internal/json): it refuses invalid
// UTF-8, which the SDK keeps as it is in a string without escapes, and
// nesting deeper than 64 levels, and Read leaves those answers to the
// SDK. What the cursor accepts and the SDK reads otherwise, Read refuses
// itself: a member given twice (the cursor reads both, the SDK keeps the
// last), an escaped name (the SDK matches it unescaped), an escaped
// ErrorCode or ErrorMessage (the SDK unescapes it, lone surrogates as
// U+FFFD) and a null (the SDK reads it as no member).
func (shape *AnswerShape) Read(body []byte, entry func(Entry)) bool {
	var c schemas.Cursor
	c.Reset(body, 0)
	if c.BeginObject() != nil {
		return false
	}
	var seen uint64
	for first := true; ; first = false {
		name, escaped, more, err := c.NextKey(first)
		switch {
		case err != nil || escaped:
			return false
		case !more:
			return c.End() == nil
		case string(name) == shape.List:
			if !once(&seen, 63) || !readEntries(&c, shape, entry) {
				return false
			}
		case !readMember(&c, name, shape.Members, &seen):
			return false
		}
	}
}

// readEntries reads the list of entries.
func readEntries(c *schemas.Cursor, shape *AnswerShape, entry func(Entry)) bool {
	if c.BeginArray() != nil {
		return false
	}
	for first := true; ; first = false {
		more, err := c.NextElem(first)
		if err != nil {
			return false
		}
		if !more {
			return true
		}
		e, ok := readEntry(c, shape)
		if !ok {
			return false
		}
		entry(e)
	}
}

// readEntry reads an entry.
func readEntry(c *schemas.Cursor, shape *AnswerShape) (e Entry, ok bool) {
	if c.BeginObject() != nil {
		return e, false
	}
	var seen uint64
	for first := true; ; first = false {
		name, escaped, more, err := c.NextKey(first)
		if err != nil || escaped {
			return e, false
		}
		if !more {
			return e, true
		}
		switch string(name) {
		case "ErrorCode":
			e.HasCode = true
			ok = once(&seen, 63) && readPlain(c, &e.Code)
		case "ErrorMessage":
			ok = once(&seen, 62) && readPlain(c, &e.Message)
		default:
			ok = readMember(c, name, shape.EntryMembers, &seen)
		}
		if !ok {
			return e, false
		}
	}
}

// readPlain reads into *raw a string without escapes.
func readPlain(c *schemas.Cursor, raw *[]byte) bool {
	s, escaped, err := c.ReadString()
	*raw = s
	return err == nil && !escaped
}

// readMember reads the value of the member name of an object: checked as
// its kind when members has it, once, and skipped otherwise.
func readMember(c *schemas.Cursor, name []byte, members []Member, seen *uint64) bool {
	for i, m := range members {
		if string(name) != m.Name {
			continue
		}
		if !once(seen, i) {
			return false
		}
		switch m.Kind {
		case String:
			_, _, err := c.ReadString()
			return err == nil
		case Int32:
			_, err := c.ReadInt32()
			return err == nil
		case Bool:
			return c.Peek() == schemas.JSONBool && c.ReadBool() == nil
		}
		return false
	}
	return c.Skip() == nil
}

// once reports whether bit is not in *seen yet, and adds it.
func once(seen *uint64, bit int) bool {
	if *seen&(1<<bit) != 0 {
		return false
	}
	*seen |= 1 << bit
	return true
}
