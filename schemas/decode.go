package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/defaults"
)

// Limits of a batch of events, as the ingest API applies them.
const (
	DefaultMaxEvents     = 10_000  // events per batch
	DefaultMaxEventBytes = 1 << 20 // bytes per event, as sent
)

// ErrEmptyBatch is returned for a batch that holds no events.
var ErrEmptyBatch = errors.New("the body holds no events: send a JSON array of events, or one event per line with Content-Type: application/x-ndjson")

// LimitError is a batch, or one of its events, over a limit.
type LimitError struct {
	What  string // "events per request" or "bytes per event"
	Max   int    // the limit
	Got   int    // what the batch had (events), or the event's size
	Index int    // the event over the limit, or -1
}

// Error says which limit the batch or event is over, and what to do.
func (e *LimitError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("event %d is %d bytes; the limit is %d %s: split it or drop fields", e.Index, e.Got, e.Max, e.What)
	}
	return fmt.Sprintf("the request holds more than %d events; the limit is %d %s: send several requests", e.Max, e.Max, e.What)
}

// EventError is an invalid event of a batch.
type EventError struct {
	Index int   // position of the event in the batch, from 0
	Err   error // *FieldError or *SyntaxError
}

// Error returns the index and the event's error.
func (e EventError) Error() string { return fmt.Sprintf("event %d: %v", e.Index, e.Err) }

// MarshalJSON encodes the error as {"index": n, "error": "..."}.
func (e EventError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Index int    `json:"index"`
		Error string `json:"error"`
	}{e.Index, e.Err.Error()})
}

// DecodeOptions say whose events a batch holds and how it is framed.
type DecodeOptions struct {
	// AccountID is the account of every event (from the API key). An event
	// may repeat it in account_id; another account is an error.
	AccountID string
	// NDJSON frames the batch as one event per line instead of a JSON array.
	NDJSON bool
	// MaxEvents and MaxEventBytes default to DefaultMaxEvents and DefaultMaxEventBytes.
	MaxEvents     int
	MaxEventBytes int
	// Now gives the time of events without event_timestamp, and the time
	// of ingestion the event window is counted from (MinEventTime,
	// MaxEventAhead); default time.Now. It is read once a batch.
	Now func() time.Time
}

