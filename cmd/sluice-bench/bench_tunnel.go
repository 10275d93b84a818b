package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/bytesize"
	"github.com/sluicehq/sluice/internal/loadgen"
)

// defaultTunnelMemoryLimit is the --memory-limit of the sluice serve the
// tunnel bench spawns: enough not to weigh on a thousand sessions.
const defaultTunnelMemoryLimit = "1GiB"

func newBenchTunnelCommand() *cobra.Command {
	var (
		cfg         loadgen.TunnelConfig
		spawn       attackSpawn
		tcpBytes    string
		asJSON      bool
		noVerdict   bool
		sluiceAgent string
	)
	cmd := &cobra.Command{
		Use:   "tunnel",
		Short: "Measure the edge of a spawned sluice serve --dev against the same local server reached directly (issue 24)",
		Long: `Spawn sluice serve --dev (sluice beside this binary, in PATH, or --sluice-bin; loopback ports, a
temporary data dir) and measure its edge with the Go agent SDK in this
process, whose endpoints forward to an HTTP server and a TCP sink also in
this process, each reached directly as well:

  HTTP    open-loop requests at each of --rates for --duration, through a
          pool of kept-alive connections and with a new connection per
          request, directly and through the tunnel: p50, p99 and max
          latency (µs, from when each request was due), sent, errors (not
          sent for --max-in-flight in flight, failed, or not 200); the
          highest rate held with no error; the process's CPU time per
          request (NATS and the pipeline are in the process too)
  events  per tunnel run, the deltas of sluice_edge_http_requests_total
          and sluice_edge_events_published_total beside the requests sent
  TCP     --tcp-bytes through a TCP endpoint and directly
  memory  the process's RSS before and after --idle-sessions agents, each
          with an HTTP endpoint of a random name, spread over accounts of
          100 sessions, made through its NATS server

It prints issue 24's floors, measured in the same run: the highest rate
through the tunnel at least half the direct one; p99 at 1,000 requests a
second at most direct p99 + 2 ms; TCP at least half of direct; at most 32
KiB per idle session; and one event per request. It exits non-zero when
one is missed, unless --no-verdict.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			n, err := bytesize.Parse(tcpBytes)
			if err != nil {
				return fmt.Errorf("--tcp-bytes %q: %w", tcpBytes, err)
			}
			cfg.TCPBytes = n
			if n == 0 {
				cfg.TCPBytes = -1
			}
			if cfg.IdleSessions == 0 {
				cfg.IdleSessions = -1
			}
			if err := resolveAgents(&cfg, sluiceAgent); err != nil {
				return err
			}
			// The agents' tunnels are all in account A, one agent's
			// perhaps not yet gone when the next binds.
			spawn.maxEndpoints = (len(cfg.Agents) + 1) * max(cfg.AgentTunnels, loadgen.DefaultTunnelAgentTunnels)
			served, err := spawnAttackServe(ctx, spawn, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer served.stop()
			target, err := served.tunnelTarget()
			if err != nil {
				return err
			}
			report, err := loadgen.RunTunnel(ctx, cfg, target, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			verdict := report.CheckFloors()
			if noVerdict {
				verdict = nil
			}
			return printReport(cmd, report, asJSON, "bench tunnel", verdict)
		},
	}
	fl := cmd.Flags()
	fl.IntSliceVar(&cfg.Rates, "rates", loadgen.DefaultTunnelRates(), "requests a second of the HTTP runs, comma-separated")
	fl.DurationVar(&cfg.Duration, "duration", loadgen.DefaultTunnelDuration, "how long each HTTP run lasts")
	fl.StringSliceVar(&cfg.Modes, "modes", []string{loadgen.TunnelKeepAlive, loadgen.TunnelNewConn}, "the HTTP modes: keep-alive, new-connection")
	fl.IntVar(&cfg.MaxInFlight, "max-in-flight", loadgen.DefaultTunnelMaxInFlight, "most requests in flight; one due past it is not sent and counts as an error")
	fl.IntVar(&cfg.KeepAliveConns, "keep-alive-conns", loadgen.DefaultTunnelKeepAliveConns, "connections of the keep-alive pool")
	fl.DurationVar(&cfg.RequestTimeout, "request-timeout", loadgen.DefaultTunnelRequestTimeout, "how long a request may take")
	fl.StringVar(&tcpBytes, "tcp-bytes", "256MiB", "bytes written through the TCP endpoint and directly (0 skips TCP)")
	fl.IntVar(&cfg.FloodClients, "flood-clients", loadgen.DefaultTunnelFloodClients, "account B's connections flooding its own endpoint while account A's latency is measured beside them (-1 skips the phase)")
	fl.IntVar(&cfg.FloodRate, "flood-rate", loadgen.DefaultTunnelFloodRate, "account A's requests a second in the flood phase, alone and beside B's flood")
	fl.IntVar(&cfg.IdleSessions, "idle-sessions", loadgen.DefaultTunnelIdleSessions, "idle agent sessions for the memory per session (0 skips it)")
	fl.StringSliceVar(&cfg.Agents, "agents", []string{loadgen.AgentSDK}, "the agents measured in turn, comma-separated: "+strings.Join(loadgen.TunnelAgentKinds(), ", "))
	fl.IntVar(&cfg.AgentTunnels, "agent-tunnels", loadgen.DefaultTunnelAgentTunnels, "tunnels each agent runs: the HTTP one measured, the TCP one, and idle HTTP ones")
	fl.StringVar(&sluiceAgent, "sluice-agent-bin", "", "the sluice-agent binary (default: beside this one, or in PATH)")
	fl.StringVar(&spawn.bin, "sluice-bin", "", "the sluice binary to spawn (default: beside this one, or in PATH)")
	fl.StringVar(&spawn.memoryLimit, "memory-limit", defaultTunnelMemoryLimit, "--memory-limit of the sluice spawned")
	fl.StringSliceVar(&spawn.extraArgs, "serve-arg", nil, "a further argument of the sluice serve spawned (repeat it)")
	fl.StringVar(&spawn.logFile, "serve-log", "", "write the spawned sluice's log to this file")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fl.BoolVar(&noVerdict, "no-verdict", false, "exit 0 even when a floor was missed")
	return cmd
}

// tunnelTarget is the edge of the spawned serve, for bench tunnel: its
// listeners, the dev CA, account A's key, and a way to make accounts.
func (p *attackServe) tunnelTarget() (loadgen.TunnelTarget, error) {
	edge, err := p.edgeAttrs(10 * time.Second)
	if err != nil {
		return loadgen.TunnelTarget{}, err
	}
	caPEM, err := os.ReadFile(edge["agents_ca"])
	if err != nil {
		return loadgen.TunnelTarget{}, fmt.Errorf("the edge's CA (agents_ca %q): %w", edge["agents_ca"], err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return loadgen.TunnelTarget{}, fmt.Errorf("%s holds no certificate", edge["agents_ca"])
	}
	if edge["http"] == "" || p.target.MetricsURL == "" {
		return loadgen.TunnelTarget{}, fmt.Errorf("the spawned serve has no public HTTP listener of its edge (%q) or no metrics listener (%q)", edge["http"], p.target.MetricsURL)
	}
	n := 0
	return loadgen.TunnelTarget{
		APIURL: p.target.URL, Token: p.target.TokenA,
		Agents: strings.TrimPrefix(edge["agents"], "tls://"), AgentsCAs: pool, AgentsCAFile: edge["agents_ca"],
		PublicHTTP: edge["http"], MetricsURL: p.target.MetricsURL, PID: p.target.PID,
		NewAccount: func(ctx context.Context) (string, error) {
			n++
			return p.accounts.create(ctx, fmt.Sprintf("tunnel-%d", n))
		},
	}, nil
}

// resolveAgents sets the commands of cfg's agents: this binary's
// sdk-agent for the SDK, and for sluice-agent bin, or sluice-agent
// beside this binary or in PATH.
func resolveAgents(cfg *loadgen.TunnelConfig, bin string) error {
	for _, kind := range cfg.Agents {
		switch kind {
		case loadgen.AgentSDK:
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this binary to run the SDK's agent: %w", err)
			}
			cfg.SDKAgent = []string{self, sdkAgentCommand}
		case loadgen.AgentSluice, loadgen.AgentSluiceInspect, loadgen.AgentSluiceRoute:
			if bin == "" {
				found, err := findBinary("sluice-agent", "go build -o bin/ ./cmd/sluice ./cmd/sluice-agent ./cmd/sluice-bench", "--sluice-agent-bin")
				if err != nil {
					return err
				}
				bin = found
			}
			cfg.SluiceAgent = bin
		}
	}
	return nil
}
