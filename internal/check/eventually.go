package check

import (
	"testing"
	"time"
)

// Eventually polls observe until it reports done, and returns what it
// observed then. When observe is not done within timeout, Eventually
// fails the test, saying what it awaited and observe's last observation,
// so that a failure tells what the test saw rather than only that it
// waited. It polls every few milliseconds at first, then less often, at
// most every 200 ms, and stops early when the test's context ends.
func Eventually[T any](t testing.TB, timeout time.Duration, what string, observe func() (seen T, done bool)) T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	interval := 5 * time.Millisecond
	for {
		seen, done := observe()
		if done {
			return seen
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("waited %s for %s; last seen: %+v", timeout, what, seen)
			return seen
		}
		timer := time.NewTimer(min(interval, time.Until(deadline)))
		select {
		case <-t.Context().Done():
			timer.Stop()
			t.Fatalf("the test ended while waiting for %s; last seen: %+v", what, seen)
			return seen
		case <-timer.C:
		}
		interval = min(2*interval, 200*time.Millisecond)
	}
}
