package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/agent/agentconfig"
)

func TestTunnelConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  TunnelConfig
		ok   bool
	}{
		{"defaults", TunnelConfig{}, true},
		{"one mode", TunnelConfig{Modes: []string{TunnelNewConn}, Rates: []int{100}}, true},
		{"unknown mode", TunnelConfig{Modes: []string{"pipelined"}}, false},
		{"negative rate", TunnelConfig{Rates: []int{500, -1}}, false},
		{"too short", TunnelConfig{Duration: time.Millisecond}, false},
		{"no request in a run", TunnelConfig{Rates: []int{1}, Duration: 500 * time.Millisecond}, false},
		{"every agent", TunnelConfig{Agents: TunnelAgentKinds()}, true},
		{"unknown agent", TunnelConfig{Agents: []string{"frpc"}}, false},
		{"an agent twice", TunnelConfig{Agents: []string{AgentSDK, AgentSluice, AgentSDK}}, false},
		{"one tunnel an agent", TunnelConfig{AgentTunnels: 1}, false},
	}
	for _, tt := range tests {
		tt.cfg.setDefaults()
		if err := tt.cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok %t", tt.name, err, tt.ok)
		}
	}
}

// heldRun is a run of n requests with no error.
func heldRun(mode, path string, rate int, p99 int64) TunnelRun {
	r := TunnelRun{Mode: mode, Path: path, Rate: rate, Scheduled: rate, Sent: rate, Answered: rate, P50US: p99 / 2, P99US: p99, MaxUS: p99 * 2, CPU: time.Duration(rate) * 100 * time.Microsecond}
	if path == PathTunnel {
		r.Events = &TunnelEvents{Requests: int64(rate), Published: int64(rate), Drained: true}
	}
	return r
}

// goodTunnelReport meets every floor.
func goodTunnelReport() TunnelReport {
	r := TunnelReport{
		Runs: []TunnelRun{
			heldRun(TunnelKeepAlive, PathDirect, 1000, 1000), heldRun(TunnelKeepAlive, PathTunnel, 1000, 2500),
			heldRun(TunnelKeepAlive, PathDirect, 2000, 1500), heldRun(TunnelKeepAlive, PathTunnel, 2000, 4000),
			heldRun(TunnelKeepAlive, PathDirect, 4000, 3000),
		},
		TCP:    []TunnelTCP{{Path: PathDirect, Bytes: 1 << 20, BytesPerSecond: 1000}, {Path: PathTunnel, Bytes: 1 << 20, BytesPerSecond: 600}},
		Memory: &TunnelMemory{Sessions: 10, Connected: 10, Accounts: 1, RSSBefore: 1 << 20, RSSAfter: 1<<20 + 200<<10, KiBPerSession: 20},
		Flood: &TunnelFlood{Clients: 64, Baseline: heldRun(TunnelKeepAlive, PathTunnel, 200, 3000),
			Flooded: heldRun(TunnelKeepAlive, PathTunnel, 200, 9000), FloodAnswered: 50000},
	}
	// 4000/s through the tunnel failed: the tunnel held 2000, half.
	failed := heldRun(TunnelKeepAlive, PathTunnel, 4000, 9000)
	failed.Errors, failed.Answered, failed.FirstError = 3, 3997, "answered 502"
	failed.Events = &TunnelEvents{Requests: 4000, Published: 4000, Drained: true}
	r.Runs = append(r.Runs, failed)
	r.Floors = r.ComputeFloors()
	return r
}

