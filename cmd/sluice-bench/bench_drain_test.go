package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/buildtest"
	"github.com/sluicehq/sluice/internal/loadgen"
)

// TestMain lets the test binary stand in for sluice-bench as the helper
// processes of `sluice-bench drain`, which re-executes its own binary
// (os.Executable, here the test binary) as `drain-helper`; after the
// tests it removes the sluice binary they ran (buildSluice).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == drainHelperCommand {
		main()
		os.Exit(0)
	}
	code := m.Run()
	buildtest.Cleanup()
	os.Exit(code)
}

// buildSluice returns the sluice binary, built once per run of the test
// binary, which the benchmarks spawn as sluice serve.
func buildSluice(t *testing.T) string {
	t.Helper()
	return buildtest.Binary(t, "github.com/sluicehq/sluice/cmd/sluice")
}

// clearSluiceEnv unsets sluice's variables for the test, so that what a
// process it spawns reads is what the test gives it.
func clearSluiceEnv(t *testing.T) {
	t.Helper()
	buildtest.ClearEnv(t, "SLUICE_")
}

// TestBenchDrain runs `sluice-bench drain` on a tiny backlog, one round,
// and checks the report's shape and that every record a route passes
// reached the endpoint (RunDrain fails with ErrEndpointCount otherwise,
// and the report says how many). It asserts no floor: the rates of so
// small a run say nothing.
func TestBenchDrain(t *testing.T) {
	clearSluiceEnv(t)
	const events = 2000
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	cmd := newBenchCommand()
	var out, progress bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&progress)
	cmd.SetArgs([]string{"drain", "--events", "2000", "--rounds", "1", "--json", "--data-dir", t.TempDir()})
	err := cmd.ExecuteContext(ctx)
	if err != nil && !errors.Is(err, loadgen.ErrBelowFloor) && !errors.Is(err, loadgen.ErrOverLimit) {
		t.Fatalf("bench drain: %v\nprogress:\n%s", err, progress.String())
	}
	var report loadgen.DrainReport
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, out.String())
	}
	if !strings.HasPrefix(report.Command, "sluice-bench drain --") || !strings.Contains(report.Command, "--events=2000") {
		t.Errorf("the report's command is %q, want sluice-bench drain with its flags", report.Command)
	}
	if report.EventBytes < loadgen.DefaultDrainEventBytes-100 || report.EventBytes > loadgen.DefaultDrainEventBytes+100 {
		t.Errorf("events of %d bytes stored, want about %d", report.EventBytes, loadgen.DefaultDrainEventBytes)
	}
	want := []struct {
		mode      string
		delivered int64
	}{{loadgen.ModeRawDrain, 0}, {loadgen.ModePassThrough, events}, {loadgen.ModeFilter, events / 2}}
	if len(report.Modes) != len(want) {
		t.Fatalf("report has %d modes, want %d:\n%s", len(report.Modes), len(want), out.String())
	}
	for i, w := range want {
		m := report.Modes[i]
		if m.Mode != w.mode || len(m.Runs) != 1 {
			t.Errorf("mode %d is %q with %d runs, want %q with 1", i, m.Mode, len(m.Runs), w.mode)
			continue
		}
		run := m.Runs[0]
		if run.Events != events || run.Delivered != w.delivered {
			t.Errorf("mode %s drained %d events and the endpoint received %d records, want %d and %d", m.Mode, run.Events, run.Delivered, events, w.delivered)
		}
		if run.EventsPerSec <= 0 || m.MedianEventsPerSec != run.EventsPerSec || m.Ratio <= 0 {
			t.Errorf("mode %s: rate %f, median %f, ratio %f; want a positive rate that is its own median", m.Mode, run.EventsPerSec, m.MedianEventsPerSec, m.Ratio)
		}
		if run.CPUMsPer1000 <= 0 || run.LoadAverage < 0 {
			t.Errorf("mode %s: %f ms CPU per 1,000 events, load average %f; want both positive", m.Mode, run.CPUMsPer1000, run.LoadAverage)
		}
	}
}

// TestBenchDrainStopsHelpers cancels `sluice-bench drain` as Ctrl-C does,
// once both helpers serve, and checks that neither answers once the
// command has returned: the NATS server and the endpoint were stopped.
func TestBenchDrainStopsHelpers(t *testing.T) {
	clearSluiceEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	progress := &cancelOnLine{prefix: "NATS server at ", cancel: cancel}
	cmd := newBenchCommand()
	cmd.SetOut(io.Discard)
	cmd.SetErr(progress)
	cmd.SetArgs([]string{"drain", "--events", "2000", "--rounds", "1"})
	if err := cmd.ExecuteContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("bench drain cancelled = %v, want context.Canceled", err)
	}
	var natsURL, endpointURL string
	if _, err := fmt.Sscanf(progress.line, "NATS server at %s Kinesis endpoint at %s", &natsURL, &endpointURL); err != nil {
		t.Fatalf("progress line %q: %v", progress.line, err)
	}
	for _, u := range []string{strings.TrimSuffix(natsURL, ","), endpointURL} {
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		if conn, err := net.DialTimeout("tcp", parsed.Host, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still answers after the command returned", u)
		}
	}
}

// cancelOnLine is a progress writer that keeps the first line starting
// with prefix and calls cancel when it sees it.
type cancelOnLine struct {
	prefix string
	cancel context.CancelFunc
	mu     sync.Mutex
	buf    strings.Builder
	line   string
}

func (w *cancelOnLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.line == "" {
		for l := range strings.Lines(w.buf.String()) {
			if strings.HasPrefix(l, w.prefix) && strings.HasSuffix(l, "\n") {
				w.line = strings.TrimSpace(l)
				w.cancel()
			}
		}
	}
	return len(p), nil
}
