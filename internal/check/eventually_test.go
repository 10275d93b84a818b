package check_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
)

// recorder is a testing.TB that records Fatalf instead of stopping the
// test, so that the failure of Eventually can be checked.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = fmt.Sprintf(format, args...)
}

func TestEventuallyReturnsWhenDone(t *testing.T) {
	start := time.Now()
	calls := 0
	got := check.Eventually(t, 10*time.Second, "the third call", func() (int, bool) {
		calls++
		return calls, calls == 3
	})
	if got != 3 {
		t.Fatalf("Eventually = %d, want the observation that was done, 3", got)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("Eventually took %s for three polls", elapsed)
	}
}

func TestEventuallyFailsWithLastObservation(t *testing.T) {
	r := &recorder{TB: t}
	calls := 0
	start := time.Now()
	check.Eventually(r, 100*time.Millisecond, "five records", func() (string, bool) {
		calls++
		return fmt.Sprintf("%d records", calls), false
	})
	if elapsed := time.Since(start); elapsed < 100*time.Millisecond {
		t.Fatalf("Eventually gave up after %s, before its 100ms", elapsed)
	}
	want := fmt.Sprintf("waited 100ms for five records; last seen: %d records", calls)
	if r.failed != want {
		t.Fatalf("failure = %q, want %q", r.failed, want)
	}
	if calls < 3 {
		t.Fatalf("observe called %d times in 100ms, want it polled", calls)
	}
}

func TestEventuallyShowsStructs(t *testing.T) {
	r := &recorder{TB: t}
	check.Eventually(r, 10*time.Millisecond, "a ready route", func() (struct{ Ready bool }, bool) {
		return struct{ Ready bool }{}, false
	})
	if !strings.Contains(r.failed, "last seen: {Ready:false}") {
		t.Fatalf("failure = %q, want the last observation with its field names", r.failed)
	}
}
