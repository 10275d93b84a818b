package loadgen

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRunPending(t *testing.T) {
	if _, _, err := readRSS(); err != nil {
		t.Skipf("no resident memory to read: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	for _, sink := range []string{PendingSinkRefusing, PendingSinkBlocking} {
		t.Run(sink, func(t *testing.T) {
			const events = 2000
			var progress bytes.Buffer
			report, err := RunPending(ctx, PendingConfig{Events: events, Hold: 300 * time.Millisecond, Sink: sink, DataDir: t.TempDir()}, &progress)
			if err != nil {
				t.Fatalf("RunPending: %v\nprogress:\n%s", err, progress.String())
			}
			if report.Pending != events {
				t.Errorf("%d events pending, want %d", report.Pending, events)
			}
			if report.SinkWrites < 1 {
				t.Errorf("the sink was written %d times, want at least once", report.SinkWrites)
			}
			if report.PeakRSS == 0 || report.EndRSS == 0 || report.HoldPeakRSS < report.EndRSS || report.PeakRSS < report.HoldPeakRSS {
				t.Errorf("resident memory figures out of order: peak %d, hold peak %d, end %d", report.PeakRSS, report.HoldPeakRSS, report.EndRSS)
			}
			var table bytes.Buffer
			if err := report.Format(&table); err != nil {
				t.Fatalf("Format: %v", err)
			}
			if !strings.Contains(table.String(), "VmHWM") {
				t.Errorf("the report does not give the peak:\n%s", table.String())
			}
		})
	}
}

func TestPendingConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     PendingConfig
		wantErr bool
	}{
		{"defaults", PendingConfig{}, false},
		{"blocking", PendingConfig{Sink: PendingSinkBlocking}, false},
		{"unknown sink", PendingConfig{Sink: "slow"}, true},
		{"negative hold", PendingConfig{Hold: -time.Second}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestPendingCheckLimit(t *testing.T) {
	r := PendingReport{PeakRSS: PendingRSSLimit - 1, Limit: PendingRSSLimit}
	if err := r.CheckLimit(); err != nil {
		t.Errorf("CheckLimit under the limit = %v, want nil", err)
	}
	r.PeakRSS = PendingRSSLimit
	if err := r.CheckLimit(); !errors.Is(err, ErrOverLimit) {
		t.Errorf("CheckLimit at the limit = %v, want ErrOverLimit", err)
	}
}