func (o *DecodeOptions) setDefaults() {
	defaults.Positive(&o.MaxEvents, DefaultMaxEvents)
	defaults.Positive(&o.MaxEventBytes, DefaultMaxEventBytes)
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Batch is a decoded batch: the valid events, encoded, and the invalid ones.
type Batch struct {
	Events []Encoded
	Errors []EventError
}

// DecodeBatch decodes, validates and encodes a batch of events as producers
// send them: each a JSON object with event_type and object, and optionally
// event_id, event_timestamp, account_id and principal. Invalid events are
// listed in Batch.Errors with their index, and the others still decoded, so
// that a caller can report every problem at once.
//
// It returns a *SyntaxError when a JSON array batch is malformed, a
// *LimitError when the batch or an event is over its limit, or ErrEmptyBatch.
func (c *Catalogue) DecodeBatch(body []byte, opts DecodeOptions) (Batch, error) {
	opts.setDefaults()
	d := decoder{c: c, opts: opts, arena: make([]byte, 0, len(body)+len(body)/4+256)}
	d.v.now = opts.Now()
	var err error
	if opts.NDJSON {
		err = d.ndjson(body)
	} else {
		err = d.array(body)
	}
	if err != nil {
		return Batch{}, err
	}
	if len(d.batch.Events)+len(d.batch.Errors) == 0 {
		return Batch{}, ErrEmptyBatch
	}
	return d.batch, nil
}

type decoder struct {
	c     *Catalogue
	opts  DecodeOptions
	v     validator
	arena []byte // backing store of the encoded events
	batch Batch
	ids   map[string]int // ids given by the producer, to the event's index
}

func (d *decoder) add(i int, ev Encoded, fieldErr error) error {
	if i >= d.opts.MaxEvents {
		return &LimitError{What: "events per request", Max: d.opts.MaxEvents, Index: -1}
	}
	if fieldErr == nil && ev.givenID {
		if first, dup := d.ids[ev.ID]; dup {
			fieldErr = &FieldError{Path: "event_id", Msg: fmt.Sprintf("%s repeats the id of event %d of the batch; each event needs its own id", ev.ID, first)}
		} else {
			if d.ids == nil {
				d.ids = map[string]int{}
			}
			d.ids[ev.ID] = i
		}
	}
	if fieldErr != nil {
		d.batch.Errors = append(d.batch.Errors, EventError{Index: i, Err: fieldErr})
		return nil
	}
	d.batch.Events = append(d.batch.Events, ev)
	return nil
}

func (d *decoder) array(body []byte) error {
	s := &d.v.s
	s.resetChecking(body)
	switch k := s.Peek(); k {
	case JSONArray:
	case JSONObject:
		return &SyntaxError{Offset: s.pos, Msg: "the body is a single JSON object: wrap events in a JSON array, or send NDJSON with Content-Type: application/x-ndjson"}
	default:
		return s.unexpected("a JSON array of events")
	}
	if err := s.BeginArray(); err != nil {
		return err
	}
	for i, first := 0, true; ; i, first = i+1, false {
		ok, err := s.NextElem(first)
		if err != nil {
			return err
		}
		if !ok {
			return s.End()
		}
		ev, fieldErr, err := d.event(i)
		if err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
		if err := d.add(i, ev, fieldErr); err != nil {
			return err
		}
	}
}

func (d *decoder) ndjson(body []byte) error {
	i := 0
	for len(body) > 0 {
		line := body
		if nl := bytes.IndexByte(body, '\n'); nl >= 0 {
			line, body = body[:nl], body[nl+1:]
		} else {
			body = nil
		}
		line = trimJSONSpace(line)
		if len(line) == 0 {
			continue
		}
		d.v.s.resetChecking(line)
		ev, fieldErr, err := d.event(i)
		if err == nil {
			err = d.v.s.End()
		}
		if err != nil {
			var limit *LimitError
			if errors.As(err, &limit) {
				return err
			}
			fieldErr = err // a malformed line is one bad event
		}
		if err := d.add(i, ev, fieldErr); err != nil {
			return err
		}
		i++
	}
	return nil
}

// envelope holds the raw parts of an event while it is decoded.
// Envelope members, as bits of envelope.seen.
const (
	seenType = 1 << iota
	seenID
	seenTimestamp
	seenAccount
	seenPrincipal
	seenObject
)

var envelopeMembers = map[string]int{
	"event_type": seenType, "event_id": seenID, "event_timestamp": seenTimestamp,
	"account_id": seenAccount, "principal": seenPrincipal, "object": seenObject,
}

type envelope struct {
	seen                      int // members read so far
	kind                      *Kind
	id, ts, account           []byte
	idEscaped, tsEscaped      bool
	principal, object         []byte
	principalSet, objectSet   bool
	objectChecked, objSpaced  bool
	principalSpaced, typeSeen bool
	timestamp                 time.Time // parsed ts
}

// event decodes the event at the cursor. Type errors come back in
// fieldErr; syntax and limit errors in err.
func (d *decoder) event(index int) (ev Encoded, fieldErr error, err error) {
	v, s := &d.v, &d.v.s
	v.s.invalid, v.unknown = nil, 0
	s.pathRoot, s.pathBase = "", s.depth // paths start at the event
	if k := s.Peek(); k != JSONObject {
		if k == JSONInvalid {
			return ev, nil, s.unexpected("an event (a JSON object)")
		}
		v.fail("event", "each event must be a JSON object, got %s", k)
		return ev, v.s.invalid, s.Skip()
	}
	start := s.pos
	var e envelope
	if err := d.fields(&e); err != nil {
		return ev, nil, err
	}
	if size := s.pos - start; size > d.opts.MaxEventBytes {
		return ev, nil, &LimitError{What: "bytes per event", Max: d.opts.MaxEventBytes, Got: size, Index: index}
	}
	d.finish(&e)
	if v.s.invalid != nil {
		return ev, v.s.invalid, nil
	}
	return d.encode(&e), nil, nil
}

// fields walks the members of an event object.
func (d *decoder) fields(e *envelope) error {
	v, s := &d.v, &d.v.s
	if err := s.BeginObject(); err != nil {
		return err
	}
	for first := true; ; first = false {
		key, escaped, ok, err := s.NextKey(first)
		if err != nil || !ok {
			return err
		}
		if escaped {
			key = unescapeKey(key)
		}
		if bit := envelopeMembers[string(key)]; bit != 0 {
			if e.seen&bit != 0 {
				v.fail(string(key), "given twice in one event; give each field once")
			}
			e.seen |= bit
		}
		switch string(key) {
		case "event_type":
			err = d.eventType(e)
		case "event_id":
			e.id, e.idEscaped, err = d.optionalString("event_id")
		case "event_timestamp":
			e.ts, e.tsEscaped, err = d.optionalString("event_timestamp")
		case "account_id":
			e.account, _, err = d.optionalString("account_id")
		case "principal":
			s.SkipSpace()
			s.spaced = false
			p := s.pos
			if s.Peek() == JSONNull {
				err = s.ReadNull()
			} else {
				err = v.object(d.c.principal)
			}
			e.principal, e.principalSet, e.principalSpaced = s.data[p:s.pos], true, s.spaced
		case "object":
			s.SkipSpace()
			s.spaced = false
			p := s.pos
			if e.kind != nil {
				err = v.object(e.kind.root)
				e.objectChecked = true
			} else {
				err = s.Skip()
			}
			e.object, e.objectSet, e.objSpaced = s.data[p:s.pos], true, s.spaced
		default:
			v.fail(string(key), "unknown envelope field; an event has event_type and object, and optionally event_id, event_timestamp and principal")
			err = s.Skip()
		}
		if err != nil {
			return err
		}
	}
}

func (d *decoder) eventType(e *envelope) error {
	raw, escaped, err := d.optionalString("event_type")
	if err != nil || raw == nil {
		return err
	}
	e.typeSeen = true
	name := string(raw)
	if escaped {
		name = string(unescapeKey(raw))
	}
	k, ok := d.c.Kind(name)
	if !ok {
		hint := ""
		if near := d.c.Suggest(name, 3); len(near) > 0 {
			hint = "did you mean " + strings.Join(near, " or ") + "? "
		}
		d.v.fail("event_type", "%v %q: %ssee docs/events.md or `sluice schemas list` for the %d kinds", ErrUnknownKind, name, hint, len(d.c.kinds))
		return nil
	}
	if k.EmittedBySluice {
		d.v.failWith(emittedBySluiceError(k))
	}
	e.kind = k
	return nil
}

// optionalString consumes a string or null (returned as nil).
func (d *decoder) optionalString(field string) ([]byte, bool, error) {
	switch k := d.v.s.Peek(); k {
	case JSONString:
		return d.v.s.ReadString()
	case JSONNull:
		return nil, false, d.v.s.ReadNull()
	default:
		return nil, false, d.v.mismatch(field, "a string", k)
	}
}

// finish checks what can only be checked once every member is read.
func (d *decoder) finish(e *envelope) {
	v := &d.v
	if !e.typeSeen {
		v.fail("event_type", "missing: every event needs its kind, such as \"http_request_complete.v0\"")
	}
	if !e.objectSet || bytes.Equal(e.object, []byte("null")) {
		v.fail("object", "missing: every event needs its object, a JSON object of the kind's fields")
	}
	if v.s.invalid != nil || e.kind == nil {
		return
	}
	if !e.objectChecked {
		sub := validator{now: v.now}
		sub.s.resetChecking(e.object)
		sub.s.pathRoot = e.kind.root.path
		_ = sub.object(e.kind.root) // syntax was checked when the object was skipped
		v.unknown += sub.unknown
		if sub.s.invalid != nil && v.s.invalid == nil {
			v.s.invalid = sub.s.invalid
		}
	}
	if e.principalSet && e.kind.Class == ClassTraffic && !bytes.Equal(e.principal, []byte("null")) {
		v.fail("principal", "must be null for traffic events; only audit events have a principal")
	}
	if e.id != nil && (e.idEscaped || CheckID(PrefixEvent, string(e.id)) != nil) {
		v.fail("event_id", "expected \"ev_\" followed by a 27-character KSUID, got %q; omit it and sluice makes one", e.id)
	}
	if e.account != nil && string(e.account) != d.opts.AccountID {
		v.fail("account_id", "%q is not the API key's account; omit it, sluice sets it from the key", e.account)
	}
	if e.ts != nil {
		var err error
		if e.timestamp, err = parseTimestamp(e.ts, e.tsEscaped); err != nil {
			v.fail("event_timestamp", "%v", err)
		} else {
			v.checkWindow("event_timestamp", e.timestamp)
		}
	}
}

func parseTimestamp(raw []byte, escaped bool) (time.Time, error) {
	t, err := ParseEventTime(raw)
	if escaped || err != nil || !isTimestamp(raw) {
		return time.Time{}, fmt.Errorf("expected an RFC 3339 timestamp such as 2026-11-22T10:04:05.123Z, got %q", raw)
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("year %d is out of range (1 to 9999 in UTC)", y)
	}
	return t, nil
}

// encode writes the valid event into the arena.
func (d *decoder) encode(e *envelope) Encoded {
	ev := Event{Type: e.kind.Name, AccountID: d.opts.AccountID}
	if e.id != nil {
		ev.ID = string(e.id)
	} else {
		ev.ID = NewID(PrefixEvent)
	}
	if e.ts != nil {
		ev.Timestamp = e.timestamp
	} else {
		ev.Timestamp = d.opts.Now()
	}
	ev.Object = e.object
	if e.objSpaced {
		ev.Object = compact(e.object)
	}
	if e.principalSet && !bytes.Equal(e.principal, []byte("null")) {
		ev.Principal = e.principal
		if e.principalSpaced {
			ev.Principal = compact(e.principal)
		}
	}
	start := len(d.arena)
	d.arena = ev.AppendJSON(d.arena)
	return Encoded{
		ID:            ev.ID,
		Type:          ev.Type,
		AccountID:     ev.AccountID,
		Data:          d.arena[start:len(d.arena):len(d.arena)],
		UnknownFields: d.v.unknown,
		givenID:       e.id != nil,
	}
}

// Encode validates an event built in Go and returns it in its stored form. An
// empty ID gets a new one and a zero Timestamp the current time. Unknown
// fields of the object and the principal are kept and counted. It returns
// an error wrapping ErrUnknownKind for an unknown Type, a *FieldError
// wrapping ErrEmittedBySluice for a kind only sluice emits
// (Kind.EmittedBySluice), a *FieldError for a field of the wrong type or
// a value JSON readers read differently (see ValidateObject), or a
// *SyntaxError for malformed Object or Principal JSON.
func (c *Catalogue) Encode(ev Event) (Encoded, error) {
	k, ok := c.Kind(ev.Type)
	if !ok {
		return Encoded{}, fmt.Errorf("event_type %q: %w", ev.Type, ErrUnknownKind)
	}
	if k.EmittedBySluice {
		return Encoded{}, emittedBySluiceError(k)
	}
	return c.encode(k, ev)
}

// encode validates ev, of kind k, and returns it in its stored form.
func (c *Catalogue) encode(k *Kind, ev Event) (Encoded, error) {
	if err := CheckID(PrefixAccount, ev.AccountID); err != nil {
		return Encoded{}, &FieldError{Path: "account_id", Msg: err.Error()}
	}
	if ev.ID == "" {
		ev.ID = NewID(PrefixEvent)
	} else if err := CheckID(PrefixEvent, ev.ID); err != nil {
		return Encoded{}, &FieldError{Path: "event_id", Msg: err.Error()}
	}
	if ev.Timestamp.IsZero() {
		ev.Timestamp = time.Now()
	} else if y := ev.Timestamp.UTC().Year(); y < 1 || y > 9999 {
		return Encoded{}, &FieldError{Path: "event_timestamp", Msg: fmt.Sprintf("year %d is out of range (1 to 9999 in UTC)", y)}
	}
	var v validator
	if len(ev.Principal) > 0 && !bytes.Equal(bytes.TrimSpace(ev.Principal), []byte("null")) {
		if k.Class == ClassTraffic {
			return Encoded{}, &FieldError{Path: "principal", Msg: "must be null for traffic events; only audit events have a principal"}
		}
		var err error
		if ev.Principal, err = v.check(ev.Principal, c.principal); err != nil {
			return Encoded{}, err
		}
	} else {
		ev.Principal = nil
	}
	if len(bytes.TrimSpace(ev.Object)) == 0 {
		return Encoded{}, &FieldError{Path: "object", Msg: "missing: every event needs its object, a JSON object of the kind's fields"}
	}
	obj, err := v.check(ev.Object, k.root)
	if err != nil {
		return Encoded{}, err
	}
	ev.Object = obj
	return Encoded{
		ID:            ev.ID,
		Type:          k.Name,
		AccountID:     ev.AccountID,
		Data:          ev.AppendJSON(make([]byte, 0, len(ev.Object)+len(ev.Principal)+envelopeOverhead)),
		UnknownFields: v.unknown,
	}, nil
}

// check validates one JSON object against root and returns it compact.
func (v *validator) check(data []byte, root *node) ([]byte, error) {
	v.s.resetChecking(data)
	v.s.pathRoot = root.path
	if err := v.object(root); err != nil {
		return nil, err
	}
	if err := v.s.End(); err != nil {
		return nil, err
	}
	if v.s.invalid != nil {
		return nil, v.s.invalid
	}
	if v.s.spaced {
		return compact(data), nil
	}
	return data, nil
}

// trimJSONSpace cuts JSON whitespace (space, tab, CR, LF) from both ends;
// bytes.TrimSpace would also cut characters JSON does not count as space.
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
