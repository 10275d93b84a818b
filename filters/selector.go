package filters

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/schemas"
)

// ErrWrongKind means an event was given to the Selector of a source of
// another kind.
var ErrWrongKind = errors.New("event of another kind than the source's")

// Source is what a Selector is built from: a source of an event
// subscription, as the store keeps it.
type Source struct {
	// Kind is the event kind, such as "http_request_complete.v0".
	Kind string
	// Filter is a CEL expression an event must match; "" takes every
	// event.
	Filter string
	// Fields are the dotted paths of the fields kept; empty keeps every
	// field.
	Fields []string
}

// The literal bytes after the header, as AppendJSON writes them.
const (
	litPrincipal = `,"principal":`
	litObject    = `,"object":`
)

// objectStart moves c, reading data, to the object's value in an envelope
// whose header is h, past the principal, which it skips.
func objectStart(c *schemas.Cursor, data []byte, h schemas.HeaderSpans) error {
	c.Reset(data, h.End)
	if !c.Consume(litPrincipal) {
		return fmt.Errorf("%w: expected principal at offset %d", schemas.ErrMalformedEvent, c.Pos())
	}
	if err := c.SkipTrusted(); err != nil {
		return err
	}
	if !c.Consume(litObject) {
		return fmt.Errorf("%w: expected object at offset %d", schemas.ErrMalformedEvent, c.Pos())
	}
	return nil
}

// malformed returns err wrapping schemas.ErrMalformedEvent if it is the cursor's
// *schemas.SyntaxError, and err otherwise.
func malformed(err error) error {
	if _, ok := errors.AsType[*schemas.SyntaxError](err); ok {
		return fmt.Errorf("%w: %w", schemas.ErrMalformedEvent, err)
	}
	return err
}

// Selector turns a stored event of one source's kind into the record the
// source's route delivers: it evaluates the source's filter and keeps only
// the selected fields. Build one per route and version of the source with
// NewSelector; it is not safe for concurrent use (it reuses the filter's
// field values and its JSON cursor), so each worker has its own.
//
// An event the source takes whole (no filter, no fields) is not decoded at
// all. A filter reads only the fields it references, and stops reading the
// event once it has them all and the rest cannot name them again. A field
// selection copies the selected subtrees as they are stored, skipping the
// rest without decoding it.
type Selector struct {
	kind string
	// program is the source's filter, or nil; fields holds the values it
	// reads, refilled for each event.
	program *Program
	fields  *Fields
	// filterPlan holds the paths of the fields the filter reads, with
	// their index in slots; nil without a filter.
	filterPlan *planNode
	slots      []fieldSlot
	// nameBytes are the bytes the names of filterPlan's nodes are made
	// of: what an escaped name of one of them holds (see mayNameAgain).
	nameBytes [utf8.RuneSelf]bool
	// selectPlan holds the selected paths; nil when every field is kept.
	selectPlan *planNode
	// walk counts the walks of an object along a plan, to tell the
	// members met in this one (planNode.seen) from those of the last.
	walk uint64
	// cursor reads the events, reused from one to the next.
	cursor schemas.Cursor
}

// quotedName is the name of a plan's node between quotes, as a member
// gives it when it needs no escape, with the index in it of the byte to
// look for first: the one least common in events.
type quotedName struct {
	quoted []byte
	anchor int
}

// commonBytes are the bytes of events' JSON, roughly the most common
// first; the others are rarer still.
const commonBytes = `"etaonisrh:,lcdupm_0.1/-2gfywb{}vk3456789x[]jqz`

// newQuotedName returns the quoted name, anchored at its rarest byte.
func newQuotedName(name string) quotedName {
	q := quotedName{quoted: []byte(`"` + name + `"`), anchor: 1}
	rank := -1
	for i := 1; i <= len(name); i++ {
		r := strings.IndexByte(commonBytes, q.quoted[i])
		if r < 0 {
			r = len(commonBytes)
		}
		if r > rank {
			q.anchor, rank = i, r
		}
	}
	return q
}

