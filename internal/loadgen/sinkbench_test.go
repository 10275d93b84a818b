package loadgen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRunSinks drains a small backlog through each sink into the emulator
// and checks the report: every sink, a rate, the CPU per event, and a CPU
// profile of each run where one is asked for, in a directory it makes.
func TestRunSinks(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	profiles := filepath.Join(t.TempDir(), "profiles")
	var progress bytes.Buffer
	report, err := RunSinks(ctx, SinksConfig{Events: 400, Runs: 1, DataDir: t.TempDir(), CPUProfileDir: profiles}, &progress)
	if err != nil {
		t.Fatalf("RunSinks: %v\nprogress:\n%s", err, progress.String())
	}
	var want []string
	for _, s := range benchSinks {
		want = append(want, s.name)
	}
	if len(report.Sinks) != len(want) {
		t.Fatalf("report has %d sinks, want %d", len(report.Sinks), len(want))
	}
	for i, s := range report.Sinks {
		if s.Sink != want[i] || len(s.Runs) != 1 {
			t.Fatalf("sink %d is %q with %d runs, want %q with 1", i, s.Sink, len(s.Runs), want[i])
		}
		if s.MedianEventsPerSec <= 0 || s.Runs[0].Calls < 1 {
			t.Errorf("sink %s: %f events/s in %d calls, want both positive", s.Sink, s.MedianEventsPerSec, s.Runs[0].Calls)
		}
		if processCPU() > 0 && s.MedianCPUPerEvent <= 0 {
			t.Errorf("sink %s: CPU per event %f, want it positive", s.Sink, s.MedianCPUPerEvent)
		}
		if info, err := os.Stat(filepath.Join(profiles, "cpu-"+s.Sink+"-1.pprof")); err != nil || info.Size() == 0 {
			t.Errorf("sink %s: no CPU profile (%v)", s.Sink, err)
		}
	}
	checkReportForms(t, report, want, func(r SinksReport) int { return len(r.Sinks) })
}
