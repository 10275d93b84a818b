package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sentSamples publishes count samples of seed to a fake API with the extra
// arguments and returns the lines it received, in order.
func sentSamples(t *testing.T, count, seed string, args ...string) [][]byte {
	t.Helper()
	fake := &fakeIngest{t: t, statuses: []int{202}}
	hs := httptest.NewServer(fake)
	t.Cleanup(hs.Close)
	args = append([]string{"--api-url", hs.URL, "--api-key", "token", "--sample", "mixed", "--count", count, "--seed", seed, "--concurrency", "1", "--batch", "1000"}, args...)
	if _, stderr, err := runPublishCommand(t, "", args...); err != nil {
		t.Fatalf("publish %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	var lines [][]byte
	for _, body := range fake.requests() {
		for line := range bytes.Lines(body) {
			lines = append(lines, bytes.TrimSpace(line))
		}
	}
	return lines
}

// sampleTimestamp returns the event_timestamp of an event line.
func sampleTimestamp(t *testing.T, line []byte) time.Time {
	t.Helper()
	var ev struct {
		Timestamp time.Time `json:"event_timestamp"`
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		t.Fatalf("event %s: %v", line, err)
	}
	return ev.Timestamp
}

// TestPublishSampleTimes checks that samples are dated when they are sent,
// or from --sample-time on, and that a seed makes the same events but for
// their times.
func TestPublishSampleTimes(t *testing.T) {
	const count = 200
	before := time.Now()
	now := sentSamples(t, "200", "5")
	after := time.Now()
	if len(now) != count {
		t.Fatalf("sent %d events, want %d", len(now), count)
	}
	for i, line := range now {
		if ts := sampleTimestamp(t, line); ts.Before(before.Add(-time.Second).Truncate(time.Millisecond)) || ts.After(after) {
			t.Fatalf("sample %d is dated %s, want within the second before the run (%s to %s)", i+1, ts, before, after)
		}
	}

	start := time.Date(2029, time.February, 3, 4, 5, 6, 0, time.UTC)
	fixed := sentSamples(t, "200", "5", "--sample-time", start.Format(time.RFC3339))
	for i, line := range fixed {
		from := start.Add(time.Duration(i+1) * time.Second)
		if ts := sampleTimestamp(t, line); ts.Before(from) || !ts.Before(from.Add(time.Second)) {
			t.Fatalf("with --sample-time %s, sample %d is dated %s, want within the second from %s", start.Format(time.RFC3339), i+1, ts, from)
		}
	}
	if again := sentSamples(t, "200", "5", "--sample-time", start.Format(time.RFC3339)); !bytes.Equal(bytes.Join(again, nil), bytes.Join(fixed, nil)) {
		t.Fatal("two runs of one seed and --sample-time sent different events")
	}

	times := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|[a-z]{3}, \d\d [a-z]{3} \d{4} \d\d:\d\d:\d\d gmt`)
	for i := range now {
		x, y := times.ReplaceAll(now[i], nil), times.ReplaceAll(fixed[i], nil)
		if !bytes.Equal(x, y) {
			t.Fatalf("sample %d of one seed differs in more than its times:\n%s\n%s", i+1, x, y)
		}
	}
}

func TestPublishSampleTimeFlag(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"not a time", []string{"--api-key", "k", "--sample", "mixed", "--sample-time", "yesterday"}, `--sample-time "yesterday" is not an RFC 3339 time`},
		{"no sample", []string{"--api-key", "k", "--sample-time", "2026-11-22T10:00:00Z"}, "add --sample"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runPublishCommand(t, "", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