// in reports whether data holds the quoted name, looking for its rarest
// byte with bytes.IndexByte (vectorised, unlike bytes.Index's search for a
// pattern that starts with a quote, of which events are full).
func (q *quotedName) in(data []byte) bool {
	b := q.quoted[q.anchor]
	for i := q.anchor; i < len(data); i++ {
		j := bytes.IndexByte(data[i:], b)
		if j < 0 {
			return false
		}
		i += j
		// The quotes around it first: cheaper than comparing it all.
		if end := i - q.anchor + len(q.quoted); end <= len(data) && data[end-1] == '"' && data[i-q.anchor] == '"' &&
			string(data[i-q.anchor:end]) == string(q.quoted) {
			return true
		}
	}
	return false
}

// fieldSlot is a filterable field the filter reads.
type fieldSlot struct {
	path string
	kind valueKind
}

// valueKind is how a filterable field's JSON value is read.
type valueKind uint8

const (
	valueString valueKind = iota + 1
	valueInt
	valueUint
	valueDouble
	valueBool
	valueTimestamp
)

// planNode is one level of a path tree: the members of an object that
// matter, by name.
type planNode struct {
	name     string
	path     string // the dotted path from the object, for errors
	children []*planNode
	// seen is the walk (Selector.walk) that last met this member: the
	// walk that meets it again has it twice in one object.
	seen uint64
	// outer are the names of the children of the nodes above this one,
	// each once (in a filter plan): the names the objects still open
	// when this node's object ends may give again.
	outer []quotedName
	// whole marks a selected field or group (in a selection plan): its
	// value is copied as it is.
	whole bool
	// slot is the index of the filterable field (in a filter plan), or -1.
	slot int
}

// NewSelector returns the selector of a source. An empty src.Fields keeps
// every field, and an empty src.Filter every event; src.Fields need not be
// normalized (Normalize), as it is here. The filter's program comes from cache, compiled
// once however many routes share it; env checks the field selection.
//
// NewSelector returns the errors of Cache.Program and
// Env.CheckFields: ErrUnknownKind, ErrNotTraffic,
// a *CompileError or a *FieldError.
func NewSelector(env *Env, cache *Cache, src Source) (*Selector, error) {
	if src.Kind == "" {
		return nil, errors.New("source without an event kind")
	}
	s := &Selector{kind: src.Kind}
	if src.Filter != "" {
		if cache == nil {
			return nil, fmt.Errorf("source %s has a filter but no filter cache was given", src.Kind)
		}
		p, err := cache.Program(src.Kind, src.Filter)
		if err != nil {
			return nil, fmt.Errorf("filter of %s: %w", src.Kind, err)
		}
		if err := s.planFilter(p); err != nil {
			return nil, err
		}
	}
	if len(src.Fields) > 0 {
		if env == nil {
			return nil, fmt.Errorf("source %s selects fields but no filter environment was given", src.Kind)
		}
		if err := env.CheckFields(src.Kind, src.Fields); err != nil {
			return nil, fmt.Errorf("fields of %s: %w", src.Kind, err)
		}
		s.selectPlan = &planNode{slot: -1}
		for _, path := range Normalize(src.Fields) {
			s.selectPlan.add(path).whole = true
		}
	}
	return s, nil
}

// nextWalk starts a walk of an event's object along a plan, and returns
// its number.
func (s *Selector) nextWalk() uint64 {
	s.walk++
	return s.walk
}

// planFilter prepares the reading of the fields the program references,
// finding the type of each by the setter its Fields accepts.
func (s *Selector) planFilter(p *Program) error {
	s.program = p
	s.fields = p.NewFields()
	s.filterPlan = &planNode{slot: -1}
	for _, path := range p.Fields() {
		kind, err := probeKind(s.fields, path)
		if err != nil {
			return fmt.Errorf("filter of %s: %w", s.kind, err)
		}
		s.filterPlan.add(path).slot = len(s.slots)
		s.slots = append(s.slots, fieldSlot{path: path, kind: kind})
	}
	s.fields.Reset()
	s.filterPlan.setOuter(nil, &s.nameBytes)
	return nil
}