func TestTunnelFloors(t *testing.T) {
	good := goodTunnelReport()
	if err := good.CheckFloors(); err != nil {
		t.Fatalf("a report within the floors: %v", err)
	}
	if got := good.HighestHeld(TunnelKeepAlive, PathTunnel); got != 2000 {
		t.Errorf("highest held through the tunnel %d, want 2000", got)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(*TunnelReport)
	}{
		{"rate under half", "highest rate held", func(r *TunnelReport) { r.Runs[3].Errors = 1 }},
		{"p99 over direct + 2ms", "p99 at 1000/s", func(r *TunnelReport) { r.Runs[1].P99US = 3001 }},
		{"errors at 1000/s", "p99 at 1000/s", func(r *TunnelReport) { r.Runs[1].Errors = 1; r.Runs[2].Rate = 500 }},
		{"TCP under half", "TCP bytes", func(r *TunnelReport) { r.TCP[1].BytesPerSecond = 499 }},
		{"TCP through the tunnel failed", "TCP bytes", func(r *TunnelReport) { r.TCP[1].Error = "reset" }},
		{"memory over 32 KiB", "memory of an idle session", func(r *TunnelReport) { r.Memory.KiBPerSession = 33 }},
		{"sessions that did not connect", "memory of an idle session", func(r *TunnelReport) { r.Memory.Connected = 9 }},
		{"an event missing", "one event per request", func(r *TunnelReport) { r.Runs[1].Events.Published-- }},
		{"an event dropped", "one event per request", func(r *TunnelReport) { r.Runs[1].Events.Dropped = 1 }},
		{"a request the edge missed", "one event per request", func(r *TunnelReport) {
			r.Runs[1].Events.Requests--
			r.Runs[1].Events.Published--
		}},
		{"not drained", "one event per request", func(r *TunnelReport) { r.Runs[1].Events.Drained = false }},
		{"A slowed by B's flood", "another account's flood", func(r *TunnelReport) {
			f := *r.Flood
			f.Flooded.P99US = f.Baseline.P99US + 10_001
			r.Flood = &f
		}},
		{"A's requests failing beside the flood", "another account's flood", func(r *TunnelReport) {
			f := *r.Flood
			f.Flooded.Errors = 1
			r.Flood = &f
		}},
		{"the flood not measured", "another account's flood", func(r *TunnelReport) { r.Flood = &TunnelFlood{Error: "no way to make account B"} }},
	} {
		r := goodTunnelReport()
		r.Runs = append([]TunnelRun(nil), r.Runs...)
		for i := range r.Runs {
			if e := r.Runs[i].Events; e != nil {
				c := *e
				r.Runs[i].Events = &c
			}
		}
		tc.edit(&r)
		err := r.CheckFloors()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckFloors() = %v, want it to name %q", tc.name, err, tc.want)
		}
	}

	// What was not measured is skipped, not missed.
	empty := TunnelReport{Runs: []TunnelRun{heldRun(TunnelNewConn, PathDirect, 500, 100), heldRun(TunnelNewConn, PathTunnel, 500, 200)}}
	if err := empty.CheckFloors(); err != nil {
		t.Errorf("a report without TCP, memory nor 1000/s: %v", err)
	}
	skipped := 0
	for _, f := range empty.ComputeFloors() {
		if f.Skipped {
			skipped++
		}
	}
	if skipped != 4 {
		t.Errorf("%d floors skipped, want 4 (p99 at 1000/s, TCP, memory, flood)", skipped)
	}
}

