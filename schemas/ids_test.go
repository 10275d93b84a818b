package schemas_test

import (
	"strings"
	"testing"
	"time"

	"github.com/segmentio/ksuid"

	"github.com/sluicehq/sluice/schemas"
)

// TestIDsAscend checks that ids sort in the order they were made, within
// a second, when the clock stands still or steps back, and between two
// generators (two processes) by the time each was made.
func TestIDsAscend(t *testing.T) {
	base := time.Date(2026, 11, 24, 18, 0, 0, 500, time.UTC)
	ticks := []time.Duration{0, 0, 0, 1, 999_999_998, 999_999_998, -time.Second, 2 * time.Second, time.Millisecond}
	var i int
	ids := schemas.IDs{Now: func() time.Time { at := base.Add(ticks[i%len(ticks)]); i++; return at }}
	var last string
	var lastAt time.Time
	for range 3 * len(ticks) {
		id, at := ids.New(schemas.PrefixDestination)
		if err := schemas.CheckID(schemas.PrefixDestination, id); err != nil {
			t.Fatalf("New made %q: %v", id, err)
		}
		k, _ := ksuid.Parse(strings.TrimPrefix(id, schemas.PrefixDestination))
		if !k.Time().Equal(at.Truncate(time.Second)) {
			t.Fatalf("id %s holds the time %s, want %s", id, k.Time(), at.Truncate(time.Second))
		}
		if id <= last || at.Before(lastAt) {
			t.Fatalf("id %s (%s) made after %s (%s) does not sort after it", id, at, last, lastAt)
		}
		last, lastAt = id, at
	}

	// Two generators sort by the nanosecond each made its id in.
	clock := base
	a := schemas.IDs{Now: func() time.Time { return clock }}
	b := schemas.IDs{Now: func() time.Time { return clock }}
	var made []string
	for n := range 50 {
		clock = clock.Add(time.Microsecond)
		g := &a
		if n%3 == 0 {
			g = &b
		}
		id, _ := g.New(schemas.PrefixAPIKey)
		made = append(made, id)
	}
	for n := 1; n < len(made); n++ {
		if made[n] <= made[n-1] {
			t.Fatalf("id %d %s sorts before id %d %s, made a microsecond earlier by the other generator", n, made[n], n-1, made[n-1])
		}
	}
}