// setOuter sets the outer names of the nodes below n, n's being outer, and
// marks the bytes of their names in nameBytes.
func (n *planNode) setOuter(outer []quotedName, nameBytes *[utf8.RuneSelf]bool) {
	n.outer = outer
	inner := slices.Clip(outer)
	for _, c := range n.children {
		if !slices.ContainsFunc(inner, func(q quotedName) bool { return string(q.quoted[1:len(q.quoted)-1]) == c.name }) {
			inner = append(inner, newQuotedName(c.name))
		}
		for i := range len(c.name) {
			// An escape of a rune past ASCII is always suspect.
			if c.name[i] < utf8.RuneSelf {
				nameBytes[c.name[i]] = true
			}
		}
	}
	for _, c := range n.children {
		c.setOuter(inner, nameBytes)
	}
}

// probeKind returns how the field at path is read, from the setter of f
// that accepts it.
func probeKind(f *Fields, path string) (valueKind, error) {
	switch {
	case f.SetString(path, "") == nil:
		return valueString, nil
	case f.SetInt(path, 0) == nil:
		return valueInt, nil
	case f.SetUint(path, 0) == nil:
		return valueUint, nil
	case f.SetDouble(path, 0) == nil:
		return valueDouble, nil
	case f.SetBool(path, false) == nil:
		return valueBool, nil
	case f.SetTimestamp(path, time.Time{}) == nil:
		return valueTimestamp, nil
	}
	return 0, fmt.Errorf("field %s: %w", path, ErrNotFilterable)
}

// add returns the node of the dotted path under n, adding the missing ones.
func (n *planNode) add(path string) *planNode {
	for name := range strings.SplitSeq(path, ".") {
		next := n.child(name)
		if next == nil {
			next = &planNode{name: name, path: name, slot: -1}
			if n.path != "" {
				next.path = n.path + "." + name
			}
			n.children = append(n.children, next)
		}
		n = next
	}
	return n
}

// meet marks the member of n met in the walk, and returns an error wrapping
// schemas.ErrMalformedEvent, naming its path, if the walk met it before: its object
// gives its name twice.
func (n *planNode) meet(walk uint64) error {
	if n.seen == walk {
		return fmt.Errorf("%w: object.%s: the name appears twice in its object, and JSON readers keep either value, or both", schemas.ErrMalformedEvent, n.path)
	}
	n.seen = walk
	return nil
}

// child returns the child named name, or nil.
func (n *planNode) child(name string) *planNode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// childByKey returns the child named by an object key as it is written
// between its quotes, holding escapes or not, or nil.
func (n *planNode) childByKey(raw []byte, escaped bool) *planNode {
	for _, c := range n.children {
		if c.name == string(raw) {
			return c
		}
	}
	// A name of the plan never needs escaping, but may be escaped.
	if !escaped {
		return nil
	}
	name, ok := unquote(raw)
	if !ok {
		return nil
	}
	return n.child(name)
}

// unquote returns the value of a JSON string from its contents between the
// quotes, and whether they are valid.
func unquote(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	var s string
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	if json.Unmarshal(q, &s) != nil {
		return "", false
	}
	return s, true
}