func TestTunnelReportOutput(t *testing.T) {
	r := goodTunnelReport()
	var text bytes.Buffer
	if err := r.Format(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"keep-alive", "highest rate held with no error, keep-alive: direct 4000/s, tunnel 2000/s",
		"(ratio 0.50)", "(ratio 0.60)", "20.0 KiB a session", "first error: answered 502", "sent 7000, edge counted 7000, events published 7000"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Runs   []map[string]any `json:"runs"`
		Floors []TunnelFloor    `json:"floors"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != 6 || back.Runs[1]["p99_us"] != float64(2500) || len(back.Floors) != len(r.Floors) {
		t.Errorf("the JSON: %s", js.String())
	}
}

// agentRuns returns runs through kind's agent like goodTunnelReport's
// through the tunnel: 1000/s and 2000/s held, 4000/s not.
func agentRuns(kind string, p99At1000 int64) []TunnelRun {
	runs := []TunnelRun{heldRun(TunnelKeepAlive, PathTunnel, 1000, p99At1000), heldRun(TunnelKeepAlive, PathTunnel, 2000, 4000),
		heldRun(TunnelKeepAlive, PathTunnel, 4000, 9000)}
	runs[2].Errors = 3
	for i := range runs {
		runs[i].Agent = kind
		runs[i].AgentCPU = time.Duration(runs[i].Sent) * 50 * time.Microsecond
	}
	return runs
}

// TestTunnelAgentFloors: each agent is judged against the same direct
// runs, alone, and the comparison sums each up.
func TestTunnelAgentFloors(t *testing.T) {
	r := TunnelReport{
		Runs: []TunnelRun{heldRun(TunnelKeepAlive, PathDirect, 1000, 1000), heldRun(TunnelKeepAlive, PathDirect, 2000, 1500),
			heldRun(TunnelKeepAlive, PathDirect, 4000, 3000)},
		TCP: []TunnelTCP{{Path: PathDirect, Bytes: 1 << 20, BytesPerSecond: 1000},
			{Path: PathTunnel, Agent: AgentSDK, Bytes: 1 << 20, BytesPerSecond: 600},
			{Path: PathTunnel, Agent: AgentSluice, Bytes: 1 << 20, BytesPerSecond: 400}},
		Agents: []TunnelAgent{{Kind: AgentSDK, Tunnels: 100, RSSBefore: 30 << 20, RSSAfter: 32 << 20},
			{Kind: AgentSluice, Tunnels: 100, RSSBefore: 20 << 20, RSSAfter: 21 << 20}},
	}
	r.Runs = append(r.Runs, agentRuns(AgentSDK, 2500)...)
	slow := agentRuns(AgentSluice, 3500) // +2.5 ms at 1000/s
	slow[1].Errors = 1                   // and only 1000/s held
	r.Runs = append(r.Runs, slow...)

	err := r.CheckFloors()
	if err == nil {
		t.Fatal("sluice-agent's runs miss three floors, CheckFloors() = nil")
	}
	for _, want := range []string{"sluice-agent: highest rate held, keep-alive", "sluice-agent: p99 at 1000/s", "sluice-agent: TCP bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckFloors() = %v, want it to name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "sdk:") {
		t.Errorf("CheckFloors() = %v, the SDK's runs meet every floor", err)
	}

	sums := r.Compare()
	if len(sums) != 3 || sums[0].Path != PathDirect || sums[1].Agent != AgentSDK || sums[2].Agent != AgentSluice {
		t.Fatalf("Compare() = %+v, want direct, sdk, sluice-agent", sums)
	}
	if s := sums[0]; s.HighestHeld[TunnelKeepAlive] != 4000 || s.P99At1000US[TunnelKeepAlive] != 1000 || s.TCPBytesPerSecond != 1000 || s.RSSBefore != 0 {
		t.Errorf("direct: %+v", s)
	}
	if s := sums[2]; s.HighestHeld[TunnelKeepAlive] != 1000 || s.P99At1000US[TunnelKeepAlive] != 3500 || s.TCPBytesPerSecond != 400 ||
		s.AgentCPUPerRequestUS != 50 || s.RSSBefore != 20<<20 || s.RSSAfter != 21<<20 {
		t.Errorf("sluice-agent: %+v", s)
	}

	var text bytes.Buffer
	if err := r.Format(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"highest rate held with no error, keep-alive: direct 4000/s, sdk 2000/s, sluice-agent 1000/s",
		"TCP tunnel sluice-agent: 1 MiB", "the agents beside direct", "20480→21504"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, text.String())
		}
	}

	// An agent that did not run misses a floor of its own.
	r.Agents = append(r.Agents, TunnelAgent{Kind: AgentSluiceInspect, Error: "exited before its 100 tunnels were bound"})
	if err := r.CheckFloors(); err == nil || !strings.Contains(err.Error(), "sluice-agent-inspect: the agent ran its tunnels") {
		t.Errorf("with an agent that did not run, CheckFloors() = %v", err)
	}
}

func TestParseMetricLine(t *testing.T) {
	for line, want := range map[string]struct {
		name  string
		value int64
		ok    bool
	}{
		`sluice_edge_http_requests_total{status_class="2xx"} 1234`: {"sluice_edge_http_requests_total", 1234, true},
		`sluice_edge_events_buffered 0`:                            {"sluice_edge_events_buffered", 0, true},
		`sluice_edge_events_published_total 1.5e+06`:               {"sluice_edge_events_published_total", 1500000, true},
		`# TYPE sluice_edge_events_buffered gauge`:                 {"", 0, false},
	} {
		name, value, ok := parseMetricLine(line)
		if name != want.name || value != want.value || ok != want.ok {
			t.Errorf("%s: %q %d %t", line, name, value, ok)
		}
	}
}

