package main

import (
	"strings"
	"testing"
	"time"
)

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 retries"},
		{1, "1 retry"},
		{2, "2 retries"},
		{-1, "-1 retries"},
	} {
		if got := count(tt.n, "retry", "retries"); got != tt.want {
			t.Errorf("count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestPublishSummaryCounts checks that publish's summary says "1 event"
// and "1 duplicate", not "1 events".
func TestPublishSummaryCounts(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := newPublishStats(start)
	s.sent.Store(1)
	s.duplicates.Store(1)
	s.retries.Store(1)
	var b strings.Builder
	s.summary(&b, start.Add(time.Second))
	const want = "sent 1 event in 1s: 0 stored, 1 duplicate, 0 rejected, 1 retry (1 events/s)\n"
	if b.String() != want {
		t.Fatalf("summary %q, want %q", b.String(), want)
	}
}
