package loadgen

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRunDeliver(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	const events = 2000
	var progress bytes.Buffer
	report, err := RunDeliver(ctx, DeliverConfig{Events: events, Runs: 1, DataDir: t.TempDir()}, &progress)
	if err != nil {
		t.Fatalf("RunDeliver: %v\nprogress:\n%s", err, progress.String())
	}
	if report.Delivered != events/2 {
		t.Errorf("report says the filter passes %d events, want %d", report.Delivered, events/2)
	}
	want := []string{ModeRawDrain, ModeNullSink}
	if len(report.Modes) != len(want) {
		t.Fatalf("report has %d modes, want %d", len(report.Modes), len(want))
	}
	for i, m := range report.Modes {
		if m.Mode != want[i] {
			t.Errorf("mode %d is %q, want %q", i, m.Mode, want[i])
		}
		if len(m.Runs) != 1 {
			t.Fatalf("mode %s has %d runs, want 1", m.Mode, len(m.Runs))
		}
		run := m.Runs[0]
		if run.Events != events || run.Stored != events {
			t.Errorf("mode %s drained %d events of a stream holding %d, want %d", m.Mode, run.Events, run.Stored, events)
		}
		if run.EventsPerSec <= 0 || m.MedianEventsPerSec != run.EventsPerSec {
			t.Errorf("mode %s: rate %f, median %f; want a positive rate that is its own median", m.Mode, run.EventsPerSec, m.MedianEventsPerSec)
		}
	}
	if report.NullSinkRatio <= 0 {
		t.Errorf("null sink ratio %f, want it positive", report.NullSinkRatio)
	}

	checkReportForms(t, report, want, func(r DeliverReport) int { return len(r.Modes) })
}

func TestDeliverConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     DeliverConfig
		wantErr bool
	}{
		{"defaults", DeliverConfig{}, false},
		{"odd events", DeliverConfig{Events: 1001}, true},
		{"negative events", DeliverConfig{Events: -2}, true},
		{"negative runs", DeliverConfig{Runs: -1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestDeliverCheckFloors(t *testing.T) {
	r := newDeliverReport(DeliverConfig{Events: 2, Runs: 1})
	r.NullSinkRatio = DeliverFloor
	if err := r.CheckFloors(); err != nil {
		t.Errorf("CheckFloors at the floor = %v, want nil", err)
	}
	r.NullSinkRatio = DeliverFloor - 0.01
	err := r.CheckFloors()
	var floor *FloorError
	if !errors.Is(err, ErrBelowFloor) || !errors.As(err, &floor) || floor.Mode != ModeNullSink {
		t.Fatalf("CheckFloors below the floor = %v, want a *FloorError of %s", err, ModeNullSink)
	}
	var table bytes.Buffer
	if err := r.Format(&table); err != nil {
		t.Fatalf("Format: %v", err)
	}
	if !strings.Contains(table.String(), "BELOW FLOOR: null-sink reached") {
		t.Errorf("the report does not say the null sink is below its floor:\n%s", table.String())
	}
}