// TestOpenLoop sends to a local server: every request is sent on
// schedule and measured, and with one in flight at a time against a slow
// server, those due meanwhile are not sent and count as errors.
func TestOpenLoop(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("slow") != "" {
			time.Sleep(50 * time.Millisecond)
		}
	}))
	defer srv.Close()
	cfg := TunnelConfig{Rates: []int{200}, Duration: 300 * time.Millisecond}
	cfg.setDefaults()
	for _, mode := range []string{TunnelKeepAlive, TunnelNewConn} {
		run := TunnelRun{Mode: mode, Path: PathDirect, Rate: 200}
		openLoop(context.Background(), cfg, &run, srv.URL, "")
		if run.Scheduled != 60 || run.Sent != 60 || run.Answered != 60 || run.Errors != 0 || !run.Held() {
			t.Errorf("%s: %+v, want 60 sent and answered", mode, run)
		}
		t.Logf("%s at 200/s to a local server: p50 %dµs p99 %dµs max %dµs, started late by %dµs at p99", mode, run.P50US, run.P99US, run.MaxUS, run.LateP99US)
		if run.P50US <= 0 || run.P99US < run.P50US || run.MaxUS < run.P99US {
			t.Errorf("%s: latencies %d %d %d", mode, run.P50US, run.P99US, run.MaxUS)
		}
	}
	cfg.MaxInFlight = 1
	run := TunnelRun{Mode: TunnelKeepAlive, Path: PathDirect, Rate: 200}
	openLoop(context.Background(), cfg, &run, srv.URL+"?slow=1", "")
	if run.Sent >= 60 || run.Errors != 60-run.Sent || run.Held() || !strings.Contains(run.FirstError, "in flight") {
		t.Errorf("with one in flight against a slow server: %+v", run)
	}
}

// TestSluiceAgentConfig: the configuration written for sluice-agent is
// one it loads, with the tunnels asked for.
func TestSluiceAgentConfig(t *testing.T) {
	caDir := t.TempDir()
	if _, err := edge.LoadOrCreateDevCA(caDir); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(caDir, edge.DevCAFile)
	for _, kind := range []string{AgentSluice, AgentSluiceInspect} {
		spec := agentSpec{kind: kind, token: "tok_1", server: "127.0.0.1:4443", caFile: caFile,
			httpUpstream: "127.0.0.1:8080", tcpUpstream: "127.0.0.1:9090", tunnels: 100, extraDomain: "bench.example.test", measuredHost: agentHost(kind)}
		file := filepath.Join(t.TempDir(), "sluice-agent.yml")
		if err := os.WriteFile(file, sluiceAgentConfig(spec), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := agentconfig.Load([]string{file})
		if err != nil {
			t.Fatalf("%s: %v\n%s", kind, err, sluiceAgentConfig(spec))
		}
		main, sink := cfg.Tunnels["main"], cfg.Tunnels["sink"]
		if len(cfg.Tunnels) != 100 || cfg.Authtoken != "tok_1" || cfg.RootCAs != caFile || len(cfg.ServerAddrs) != 1 || cfg.ServerAddrs[0] != "127.0.0.1:4443" {
			t.Errorf("%s: %d tunnels, %+v", kind, len(cfg.Tunnels), cfg)
		}
		if main.Domain != agentHost(kind) || main.Inspect != (kind == AgentSluiceInspect) || main.Proto != "http" || sink.Proto != "tcp" || sink.Addr != "127.0.0.1:9090" {
			t.Errorf("%s: main %+v, sink %+v", kind, main, sink)
		}
		if d := cfg.Tunnels["idle-097"].Domain; !strings.HasSuffix(d, ".bench.example.test") || d == cfg.Tunnels["idle-000"].Domain {
			t.Errorf("%s: idle tunnels at %q and %q, want random names under bench.example.test", kind, d, cfg.Tunnels["idle-000"].Domain)
		}
	}
}