// Select returns the envelope the route delivers for data, a stored event
// of the source's kind, appended to dst, and whether the source's filter
// keeps it. When the source takes the event whole it is data as stored:
// then, if dst is nil, Select returns data itself (with its capacity cut to
// its length) rather than a copy. When the filter rejects the event Select
// returns dst unchanged and false.
//
// The filter sees a field the event lacks, or holds as null, as missing:
// it has its zero value ("", 0, false, the Unix epoch; inCIDR of "" is
// false).
//
// An object that gives a member name twice reads differently to different
// readers (the first value, the last, or both), so Select refuses the event
// (schemas.ErrMalformedEvent, naming the path) when a member it reads is given
// twice: a field the filter reads or an object on its way there, and a
// member the field selection walks into or keeps. It does not look for
// repeated names where it reads nothing: in members the filter does not
// read of an event it delivers whole, in a kept group, or anywhere in an
// event the source takes whole. Those go out as they are stored, and the
// reader downstream sees the bytes sluice stored, with no value of sluice's
// own reading to disagree with.
//
// A field selection keeps the envelope's own fields, and of the object the
// selected fields and groups present in the event, nested under their
// parents, in the order they are stored; a group is kept with all it holds
// (fields the catalogue does not declare too), and a parent none of whose
// selected fields is present is left out.
//
// Select returns an error wrapping schemas.ErrMalformedEvent for bytes that are not
// a stored envelope or a member name given twice, ErrWrongKind for an event of another kind,
// ErrFieldTooLong for a field the filter reads that is longer than
// the catalogue allows (an event stored before validation enforced it: it
// is not evaluated, since the filter's cost estimate does not hold for it),
// or the filter's error (ErrCostLimit, ErrEvalTimeout,
// ctx's error, a runtime error), for which the filter could not decide: the
// caller dead-letters or counts the event rather than dropping it silently.
//
// Select trusts the stored JSON: events are validated when they are
// published. It never reads out of data's bounds on any input, but what it
// returns for invalid JSON is unspecified.
func (s *Selector) Select(ctx context.Context, data, dst []byte) (out []byte, keep bool, err error) {
	h, err := schemas.ScanHeader(data)
	if err != nil {
		return dst, false, err
	}
	return s.SelectScanned(ctx, data, h, dst)
}

// SelectScanned is Select of an event whose header the caller scanned
// already (schemas.ReadHeader), as the delivery engine does to pick the
// selector of its kind.
func (s *Selector) SelectScanned(ctx context.Context, data []byte, h schemas.HeaderSpans, dst []byte) (out []byte, keep bool, err error) {
	if kind := data[h.Type.Start:h.Type.End]; string(kind) != s.kind {
		return dst, false, fmt.Errorf("%w: %s event given to the selector of %s", ErrWrongKind, kind, s.kind)
	}
	if s.program == nil && s.selectPlan == nil {
		// Not read at all: a name given twice reaches the reader as
		// sluice stored it, and sluice decided nothing on either value.
		return whole(data, dst), true, nil
	}
	c := &s.cursor
	if err := objectStart(c, data, h); err != nil {
		return dst, false, malformed(err)
	}
	start := c.Pos()
	if s.program != nil {
		ok, err := s.match(ctx, data, start)
		if err != nil || !ok {
			return dst, false, malformed(err)
		}
	}
	if s.selectPlan == nil {
		return whole(data, dst), true, nil
	}
	out = append(dst, data[:start]...)
	c.Reset(data, start)
	out, _, err = project(c, data, s.selectPlan, s.nextWalk(), out)
	if err != nil {
		return dst, false, malformed(err)
	}
	if c.SkipSpace(); !c.Consume("}") {
		return dst, false, fmt.Errorf("%w: expected the envelope's closing brace at offset %d", schemas.ErrMalformedEvent, c.Pos())
	}
	if err := c.End(); err != nil {
		return dst, false, malformed(err)
	}
	return append(out, '}'), true, nil
}

// PassThrough reports whether the selector keeps every event whole: it
// reads nothing of it, and remembering what it made of one is no saving.
func (s *Selector) PassThrough() bool { return s.program == nil && s.selectPlan == nil }

// whole returns data appended to dst, or data itself when dst is nil.
func whole(data, dst []byte) []byte {
	if dst == nil {
		return data[:len(data):len(data)]
	}
	return append(dst, data...)
}

