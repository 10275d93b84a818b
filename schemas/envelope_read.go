package schemas

import (
	"errors"
	"fmt"
	"time"
)

// ErrMalformedEvent means stored bytes are not an envelope as
// Event.AppendJSON writes it. Such an event can never be delivered.
var ErrMalformedEvent = errors.New("malformed stored event")

// Header is what delivery needs of a stored event besides its bytes: its
// ids, its kind and its time, parsed once.
type Header struct {
	// ID is the event_id.
	ID string
	// Type is the event_type, such as "http_request_complete.v0".
	Type string
	// Timestamp is the event_timestamp.
	Timestamp time.Time
	// AccountID is the account_id.
	AccountID string
}

// Span is the position of the contents of a string in an envelope:
// data[Start:End].
type Span struct{ Start, End int }

// HeaderSpans locates the header fields of a stored envelope.
type HeaderSpans struct {
	ID, Type, Timestamp, AccountID Span
	// End is just past account_id's value, where `,"principal":` starts.
	End int
}

// The literal bytes around the header fields, as AppendJSON writes them.
const (
	litEventID   = `{"event_id":"`
	litEventType = `","event_type":"`
	litTimestamp = `","event_timestamp":"`
	litAccountID = `","account_id":"`
)

// ScanHeader locates the header of a stored envelope, where
// Event.AppendJSON puts event_id, event_type, event_timestamp and
// account_id, in that order and compact. It reads nothing past account_id,
// so it costs the same for any size of event, and allocates nothing. Their
// values are ids, a kind name and a timestamp, which never need escaping:
// a backslash is malformed. It returns an error wrapping ErrMalformedEvent
// when the bytes do not start that way.
func ScanHeader(data []byte) (HeaderSpans, error) {
	var h HeaderSpans
	pos := 0
	field := func(lit, name string, s *Span) error {
		if len(data)-pos < len(lit) || string(data[pos:pos+len(lit)]) != lit {
			return fmt.Errorf("%w: expected %s at offset %d", ErrMalformedEvent, name, pos)
		}
		pos += len(lit)
		start := pos
		for ; pos < len(data) && data[pos] != '"'; pos++ {
			if data[pos] == '\\' {
				return fmt.Errorf("%w: %s is not a plain string", ErrMalformedEvent, name)
			}
		}
		if pos == len(data) {
			return fmt.Errorf("%w: %s is not a plain string", ErrMalformedEvent, name)
		}
		*s = Span{start, pos}
		return nil
	}
	// Four calls rather than a loop over a table of the fields: the table
	// would move h to the heap, an allocation per event.
	if err := field(litEventID, "event_id", &h.ID); err != nil {
		return HeaderSpans{}, err
	}
	if err := field(litEventType, "event_type", &h.Type); err != nil {
		return HeaderSpans{}, err
	}
	if err := field(litTimestamp, "event_timestamp", &h.Timestamp); err != nil {
		return HeaderSpans{}, err
	}
	if err := field(litAccountID, "account_id", &h.AccountID); err != nil {
		return HeaderSpans{}, err
	}
	h.End = pos + 1 // past the closing quote
	return h, nil
}

// ReadHeader reads the header of a stored envelope (see ScanHeader),
// parsing its timestamp, and returns where its fields are. It makes one
// allocation, for the three strings. It returns an error wrapping
// ErrMalformedEvent when the bytes do not start as AppendJSON writes an
// envelope or the timestamp is not RFC 3339.
//
// Whatever AppendJSON writes of an event whose ids and kind need no JSON
// escaping (every validated event's) and whose time is within years 0 to
// 9999, ReadHeader reads back: the same ids and kind, and the time in UTC
// to the millisecond.
func ReadHeader(data []byte) (Header, HeaderSpans, error) {
	h, err := ScanHeader(data)
	if err != nil {
		return Header{}, HeaderSpans{}, err
	}
	ts, err := ParseEventTime(data[h.Timestamp.Start:h.Timestamp.End])
	if err != nil {
		return Header{}, HeaderSpans{}, fmt.Errorf("%w: event_timestamp: %v", ErrMalformedEvent, err)
	}
	// One string holds the id, the type and the account id.
	all := string(data[h.ID.Start:h.AccountID.End])
	at := func(s Span) string { return all[s.Start-h.ID.Start : s.End-h.ID.Start] }
	return Header{ID: at(h.ID), Type: at(h.Type), Timestamp: ts, AccountID: at(h.AccountID)}, h, nil
}

// ParseEventTime parses a timestamp of an event: its event_timestamp, as
// stored or as published, or a field of its object of TypeTimestamp. The
// catalogue gives both as RFC 3339, which ParseEventTime reads as
// time.Parse(time.RFC3339Nano, string(b)) does, with the same result and
// the same error. AppendJSON always writes TimeLayout, and sluice's own
// events' object timestamps have it too: that is parsed by hand, without
// allocating; anything else goes to time.Parse.
func ParseEventTime(b []byte) (time.Time, error) {
	const layout = TimeLayout
	if len(b) == len(layout) && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' &&
		b[16] == ':' && b[19] == '.' && b[23] == 'Z' {
		year, month, day := decimal(b[0:4]), decimal(b[5:7]), decimal(b[8:10])
		hour, minute, sec, milli := decimal(b[11:13]), decimal(b[14:16]), decimal(b[17:19]), decimal(b[20:23])
		// Days past the 28th may not exist: time.Parse checks them.
		if year >= 0 && 1 <= month && month <= 12 && 1 <= day && day <= 28 &&
			0 <= hour && hour < 24 && 0 <= minute && minute < 60 && 0 <= sec && sec < 60 && milli >= 0 {
			return time.Date(year, time.Month(month), day, hour, minute, sec, milli*int(time.Millisecond), time.UTC), nil
		}
	}
	return time.Parse(time.RFC3339Nano, string(b))
}

// decimal returns the value of the digits b, or -1 if b holds another byte.
func decimal(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
