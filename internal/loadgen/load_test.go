package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

func TestRunLoad(t *testing.T) {
	for _, sink := range []string{LoadSinkNull, LoadSinkEmulator} {
		t.Run(sink, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			t.Cleanup(cancel)
			cfg := LoadConfig{
				Sink:         sink,
				Rate:         1000,
				Duration:     2 * time.Second,
				Interval:     500 * time.Millisecond,
				Batch:        50,
				MaxRSSGrowth: 10, // checked, but no tiny run grows elevenfold
				DataDir:      t.TempDir(),
			}
			var progress bytes.Buffer
			report, err := RunLoad(ctx, cfg, &progress)
			if err != nil {
				t.Fatalf("RunLoad: %v\nprogress:\n%s", err, progress.String())
			}
			if err := report.CheckDelivered(); err != nil {
				t.Errorf("CheckDelivered: %v", err)
			}
			if err := report.CheckRSSGrowth(); err != nil {
				t.Errorf("CheckRSSGrowth: %v", err)
			}
			// Paced at 1000 events/s for 2 s, in batches of 50.
			if report.Published < 1000 || report.Published > 2000 || report.Published%50 != 0 {
				t.Errorf("published %d events, want 1000 to 2000 in batches of 50", report.Published)
			}
			if report.Passing != report.Published/2 || report.Delivered != report.Passing || report.Records != report.Delivered {
				t.Errorf("passing %d, delivered %d, records %d of %d published; want half of them each", report.Passing, report.Delivered, report.Records, report.Published)
			}
			if report.InPerSec <= 0 || report.OutPerSec <= 0 || report.Latency.P50Millis > report.Latency.P99Millis || report.Latency.P99Millis > report.Latency.MaxMillis || report.PeakRSS == 0 {
				t.Errorf("rates in %f, out %f, latency %+v, peak RSS %d; want positive rates, ordered percentiles, a peak", report.InPerSec, report.OutPerSec, report.Latency, report.PeakRSS)
			}
			if len(report.Intervals) < 3 {
				t.Errorf("%d intervals, want at least 3", len(report.Intervals))
			}

			var text bytes.Buffer
			if err := report.Format(&text); err != nil {
				t.Fatalf("Format: %v", err)
			}
			if !strings.Contains(text.String(), "every passing event delivered once") {
				t.Errorf("report does not say every event was delivered:\n%s", text.String())
			}
			var js bytes.Buffer
			if err := report.WriteJSON(&js); err != nil {
				t.Fatalf("WriteJSON: %v", err)
			}
			var decoded LoadReport
			if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || decoded.Delivered != report.Delivered {
				t.Errorf("JSON report decodes to %d delivered (error %v), want %d", decoded.Delivered, err, report.Delivered)
			}
		})
	}
}

func TestLoadConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  LoadConfig
		ok   bool
	}{
		{"defaults", LoadConfig{}, true},
		{"emulator paced", LoadConfig{Sink: LoadSinkEmulator, Rate: 5000}, true},
		{"unknown sink", LoadConfig{Sink: "s3"}, false},
		{"negative rate", LoadConfig{Rate: -1}, false},
		{"negative growth", LoadConfig{MaxRSSGrowth: -0.1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestLoadEventID(t *testing.T) {
	token := newRunToken()
	for _, seq := range []uint64{0, 1, 42, 1 << 40} {
		id := loadEventID(token, seq)
		if err := schemas.CheckID(schemas.PrefixEvent, id); err != nil {
			t.Errorf("loadEventID: %v", err)
		}
		if got, ok := seqOf(token, id); !ok || got != seq {
			t.Errorf("seqOf(%q) = %d, %v; want %d", id, got, ok, seq)
		}
	}
	if _, ok := seqOf(newRunToken(), loadEventID(token, 7)); ok {
		t.Errorf("an id of another run was taken for one of this run")
	}
}

func TestLatencyHistogram(t *testing.T) {
	var h latencyHistogram
	for ms := 1; ms <= 100; ms++ {
		h.add(time.Duration(ms) * time.Millisecond)
	}
	h.add(2 * time.Minute) // past the last bucket
	l := h.latencies()
	if l.P50Millis != 51 || l.P95Millis != 96 || l.P99Millis != 100 || l.MaxMillis != 120_000 {
		t.Errorf("latencies %+v, want p50 51, p95 96, p99 100, max 120000", l)
	}
}

func TestCheckRSSGrowth(t *testing.T) {
	intervals := func(mib ...uint64) []LoadInterval {
		ivs := make([]LoadInterval, len(mib))
		for i, m := range mib {
			ivs[i].RSSBytes = m << 20
		}
		return ivs
	}
	tests := []struct {
		name      string
		growth    float64
		intervals []LoadInterval
		fails     bool
	}{
		{"flat", 0.2, intervals(50, 100, 100, 101, 100, 102), false},
		{"warm-up growth is left out", 0.2, intervals(10, 20, 100, 100, 110, 110), false},
		{"keeps growing", 0.2, intervals(50, 80, 100, 110, 130, 140), true},
		{"not checked", 0, intervals(50, 80, 100, 110, 130, 140), false},
		{"too few intervals", 0.2, intervals(10, 100), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := LoadReport{Config: LoadConfig{MaxRSSGrowth: tt.growth}, Intervals: tt.intervals}
			err := r.CheckRSSGrowth()
			if (err != nil) != tt.fails || (err != nil && !errors.Is(err, ErrRSSGrowth)) {
				t.Errorf("CheckRSSGrowth() = %v, want failure %v wrapping ErrRSSGrowth", err, tt.fails)
			}
		})
	}
}
