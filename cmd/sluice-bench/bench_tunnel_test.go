package main

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/sluicehq/sluice/internal/buildtest"
	"github.com/sluicehq/sluice/internal/loadgen"
)

// TestBenchTunnelSmoke runs sluice-bench tunnel small, against the
// sluice serve --dev it spawns, through the SDK's agent and sluice-agent,
// each a process of its own with 100 tunnels: every run got its requests
// through, the edge counted each and published one event for each, and
// each agent's CPU time and memory were read.
func TestBenchTunnelSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns sluice serve --dev and the agents")
	}
	clearSluiceEnv(t)
	bin := buildSluice(t)
	agentBin := buildtest.Binary(t, "github.com/sluicehq/sluice/cmd/sluice-agent")
	out, err := exec.Command(buildtest.Binary(t, "."), "tunnel", "--sluice-bin", bin, "--sluice-agent-bin", agentBin,
		"--agents", loadgen.AgentSDK+","+loadgen.AgentSluice, "--duration", "500ms", "--rates", "50", "--idle-sessions", "3",
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
	if len(r.Runs) != 6 {
		t.Fatalf("%d runs, want 6 (two modes, direct and through two agents): %s", len(r.Runs), out)
	}
	through := map[string]int{}
	for _, run := range r.Runs {
		if run.Sent != 25 || run.Answered != 25 || run.P50US <= 0 {
			t.Errorf("%s %s %s: sent %d answered %d errors %d (%s), p50 %dµs; want 25 answered", run.Mode, run.Path, run.Agent, run.Sent, run.Answered, run.Errors, run.FirstError, run.P50US)
		}
		if run.Path != loadgen.PathTunnel {
			continue
		}
		through[run.Agent]++
		if e := run.Events; e == nil || e.Requests != 25 || e.Published != 25 || e.Dropped != 0 {
			t.Errorf("%s through %s: the edge's counters %+v, want 25 requests and 25 events", run.Mode, run.Agent, e)
		}
	}
	if through[loadgen.AgentSDK] != 2 || through[loadgen.AgentSluice] != 2 {
		t.Errorf("runs through each agent %v, want two each", through)
	}
	if len(r.TCP) != 3 {
		t.Errorf("TCP: %+v, want direct and through each agent", r.TCP)
	}
	for _, tcp := range r.TCP {
		if tcp.Error != "" || tcp.BytesPerSecond <= 0 {
			t.Errorf("TCP %s %s: %+v", tcp.Path, tcp.Agent, tcp)
		}
	}
	if len(r.Agents) != 2 {
		t.Fatalf("agents: %+v, want sdk and sluice-agent", r.Agents)
	}
	for _, a := range r.Agents {
		if a.Error != "" || a.Tunnels != loadgen.DefaultTunnelAgentTunnels || a.RSSBefore == 0 || a.RSSAfter == 0 {
			t.Errorf("agent %s: %+v, want its %d tunnels bound and its memory read", a.Kind, a, loadgen.DefaultTunnelAgentTunnels)
		}
	}
	if a := r.Agents[1]; a.APITunnels != loadgen.DefaultTunnelAgentTunnels {
		t.Errorf("sluice-agent's local API lists %d tunnels, want %d", a.APITunnels, loadgen.DefaultTunnelAgentTunnels)
	}
	if len(r.Comparison) != 3 || r.Comparison[1].Agent != loadgen.AgentSDK || r.Comparison[2].Agent != loadgen.AgentSluice || r.Comparison[2].RSSBefore == 0 {
		t.Errorf("the comparison: %+v", r.Comparison)
	}
	if m := r.Memory; m == nil || m.Connected != 3 || m.RSSAfter == 0 {
		t.Errorf("idle sessions: %+v", m)
	}
	if f := r.Flood; f == nil || f.Error != "" || f.Baseline.Answered != 25 || f.Flooded.Answered != 25 || f.FloodAnswered == 0 {
		t.Errorf("the flood phase: %+v, want A's 25 requests answered alone and beside B's flood", f)
	}
}