// match reads the fields the filter needs from the object at start and
// evaluates the filter.
func (s *Selector) match(ctx context.Context, data []byte, start int) (bool, error) {
	s.fields.Reset()
	r := fieldReader{s: s, data: data, walk: s.nextWalk(), missing: len(s.slots)}
	c := &s.cursor
	c.Reset(data, start)
	if r.missing > 0 {
		if _, err := r.object(c, s.filterPlan); err != nil {
			return false, err
		}
	}
	return s.program.Match(ctx, s.fields)
}

// fieldReader fills a Selector's field values from an event's object.
type fieldReader struct {
	s       *Selector
	data    []byte // the event
	walk    uint64 // this walk, for planNode.meet
	missing int    // fields not found yet
}

// object reads the fields of plan n from the object at the cursor,
// refusing a member of the plan given twice, to its end. It returns done
// when every field the filter needs is found and the rest of the event
// cannot give the name of a member of the objects still open again (see
// mayNameAgain): then they are read no further. Filterable fields are
// members of a small object (conn), so reading to its end costs little,
// and checks them all.
func (r *fieldReader) object(c *schemas.Cursor, n *planNode) (done bool, err error) {
	if err := c.BeginObject(); err != nil {
		return false, err
	}
	for first := true; ; first = false {
		key, escaped, ok, err := c.NextKey(first)
		if err != nil {
			return false, err
		}
		if !ok {
			return r.missing == 0 && !r.s.mayNameAgain(n.outer, r.data[c.Pos():]), nil
		}
		child := n.childByKey(key, escaped)
		if child != nil {
			if err := child.meet(r.walk); err != nil {
				return false, err
			}
		}
		switch {
		case child == nil:
			err = c.SkipTrusted()
		case child.slot >= 0:
			// Met once, so read once.
			err = r.leaf(c, child.slot)
		case c.Peek() == schemas.JSONObject:
			if done, err = r.object(c, child); done {
				return true, nil
			}
		default:
			// null, or not the object a validated event has: the
			// fields under it are missing.
			err = c.SkipTrusted()
		}
		if err != nil {
			return false, err
		}
	}
}

// leaf reads the value of the filterable field of slot i at the cursor.
func (r *fieldReader) leaf(c *schemas.Cursor, i int) error {
	start := c.Pos() // NextKey moved past the whitespace
	if err := c.SkipTrusted(); err != nil {
		return err
	}
	r.missing--
	raw := r.data[start:c.Pos()]
	if string(raw) == "null" {
		return nil
	}
	slot := &r.s.slots[i]
	if err := setField(r.s.fields, slot, raw); err != nil {
		if errors.Is(err, ErrFieldTooLong) {
			// Stored before validation had the limit: never evaluated.
			return fmt.Errorf("object.%s: %w", slot.path, err)
		}
		return fmt.Errorf("%w: object.%s: %v", schemas.ErrMalformedEvent, slot.path, err)
	}
	return nil
}

// mayNameAgain reports whether rest, the bytes of an event after the
// object that held the last field the filter reads, may hold one of names,
// those of the plan's nodes in the objects still open. Every node was met
// once by then (each is on the way to a field), so such a member would be a
// name given twice in an object the filter read. It answers from a search
// for each name between quotes, and for escapes (\u0063) that could spell
// one; true may be wrong (the name is in a string, or in an object the
// filter does not read), and then the reader reads on to find out. It does
// not allocate.
func (s *Selector) mayNameAgain(names []quotedName, rest []byte) bool {
	for i := range names {
		if names[i].in(rest) {
			return true
		}
	}
	for i := bytes.IndexByte(rest, '\\'); i >= 0 && i+1 < len(rest); {
		var b int
		switch rest[i+1] {
		case 'u':
			b = -1
			if i+6 <= len(rest) {
				if r, ok := schemas.HexValue(rest[i+2 : i+6]); ok {
					b = int(r)
				}
			}
		case 'b':
			b = '\b'
		case 'f':
			b = '\f'
		case 'n':
			b = '\n'
		case 'r':
			b = '\r'
		case 't':
			b = '\t'
		default: // '"', '\\', '/'
			b = int(rest[i+1])
		}
		if b < 0 || b >= utf8.RuneSelf || s.nameBytes[b] {
			return true
		}
		next := bytes.IndexByte(rest[i+2:], '\\')
		if next < 0 {
			break
		}
		i += 2 + next
	}
	return false
}

