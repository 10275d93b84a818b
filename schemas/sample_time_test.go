package schemas

import (
	"bytes"
	"regexp"
	"testing"
	"time"
)

// sampleTimes matches the times a sample event holds: timestamps, and the
// Date header of an HTTP response.
var sampleTimes = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|[a-z]{3}, \d\d [a-z]{3} \d{4} \d\d:\d\d:\d\d gmt`)

// withoutTimes returns the envelope of ev with its times blanked out.
func withoutTimes(t *testing.T, ev Event) []byte {
	t.Helper()
	doc, err := ev.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	return sampleTimes.ReplaceAll(doc, []byte("TIME"))
}

// TestSamplerClock checks that SampleClock dates each event at the clock's
// time, less under a second, and that SampleStart dates event n n seconds
// after the start; and that the same seed makes the same events, ids
// included, whatever the dates.
func TestSamplerClock(t *testing.T) {
	now := time.Date(2031, time.March, 4, 5, 6, 7, 0, time.UTC)
	start := time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)
	plain := NewSampler(7)
	clocked := NewSampler(7, SampleClock(func() time.Time { return now }))
	started := NewSampler(7, SampleStart(start))
	for round := range 3 {
		for i, kind := range Default().Names() {
			n := round*len(Default().Names()) + i + 1
			a, _ := plain.Event(kind)
			b, _ := clocked.Event(kind)
			c, _ := started.Event(kind)
			if b.Timestamp.After(now) || b.Timestamp.Before(now.Add(-time.Second)) {
				t.Fatalf("%s: with the clock at %s, dated %s, want within the second before", kind, now, b.Timestamp)
			}
			if from := start.Add(time.Duration(n) * time.Second); c.Timestamp.Before(from) || !c.Timestamp.Before(from.Add(time.Second)) {
				t.Fatalf("%s, event %d: starting at %s, dated %s, want within the second from %s", kind, n, start, c.Timestamp, from)
			}
			if a.ID != b.ID || a.ID != c.ID {
				t.Fatalf("%s: ids %s, %s and %s of one seed differ", kind, a.ID, b.ID, c.ID)
			}
			x, y, z := withoutTimes(t, a), withoutTimes(t, b), withoutTimes(t, c)
			if !bytes.Equal(x, y) || !bytes.Equal(x, z) {
				t.Fatalf("%s: events of one seed differ in more than their times:\n%s\n%s\n%s", kind, x, y, z)
			}
			if doc, _ := b.MarshalJSON(); bytes.Contains(doc, []byte("2026-11")) || bytes.Contains(doc, []byte("nov 2026")) {
				t.Fatalf("%s: dated by the clock, the event still holds a time of November 2026:\n%s", kind, doc)
			}
		}
	}
}
