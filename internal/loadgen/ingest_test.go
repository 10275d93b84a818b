package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestRunIngest(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	const events = 3000
	var progress bytes.Buffer
	report, err := RunIngest(ctx, IngestConfig{Events: events, Runs: 1, DataDir: t.TempDir()}, &progress)
	if err != nil {
		t.Fatalf("RunIngest: %v\nprogress:\n%s", err, progress.String())
	}

	want := []string{ModeRaw, ModeProducer, ModeHTTP}
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
			t.Errorf("mode %s published %d events and the stream held %d, want %d", m.Mode, run.Events, run.Stored, events)
		}
		if run.EventsPerSec <= 0 || m.MedianEventsPerSec != run.EventsPerSec {
			t.Errorf("mode %s: rate %f, median %f; want a positive rate that is its own median", m.Mode, run.EventsPerSec, m.MedianEventsPerSec)
		}
	}
	if report.ProducerRatio <= 0 || report.HTTPRatio <= 0 {
		t.Errorf("ratios producer %f, http %f; want both positive", report.ProducerRatio, report.HTTPRatio)
	}

	checkReportForms(t, report, want, func(r IngestReport) int { return len(r.Modes) })
}

// printedReport is a benchmark report in its two printed forms.
type printedReport interface {
	Format(io.Writer) error
	WriteJSON(io.Writer) error
}

// checkReportForms checks that a report's table names every mode and that
// its JSON form decodes back to an R with as many modes.
func checkReportForms[R any](t *testing.T, report printedReport, modes []string, countModes func(R) int) {
	t.Helper()
	var table bytes.Buffer
	if err := report.Format(&table); err != nil {
		t.Fatalf("Format: %v", err)
	}
	for _, m := range modes {
		if !strings.Contains(table.String(), m) {
			t.Errorf("table lacks mode %s:\n%s", m, table.String())
		}
	}
	var js bytes.Buffer
	if err := report.WriteJSON(&js); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	var decoded R
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || countModes(decoded) != len(modes) {
		t.Errorf("JSON form does not decode to %d modes (err %v):\n%s", len(modes), err, js.String())
	}
}

func TestIngestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     IngestConfig
		wantErr bool
	}{
		{"defaults", IngestConfig{}, false},
		{"negative events", IngestConfig{Events: -1}, true},
		{"batch over the API limit", IngestConfig{Batch: 10_001}, true},
		{"negative concurrency", IngestConfig{Concurrency: -2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestCheckFloors(t *testing.T) {
	tests := []struct {
		name          string
		producer, api float64
		wantBelow     []string // modes named in the error
	}{
		{"both reach", 0.7, 0.5, nil},
		{"producer below", 0.69, 0.9, []string{ModeProducer}},
		{"http below", 0.9, 0.2, []string{ModeHTTP}},
		{"both below", 0.1, 0.1, []string{ModeProducer, ModeHTTP}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newIngestReport(IngestConfig{Events: 1, Runs: 1})
			r.ProducerRatio, r.HTTPRatio = tt.producer, tt.api
			err := r.CheckFloors()
			var table bytes.Buffer
			if ferr := r.Format(&table); ferr != nil {
				t.Fatalf("Format: %v", ferr)
			}
			if len(tt.wantBelow) == 0 {
				if err != nil {
					t.Fatalf("CheckFloors = %v, want nil", err)
				}
				if !strings.Contains(table.String(), "every ratio reaches its floor") {
					t.Errorf("the report does not say every floor is reached:\n%s", table.String())
				}
				return
			}
			if !errors.Is(err, ErrBelowFloor) {
				t.Fatalf("CheckFloors = %v, want ErrBelowFloor", err)
			}
			var floor *FloorError
			if !errors.As(err, &floor) || floor.Mode != tt.wantBelow[0] {
				t.Errorf("CheckFloors = %v, want a *FloorError of %s first", err, tt.wantBelow[0])
			}
			for _, mode := range tt.wantBelow {
				if !strings.Contains(err.Error(), mode+" reached") {
					t.Errorf("error %q does not name %s", err, mode)
				}
				if !strings.Contains(table.String(), "BELOW FLOOR: ") || !strings.Contains(table.String(), mode+" reached") {
					t.Errorf("the report does not say %s is below its floor:\n%s", mode, table.String())
				}
			}
		})
	}
}
