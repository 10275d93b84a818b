package loadgen

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Issue 24's floors of the edge.
const (
	// FloorTunnelRateRatio: the highest rate held through the tunnel is
	// at least half the highest held directly, per mode.
	FloorTunnelRateRatio = 0.5
	// FloorTunnelP99Rate and FloorTunnelP99Extra: at 1,000 requests a
	// second, p99 through the tunnel is at most direct p99 + 2 ms.
	FloorTunnelP99Rate  = 1000
	FloorTunnelP99Extra = 2 * time.Millisecond
	// FloorTunnelTCPRatio: TCP bytes a second through the tunnel are at
	// least half of those directly.
	FloorTunnelTCPRatio = 0.5
	// FloorTunnelKiBPerSession: an idle agent session costs the process
	// at most 32 KiB.
	FloorTunnelKiBPerSession = 32
)

// TunnelRun is one HTTP run: a mode, a rate and a path.
type TunnelRun struct {
	Mode string `json:"mode"`
	Path string `json:"path"`
	// Agent is the kind of agent through the tunnel (AgentSDK, ...);
	// empty directly.
	Agent string `json:"agent,omitempty"`
	Rate  int    `json:"rate"`
	// Scheduled requests were due; Sent were started (the others found
	// MaxInFlight in flight); Answered got a response; Errors are those
	// not sent, failed, or answered other than 200.
	Scheduled int `json:"scheduled"`
	Sent      int `json:"sent"`
	Answered  int `json:"answered"`
	Errors    int `json:"errors"`
	// FirstError says what the first error was.
	FirstError string `json:"first_error,omitempty"`
	// Latencies of the requests answered 200, from when each was due,
	// in microseconds.
	P50US int64 `json:"p50_us"`
	P99US int64 `json:"p99_us"`
	MaxUS int64 `json:"max_us"`
	// LateP99US is the p99 of how late requests started after they were
	// due, in microseconds: the bench's own lag, which the latencies
	// include.
	LateP99US int64 `json:"late_p99_us"`
	// Elapsed is how long the run took, until the last answer.
	Elapsed time.Duration `json:"elapsed_ns"`
	// CPU is the CPU time of the process measured over the run (and,
	// through the tunnel, the wait for its events to leave), all of it:
	// NATS and the pipeline are in it too.
	CPU time.Duration `json:"cpu_ns,omitempty"`
	// AgentCPU is the CPU time of the agent's process over the run.
	AgentCPU time.Duration `json:"agent_cpu_ns,omitempty"`
	// Events are the edge's counters over a run through the tunnel.
	Events *TunnelEvents `json:"events,omitempty"`
}

// CPUPerRequest is the process's CPU time over the run divided by the
// requests sent.
func (r TunnelRun) CPUPerRequest() time.Duration {
	if r.Sent == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Sent)
}

// AgentCPUPerRequest is the agent's CPU time over the run divided by the
// requests sent.
func (r TunnelRun) AgentCPUPerRequest() time.Duration {
	if r.Sent == 0 {
		return 0
	}
	return r.AgentCPU / time.Duration(r.Sent)
}

// Held reports whether every request due was answered 200.
func (r TunnelRun) Held() bool { return r.Errors == 0 && r.Sent == r.Scheduled && r.Scheduled > 0 }

// TunnelEvents are the deltas of the edge's counters over a tunnel run.
type TunnelEvents struct {
	// Requests is the delta of sluice_edge_http_requests_total, all
	// classes; Published of sluice_edge_events_published_total; Dropped
	// of sluice_edge_events_dropped_total.
	Requests  int64 `json:"requests"`
	Published int64 `json:"published"`
	Dropped   int64 `json:"dropped"`
	// Drained says whether sluice_edge_events_buffered came back to 0.
	Drained bool `json:"drained"`
}

