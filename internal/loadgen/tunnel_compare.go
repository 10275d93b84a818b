package loadgen

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// TunnelSummary sums up the runs of one path: directly, or through one
// kind of agent (issue 25's comparison).
type TunnelSummary struct {
	// Agent is the kind of agent, empty directly.
	Agent string `json:"agent,omitempty"`
	Path  string `json:"path"`
	// HighestHeld is the highest rate held with no error, per mode, and
	// P99At1000US the p99 at FloorTunnelP99Rate per mode, in
	// microseconds, for the modes run at it.
	HighestHeld map[string]int   `json:"highest_held"`
	P99At1000US map[string]int64 `json:"p99_at_1000_us,omitempty"`
	// TCPBytesPerSecond is 0 when TCP was not measured or failed.
	TCPBytesPerSecond float64 `json:"tcp_bytes_per_second,omitempty"`
	// AgentCPUPerRequestUS is the agent's CPU time over all its HTTP runs
	// divided by their requests sent, in microseconds.
	AgentCPUPerRequestUS float64 `json:"agent_cpu_per_request_us,omitempty"`
	// RSSBefore and RSSAfter are the agent's resident memory with its
	// tunnels bound, before and after the runs.
	RSSBefore uint64 `json:"agent_rss_before_bytes,omitempty"`
	RSSAfter  uint64 `json:"agent_rss_after_bytes,omitempty"`
}

// Compare sums up the direct path and each agent's, in that order.
func (r TunnelReport) Compare() []TunnelSummary {
	out := []TunnelSummary{r.summary("", PathDirect)}
	for _, kind := range r.agentKinds() {
		if kind == AgentSluiceRoute {
			sub := r.forAgent(kind)
			out = append(out, sub.summary(kind, PathRoute), sub.summary(kind, PathRouteModules))
			continue
		}
		out = append(out, r.forAgent(kind).summary(kind, PathTunnel))
	}
	return out
}

// summary sums up r's runs of path, r holding those of one agent only.
func (r TunnelReport) summary(kind, path string) TunnelSummary {
	s := TunnelSummary{Agent: kind, Path: path, HighestHeld: map[string]int{}, P99At1000US: map[string]int64{}}
	for _, mode := range r.modes() {
		s.HighestHeld[mode] = r.HighestHeld(mode, path)
		if run, ok := r.run(mode, path, FloorTunnelP99Rate); ok {
			s.P99At1000US[mode] = run.P99US
		}
	}
	if t, ok := r.tcp(path); ok {
		s.TCPBytesPerSecond = t.BytesPerSecond
	}
	var cpu time.Duration
	sent := 0
	for _, run := range r.Runs {
		if run.Path == path {
			cpu += run.AgentCPU
			sent += run.Sent
		}
	}
	if sent > 0 {
		s.AgentCPUPerRequestUS = float64(cpu) / float64(sent) / float64(time.Microsecond)
	}
	for _, a := range r.Agents {
		if a.Kind == kind && path != PathDirect {
			s.RSSBefore, s.RSSAfter = a.RSSBefore, a.RSSAfter
		}
	}
	return s
}

// formatAgents writes what each agent process was: its tunnels and its
// memory.
func (r TunnelReport) formatAgents(w io.Writer) {
	for _, a := range r.Agents {
		fmt.Fprintf(w, "agent %s (pid %d, http://%s): %d tunnels bound in %s", a.Kind, a.PID, a.Host, a.Tunnels, a.BindElapsed.Round(time.Millisecond))
		if a.APITunnels > 0 {
			fmt.Fprintf(w, " (its local API lists %d)", a.APITunnels)
		}
		fmt.Fprintf(w, ", RSS %d KiB before the runs, %d KiB after, peak %d KiB", a.RSSBefore>>10, a.RSSAfter>>10, a.RSSPeak>>10)
		if a.Error != "" {
			fmt.Fprintf(w, "; %s", a.Error)
		}
		fmt.Fprintln(w)
	}
}

// formatComparison writes the comparison of the agents beside direct.
func (r TunnelReport) formatComparison(w io.Writer) error {
	modes := r.modes()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"path"}
	for _, m := range modes {
		head = append(head, "held "+m)
	}
	for _, m := range modes {
		head = append(head, fmt.Sprintf("p99 µs @%d/s %s", FloorTunnelP99Rate, m))
	}
	head = append(head, "TCP MiB/s", "agent CPU/req µs", "agent RSS KiB before→after")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, s := range r.Compare() {
		name := s.Path
		switch {
		case s.Agent != "" && s.Path != PathTunnel:
			name = s.Agent + " " + s.Path
		case s.Agent != "":
			name = s.Agent
		}
		row := []string{name}
		for _, m := range modes {
			row = append(row, fmt.Sprintf("%d/s", s.HighestHeld[m]))
		}
		for _, m := range modes {
			p, ok := s.P99At1000US[m]
			row = append(row, dashUnless(ok, fmt.Sprint(p)))
		}
		row = append(row, dashUnless(s.TCPBytesPerSecond > 0, fmt.Sprintf("%.1f", s.TCPBytesPerSecond/(1<<20))),
			dashUnless(s.AgentCPUPerRequestUS > 0, fmt.Sprintf("%.0f", s.AgentCPUPerRequestUS)),
			dashUnless(s.RSSBefore > 0, fmt.Sprintf("%d→%d", s.RSSBefore>>10, s.RSSAfter>>10)))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

func dashUnless(ok bool, s string) string {
	if !ok {
		return "-"
	}
	return s
}