// setField sets the field of slot in f from its raw JSON value.
func setField(f *Fields, slot *fieldSlot, raw []byte) error {
	switch slot.kind {
	case valueString:
		if raw[0] != '"' {
			return errors.New("expected a string")
		}
		v, ok := unquote(raw[1 : len(raw)-1])
		if !ok {
			return errors.New("invalid string")
		}
		return f.SetString(slot.path, v)
	case valueTimestamp:
		if raw[0] != '"' {
			return errors.New("expected a string")
		}
		b := raw[1 : len(raw)-1]
		if bytes.IndexByte(b, '\\') >= 0 {
			// Validation refuses an escaped timestamp; read one stored
			// before it did as JSON reads it.
			v, ok := unquote(b)
			if !ok {
				return errors.New("invalid string")
			}
			b = []byte(v)
		}
		t, err := schemas.ParseEventTime(b)
		if err != nil {
			return err
		}
		return f.SetTimestamp(slot.path, t)
	case valueInt:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return errors.New("expected an integer")
		}
		return f.SetInt(slot.path, n)
	case valueUint:
		n, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			return errors.New("expected an unsigned integer")
		}
		return f.SetUint(slot.path, n)
	case valueDouble:
		x, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return errors.New("expected a number")
		}
		return f.SetDouble(slot.path, x)
	case valueBool:
		switch string(raw) {
		case "true":
			return f.SetBool(slot.path, true)
		case "false":
			return f.SetBool(slot.path, false)
		}
		return errors.New("expected true or false")
	}
	return fmt.Errorf("field of unknown kind %d", slot.kind)
}

// project appends to out the object at the cursor, reading data, with
// only the members plan n selects, and returns how many it kept. A member
// of the plan given twice in one object, in walk, is an error (see
// planNode.meet); names are not compared inside a kept group, which is
// copied as it is stored.
func project(c *schemas.Cursor, data []byte, n *planNode, walk uint64, out []byte) ([]byte, int, error) {
	if err := c.BeginObject(); err != nil {
		return out, 0, err
	}
	out = append(out, '{')
	kept := 0
	for first := true; ; first = false {
		key, escaped, ok, err := c.NextKey(first)
		if err != nil {
			return out, kept, err
		}
		if !ok {
			return append(out, '}'), kept, nil
		}
		child := n.childByKey(key, escaped)
		if child != nil {
			if err := child.meet(walk); err != nil {
				return out, kept, err
			}
		}
		switch {
		case child == nil:
			err = c.SkipTrusted()
		case child.whole:
			start := c.Pos() // NextKey moved past the whitespace
			if err = c.SkipTrusted(); err == nil {
				out = appendMember(out, kept, key)
				out = append(out, data[start:c.Pos()]...)
				kept++
			}
		case c.Peek() == schemas.JSONObject:
			// Some fields below are selected: keep the member if one of
			// them is there.
			mark := len(out)
			var inner int
			out, inner, err = project(c, data, child, walk, appendMember(out, kept, key))
			if inner == 0 {
				out = out[:mark]
			} else {
				kept++
			}
		default:
			// null, or not an object: no selected field is under it.
			err = c.SkipTrusted()
		}
		if err != nil {
			return out, kept, err
		}
	}
}

// appendMember appends the separator, if kept members come before, the key
// (its raw contents, as stored) between quotes, and the colon of a member.
func appendMember(out []byte, kept int, key []byte) []byte {
	if kept > 0 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, key...)
	return append(out, '"', ':')
}