// TunnelTCP is one TCP run.
type TunnelTCP struct {
	Path string `json:"path"`
	// Agent is the kind of agent through the tunnel; empty directly.
	Agent          string        `json:"agent,omitempty"`
	Bytes          int64         `json:"bytes"`
	Elapsed        time.Duration `json:"elapsed_ns"`
	BytesPerSecond float64       `json:"bytes_per_second"`
	Error          string        `json:"error,omitempty"`
	// AgentCPU is the CPU time of the agent's process over the run.
	AgentCPU time.Duration `json:"agent_cpu_ns,omitempty"`
}

// TunnelAgent is an agent process the runs went through.
type TunnelAgent struct {
	Kind string `json:"kind"`
	// Host is the name of its measured HTTP endpoint.
	Host string `json:"host"`
	PID  int    `json:"pid,omitempty"`
	// Tunnels were bound, in BindElapsed from the spawn; APITunnels is
	// how many sluice-agent's local API listed then (0 for the SDK).
	Tunnels     int           `json:"tunnels"`
	BindElapsed time.Duration `json:"bind_elapsed_ns"`
	APITunnels  int           `json:"api_tunnels,omitempty"`
	// RSSBefore is its resident memory once its tunnels were bound,
	// before the runs; RSSAfter after them, and RSSPeak its peak then.
	RSSBefore uint64 `json:"rss_before_bytes"`
	RSSAfter  uint64 `json:"rss_after_bytes"`
	RSSPeak   uint64 `json:"rss_peak_bytes"`
	Error     string `json:"error,omitempty"`
}

// TunnelMemory is the process's resident memory before and after the
// idle sessions connected.
type TunnelMemory struct {
	Sessions      int     `json:"sessions"`
	Connected     int     `json:"connected"`
	Accounts      int     `json:"accounts"`
	RSSBefore     uint64  `json:"rss_before_bytes"`
	RSSAfter      uint64  `json:"rss_after_bytes"`
	KiBPerSession float64 `json:"kib_per_session"`
	Error         string  `json:"error,omitempty"`
}

// TunnelFloor is one of issue 24's floors, as measured.
type TunnelFloor struct {
	Name     string `json:"name"`
	Measured string `json:"measured"`
	// Ratio is tunnel/direct, or the figure compared, where it applies.
	Ratio float64 `json:"ratio"`
	// Skipped when the run measured nothing to judge it by.
	Skipped bool `json:"skipped,omitempty"`
	OK      bool `json:"ok"`
}

// TunnelReport is what RunTunnel measured.
type TunnelReport struct {
	Config TunnelConfig  `json:"config"`
	Target TunnelTarget  `json:"target"`
	Runs   []TunnelRun   `json:"runs"`
	TCP    []TunnelTCP   `json:"tcp,omitempty"`
	Agents []TunnelAgent `json:"agents,omitempty"`
	Memory *TunnelMemory `json:"memory,omitempty"`
	Flood  *TunnelFlood  `json:"flood,omitempty"`
	Floors []TunnelFloor `json:"floors"`
	// Comparison sums up each agent beside the direct path.
	Comparison []TunnelSummary `json:"comparison,omitempty"`
}

// HighestHeld returns the highest rate of mode and path held with no
// error, 0 when none was.
func (r TunnelReport) HighestHeld(mode, path string) int {
	best := 0
	for _, run := range r.Runs {
		if run.Mode == mode && run.Path == path && run.Held() && run.Rate > best {
			best = run.Rate
		}
	}
	return best
}

func (r TunnelReport) run(mode, path string, rate int) (TunnelRun, bool) {
	for _, run := range r.Runs {
		if run.Mode == mode && run.Path == path && run.Rate == rate {
			return run, true
		}
	}
	return TunnelRun{}, false
}

func (r TunnelReport) tcp(path string) (TunnelTCP, bool) {
	for _, t := range r.TCP {
		if t.Path == path && t.Error == "" && t.BytesPerSecond > 0 {
			return t, true
		}
	}
	return TunnelTCP{}, false
}

// modes returns the modes of the runs, in the order first run.
func (r TunnelReport) modes() []string {
	var out []string
	for _, run := range r.Runs {
		if !slices.Contains(out, run.Mode) {
			out = append(out, run.Mode)
		}
	}
	return out
}

