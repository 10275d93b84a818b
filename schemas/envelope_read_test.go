package schemas

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzEnvelopeRoundTrip checks that ReadHeader reads back what AppendJSON
// writes: the same ids and kind, the time in UTC to the millisecond, and
// the principal right after the header. An id or kind JSON must escape,
// which no validated event has, is refused with ErrMalformedEvent, never
// read as something else.
func FuzzEnvelopeRoundTrip(f *testing.F) {
	sampler := NewSampler(1)
	for _, kind := range []string{"http_request_complete.v0", "tcp_connection_closed.v0", "event_destination_created.v0"} {
		ev, err := sampler.Event(kind)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(ev.ID, ev.Type, ev.AccountID, ev.Timestamp.UnixMilli(), ev.Timestamp.Nanosecond(), []byte(ev.Principal), []byte(ev.Object))
	}
	f.Add("", "", "", int64(0), 0, []byte(nil), []byte(nil))
	f.Add(`ev_"1`, "x", "ac_1", int64(-62167219200000), 999999999, []byte(`null`), []byte(`{}`))
	f.Add("ev_1", `a\b`, "ac_é", int64(253402300799999), 1, []byte(`{"id":"x"}`), []byte(`{"a":1}`))
	minMillis := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	maxMillis := time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli()
	f.Fuzz(func(t *testing.T, id, kind, account string, millis int64, nanos int, principal, object []byte) {
		// Any time within years 0 to 9999, with any nanoseconds, in any zone.
		millis = minMillis + (millis%(maxMillis-minMillis+1)+(maxMillis-minMillis+1))%(maxMillis-minMillis+1)
		ts := time.UnixMilli(millis).Add(time.Duration(nanos%1e6+1e6) % 1e6).In(time.FixedZone("", (nanos%24)*3600))
		ev := Event{ID: id, Type: kind, Timestamp: ts, AccountID: account, Principal: principal, Object: object}
		data := ev.AppendJSON(nil)
		h, spans, err := ReadHeader(data)
		plain := !needsEscape(id) && !needsEscape(kind) && !needsEscape(account)
		if !plain {
			if err == nil && (h.ID != id || h.Type != kind || h.AccountID != account) {
				t.Fatalf("ReadHeader(%s) = %+v, not what was written", data, h)
			}
			if err != nil && !errors.Is(err, ErrMalformedEvent) {
				t.Fatalf("ReadHeader(%s) = %v, want ErrMalformedEvent", data, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("ReadHeader(%s): %v", data, err)
		}
		want := Header{ID: id, Type: kind, Timestamp: ts.Truncate(time.Millisecond).UTC(), AccountID: account}
		if !reflect.DeepEqual(h, want) {
			t.Fatalf("ReadHeader(%s) = %+v, want %+v", data, h, want)
		}
		if rest := string(data[spans.End:]); !strings.HasPrefix(rest, `,"principal":`) {
			t.Fatalf("the header of %s ends at %d, before %.20q", data, spans.End, rest)
		}
		if scanned, err := ScanHeader(data); err != nil || scanned != spans {
			t.Fatalf("ScanHeader = %+v, %v; ReadHeader's spans %+v", scanned, err, spans)
		}
	})
}

// needsEscape reports whether appendString escapes s.
func needsEscape(s string) bool {
	return string(appendString(nil, s)) != `"`+s+`"`
}

// TestReadHeaderAllocations checks the cost the docs promise, per event on
// the delivery path: ScanHeader allocates nothing, ReadHeader once.
func TestReadHeaderAllocations(t *testing.T) {
	ev, err := NewSampler(1).Event("http_request_complete.v0")
	if err != nil {
		t.Fatal(err)
	}
	data := ev.AppendJSON(nil)
	if n := testing.AllocsPerRun(100, func() { _, _ = ScanHeader(data) }); n != 0 {
		t.Errorf("ScanHeader allocates %v times, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _, _ = ReadHeader(data) }); n != 1 {
		t.Errorf("ReadHeader allocates %v times, want 1", n)
	}
}

// FuzzParseEventTime checks that ParseEventTime, the one parser of events'
// timestamps, reads any text as time.Parse(time.RFC3339Nano, ...) does,
// which the pipeline and the filters called before: the same time (in the
// same location) or the same error message. The seeds are the forms the
// catalogue accepts (isTimestamp) and near misses of the hand-parsed
// TimeLayout.
func FuzzParseEventTime(f *testing.F) {
	for _, seed := range []string{
		"2026-11-22T10:04:05.123Z", "2026-11-22T10:04:05Z", "2026-11-22T10:04:05.1Z", "2026-11-22T10:04:05.123456789Z",
		"2026-11-22T10:04:05.1234567891Z", "2026-11-22T10:04:05.123+02:00", "2026-11-22T10:04:05.123-00:30", "2026-11-22T10:04:05+00:00",
		"0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2024-02-29T12:00:00.000Z", "2026-02-29T12:00:00.000Z",
		"2026-04-31T12:00:00.000Z", "2026-01-28T12:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-00-10T00:00:00.000Z",
		"2026-11-00T00:00:00.000Z", "2026-11-22T24:00:00.000Z", "2026-11-22T23:60:00.000Z", "2026-11-22T23:59:60.000Z",
		"2026-11-22t10:04:05.123Z", "2026-11-22T10:04:05.123z", "2026-11-22T10:04:05,123Z", "2026-11-22T10:04:05.12aZ",
		"2026-11-22T10:04:05.-12Z", "+026-11-22T10:04:05.123Z", "2026-1-22T10:04:05.1234Z", "2026-11-22 10:04:05.123Z",
		"2026-11-22T10:04:05.123Z ", "", "Z", "2026-11-22T10:04:05.123+24:00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gotErr := ParseEventTime([]byte(s))
		want, wantErr := time.Parse(time.RFC3339Nano, s)
		switch {
		case (gotErr == nil) != (wantErr == nil):
			t.Fatalf("ParseEventTime(%q) = %v, %v; time.Parse = %v, %v", s, got, gotErr, want, wantErr)
		case gotErr != nil && gotErr.Error() != wantErr.Error():
			t.Fatalf("ParseEventTime(%q) refuses with %q; time.Parse with %q", s, gotErr, wantErr)
		case !sameTime(got, want):
			t.Fatalf("ParseEventTime(%q) = %v (%s); time.Parse = %v (%s)", s, got, got.Location(), want, want.Location())
		}
	})
}

// sameTime reports whether a and b are the same instant in the same
// location: the same *time.Location for UTC and Local, the same name and
// offset for a fixed zone (time.Parse makes a new one each time).
func sameTime(a, b time.Time) bool {
	an, ao := a.Zone()
	bn, bo := b.Zone()
	shared := func(l *time.Location) bool { return l == time.UTC || l == time.Local }
	if shared(a.Location()) || shared(b.Location()) {
		return a == b
	}
	return a.Equal(b) && an == bn && ao == bo
}

// TestParseEventTimeAllocations checks that TimeLayout, which AppendJSON
// writes, is parsed without allocating.
func TestParseEventTimeAllocations(t *testing.T) {
	b := []byte("2026-11-22T10:04:05.123Z")
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseEventTime(b) }); n != 0 {
		t.Errorf("ParseEventTime allocates %v times, want 0", n)
	}
}
