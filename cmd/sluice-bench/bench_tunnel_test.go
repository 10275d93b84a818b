package main

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/sluicehq/sluice/internal/buildtest"
	"github.com/sluicehq/sluice/internal/loadgen"
)

// TestBenchTunnelSmoke runs sluice-bench tunnel small, against the
// sluice serve --dev it spawns: every run got its requests through, and
// the edge counted each and published one event for each.
func TestBenchTunnelSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns sluice serve --dev")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	out, err := exec.Command(buildtest.Binary(t, "."), "tunnel", "--sluice-bin", bin, "--duration", "500ms", "--rates", "50", "--idle-sessions", "3",
		"--tcp-bytes", "1MiB", "--flood-clients", "4", "--flood-rate", "50", "--no-verdict", "--json").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("bench tunnel: %v\n%s", err, stderr)
	}
	var r loadgen.TunnelReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("the report %s: %v", out, err)
	}
	if len(r.Runs) != 4 {
		t.Fatalf("%d runs, want 4 (two modes, direct and tunnel): %s", len(r.Runs), out)
	}
	for _, run := range r.Runs {
		if run.Sent != 25 || run.Answered != 25 || run.P50US <= 0 {
			t.Errorf("%s %s: sent %d answered %d errors %d (%s), p50 %dµs; want 25 answered", run.Mode, run.Path, run.Sent, run.Answered, run.Errors, run.FirstError, run.P50US)
		}
		if e := run.Events; run.Path == loadgen.PathTunnel && (e == nil || e.Requests != 25 || e.Published != 25 || e.Dropped != 0) {
			t.Errorf("%s through the tunnel: the edge's counters %+v, want 25 requests and 25 events", run.Mode, e)
		}
	}
	if len(r.TCP) != 2 || r.TCP[0].Error != "" || r.TCP[1].Error != "" {
		t.Errorf("TCP: %+v", r.TCP)
	}
	if m := r.Memory; m == nil || m.Connected != 3 || m.RSSAfter == 0 {
		t.Errorf("idle sessions: %+v", m)
	}
	if f := r.Flood; f == nil || f.Error != "" || f.Baseline.Answered != 25 || f.Flooded.Answered != 25 || f.FloodAnswered == 0 {
		t.Errorf("the flood phase: %+v, want A's 25 requests answered alone and beside B's flood", f)
	}
}