// agentKinds returns the kinds of agent of the runs through the tunnel
// and of r.Agents, in the order first met; one "" when there is none.
func (r TunnelReport) agentKinds() []string {
	var out []string
	add := func(kind string) {
		if !slices.Contains(out, kind) {
			out = append(out, kind)
		}
	}
	for _, a := range r.Agents {
		add(a.Kind)
	}
	for _, run := range r.Runs {
		if run.Path == PathTunnel {
			add(run.Agent)
		}
	}
	for _, t := range r.TCP {
		if t.Path == PathTunnel {
			add(t.Agent)
		}
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// forAgent returns r with the direct runs and those through kind's agent
// only.
func (r TunnelReport) forAgent(kind string) TunnelReport {
	sub := r
	sub.Runs, sub.TCP = nil, nil
	for _, run := range r.Runs {
		if run.Path == PathDirect || run.Agent == kind {
			sub.Runs = append(sub.Runs, run)
		}
	}
	for _, t := range r.TCP {
		if t.Path == PathDirect || t.Agent == kind {
			sub.TCP = append(sub.TCP, t)
		}
	}
	return sub
}

// ComputeFloors judges the report by issue 24's floors, those of the
// rates, p99 and TCP for each agent (issue 25), and the events' check,
// and returns them.
func (r TunnelReport) ComputeFloors() []TunnelFloor {
	var out []TunnelFloor
	for _, kind := range r.agentKinds() {
		if kind == AgentSluiceRoute {
			continue // its two routes are judged against each other, in Compare
		}
		out = append(out, r.forAgent(kind).agentFloors(kind)...)
	}
	f := TunnelFloor{Name: fmt.Sprintf("memory of an idle session ≤ %d KiB", FloorTunnelKiBPerSession)}
	switch m := r.Memory; {
	case m == nil:
		f.Skipped, f.OK, f.Measured = true, true, "not run"
	case m.Error != "" || m.Connected == 0:
		f.Measured = "the sessions did not connect: " + m.Error
	default:
		f.Ratio = m.KiBPerSession
		f.Measured = fmt.Sprintf("%.1f KiB a session over %d sessions", m.KiBPerSession, m.Connected)
		f.OK = m.KiBPerSession <= FloorTunnelKiBPerSession && m.Connected == m.Sessions
	}
	out = append(out, f)

	out = append(out, floodFloor(r.Flood))

	f = TunnelFloor{Name: "one event per request through the tunnel", OK: true}
	var sent, requests, published, dropped int64
	runs := 0
	for _, run := range r.Runs {
		if run.Path != PathTunnel || run.Events == nil {
			continue
		}
		runs++
		e := run.Events
		sent += int64(run.Sent)
		requests += e.Requests
		published += e.Published
		dropped += e.Dropped
		if e.Published != e.Requests || e.Dropped != 0 || !e.Drained || (run.Errors == 0 && e.Requests != int64(run.Sent)) {
			f.OK = false
		}
	}
	f.Measured = fmt.Sprintf("sent %d, edge counted %d, events published %d, dropped %d", sent, requests, published, dropped)
	if runs == 0 {
		f.Skipped, f.Measured = true, "no tunnel run"
	}
	out = append(out, f)
	return out
}

// agentFloors judges r's runs through kind's agent, the only ones in r,
// by the floors of the rates, p99 and TCP; their names start with kind
// when it is not empty.
func (r TunnelReport) agentFloors(kind string) []TunnelFloor {
	prefix := ""
	if kind != "" {
		prefix = kind + ": "
	}
	var out []TunnelFloor
	for _, a := range r.Agents {
		if a.Kind == kind && a.Error != "" {
			out = append(out, TunnelFloor{Name: prefix + "the agent ran its tunnels", Measured: a.Error})
		}
	}
	for _, mode := range r.modes() {
		d, t := r.HighestHeld(mode, PathDirect), r.HighestHeld(mode, PathTunnel)
		f := TunnelFloor{Name: fmt.Sprintf("%shighest rate held, %s: tunnel ≥ %.1f × direct", prefix, mode, FloorTunnelRateRatio),
			Measured: fmt.Sprintf("tunnel %d/s, direct %d/s", t, d)}
		if d == 0 {
			f.Skipped, f.OK = true, true
			f.Measured += " (direct held no rate)"
		} else {
			f.Ratio = float64(t) / float64(d)
			f.OK = f.Ratio >= FloorTunnelRateRatio
		}
		out = append(out, f)

		f = TunnelFloor{Name: fmt.Sprintf("%sp99 at %d/s, %s: tunnel ≤ direct + %s", prefix, FloorTunnelP99Rate, mode, FloorTunnelP99Extra)}
		dr, ok1 := r.run(mode, PathDirect, FloorTunnelP99Rate)
		tr, ok2 := r.run(mode, PathTunnel, FloorTunnelP99Rate)
		if !ok1 || !ok2 {
			f.Skipped, f.OK = true, true
			f.Measured = "not run at this rate"
		} else {
			extra := time.Duration(tr.P99US-dr.P99US) * time.Microsecond
			f.Measured = fmt.Sprintf("tunnel %dµs, direct %dµs (+%dµs)", tr.P99US, dr.P99US, tr.P99US-dr.P99US)
			if dr.P99US > 0 {
				f.Ratio = float64(tr.P99US) / float64(dr.P99US)
			}
			f.OK = extra <= FloorTunnelP99Extra && tr.Held()
			if !tr.Held() {
				f.Measured += fmt.Sprintf(", %d errors through the tunnel", tr.Errors)
			}
		}
		out = append(out, f)
	}

	f := TunnelFloor{Name: fmt.Sprintf("%sTCP bytes a second: tunnel ≥ %.1f × direct", prefix, FloorTunnelTCPRatio)}
	dt, ok1 := r.tcp(PathDirect)
	tt, ok2 := r.tcp(PathTunnel)
	switch {
	case len(r.TCP) == 0:
		f.Skipped, f.OK, f.Measured = true, true, "not run"
	case !ok1:
		f.Skipped, f.OK, f.Measured = true, true, "the direct run failed"
	case !ok2:
		f.Measured = "through the tunnel failed"
	default:
		f.Ratio = tt.BytesPerSecond / dt.BytesPerSecond
		f.Measured = fmt.Sprintf("tunnel %s/s, direct %s/s", mib(tt.BytesPerSecond), mib(dt.BytesPerSecond))
		f.OK = f.Ratio >= FloorTunnelTCPRatio
	}
	return append(out, f)
}

// CheckFloors returns an error naming each floor missed, nil when none
// was.
func (r TunnelReport) CheckFloors() error {
	var errs []error
	for _, f := range r.ComputeFloors() {
		if !f.OK {
			errs = append(errs, fmt.Errorf("%s: %s", f.Name, f.Measured))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%d of issue 24's floors missed: %w", len(errs), errors.Join(errs...))
}

func mib(bytesPerSecond float64) string { return fmt.Sprintf("%.1f MiB", bytesPerSecond/(1<<20)) }

// Format writes the report as tables.
func (r TunnelReport) Format(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\trate/s\tpath\tagent\tsent\terrors\tp50 µs\tp99 µs\tmax µs\tlate p99 µs\tCPU/req µs\tagent CPU/req µs\tedge requests\tevents\t")
	for _, run := range r.Runs {
		cpu, agentCPU, reqs, evs := "-", "-", "-", "-"
		if r.Target.PID != 0 {
			cpu = fmt.Sprintf("%.0f", float64(run.CPUPerRequest())/float64(time.Microsecond))
		}
		if run.AgentCPU > 0 || run.Agent != "" {
			agentCPU = fmt.Sprintf("%.0f", float64(run.AgentCPUPerRequest())/float64(time.Microsecond))
		}
		if e := run.Events; e != nil {
			reqs, evs = fmt.Sprint(e.Requests), fmt.Sprint(e.Published)
			if e.Dropped > 0 {
				evs += fmt.Sprintf(" (%d dropped)", e.Dropped)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n", run.Mode, run.Rate, run.Path, dashUnless(run.Agent != "", run.Agent),
			run.Sent, run.Errors, run.P50US, run.P99US, run.MaxUS, run.LateP99US, cpu, agentCPU, reqs, evs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, run := range r.Runs {
		if run.FirstError != "" {
			fmt.Fprintf(w, "  %s %d/s %s, first error: %s\n", run.Mode, run.Rate, strings.TrimSpace(run.Path+" "+run.Agent), run.FirstError)
		}
	}
	fmt.Fprintln(w)
	for _, mode := range r.modes() {
		held := []string{fmt.Sprintf("direct %d/s", r.HighestHeld(mode, PathDirect))}
		for _, kind := range r.agentKinds() {
			if kind == AgentSluiceRoute {
				sub := r.forAgent(kind)
				held = append(held, fmt.Sprintf("%s %d/s, %s %d/s", PathRoute, sub.HighestHeld(mode, PathRoute), PathRouteModules, sub.HighestHeld(mode, PathRouteModules)))
				continue
			}
			held = append(held, fmt.Sprintf("%s %d/s", cmp.Or(kind, PathTunnel), r.forAgent(kind).HighestHeld(mode, PathTunnel)))
		}
		fmt.Fprintf(w, "highest rate held with no error, %s: %s\n", mode, strings.Join(held, ", "))
	}
	fmt.Fprintln(w, "(latencies are from when each request was due; late p99 is how late the bench started them, its own lag)")
	fmt.Fprintln(w, "(CPU/req is the spawned sluice's CPU time over the run, NATS and the pipeline included, over the requests sent; agent CPU/req the agent process's)")
	for _, t := range r.TCP {
		path := strings.TrimSpace(t.Path + " " + t.Agent)
		if t.Error != "" {
			fmt.Fprintf(w, "TCP %s: %s\n", path, t.Error)
			continue
		}
		fmt.Fprintf(w, "TCP %s: %d MiB in %s, %s/s", path, t.Bytes>>20, t.Elapsed.Round(time.Millisecond), mib(t.BytesPerSecond))
		if t.AgentCPU > 0 {
			fmt.Fprintf(w, ", agent CPU %s", t.AgentCPU.Round(time.Millisecond))
		}
		fmt.Fprintln(w)
	}
	r.formatAgents(w)
	if m := r.Memory; m != nil {
		fmt.Fprintf(w, "idle sessions: %d of %d connected over %d accounts, RSS %d → %d KiB, %.1f KiB a session",
			m.Connected, m.Sessions, m.Accounts, m.RSSBefore>>10, m.RSSAfter>>10, m.KiBPerSession)
		if m.Error != "" {
			fmt.Fprintf(w, " (%s)", m.Error)
		}
		fmt.Fprintln(w)
	}
	if fl := r.Flood; fl != nil {
		if fl.Error != "" {
			fmt.Fprintf(w, "flood: %s\n", fl.Error)
		} else {
			fmt.Fprintf(w, "flood: A at %d/s alone p50 %dµs p99 %dµs; beside B's %d connections p50 %dµs p99 %dµs; B answered %d, refused %d\n",
				fl.Baseline.Rate, fl.Baseline.P50US, fl.Baseline.P99US, fl.Clients, fl.Flooded.P50US, fl.Flooded.P99US, fl.FloodAnswered, fl.FloodRefused)
		}
	}
	fmt.Fprintln(w, "\nfloors (issue 24; those of the rates, p99 and TCP for each agent, issue 25):")
	for _, f := range r.Floors {
		verdict := "ok"
		switch {
		case f.Skipped:
			verdict = "skipped"
		case !f.OK:
			verdict = "MISSED"
		}
		ratio := ""
		if f.Ratio != 0 && !strings.Contains(f.Name, "memory") {
			ratio = fmt.Sprintf(" (ratio %.2f)", f.Ratio)
		}
		fmt.Fprintf(w, "  %-7s %s: %s%s\n", verdict, f.Name, f.Measured, ratio)
	}
	fmt.Fprintln(w, "\nthe agents beside direct (issue 25):")
	return r.formatComparison(w)
}

// WriteJSON writes the report as indented JSON.
func (r TunnelReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
