package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/loadgen"
)

// sdkAgentCommand is the hidden command of `sluice-bench` that runs the
// Go agent SDK as an agent process of its own, for bench tunnel.
const sdkAgentCommand = "sdk-agent"

// newBenchSDKAgentCommand returns the hidden `sluice-bench sdk-agent`,
// which `sluice-bench tunnel --agents sdk` runs so that the SDK's CPU
// time and memory are measured per process, as sluice-agent's are. It
// prints one JSON line, {"http_url":...,"tcp_url":...,"tunnels":N}, once
// its endpoints are bound, and runs until SIGTERM or the end of its
// standard input.
func newBenchSDKAgentCommand() *cobra.Command {
	var cfg loadgen.SDKAgentConfig
	cmd := &cobra.Command{
		Use:    sdkAgentCommand,
		Short:  "The Go agent SDK as an agent process of its own, for sluice-bench tunnel",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Authtoken == "" {
				cfg.Authtoken = os.Getenv("SLUICE_AGENT_AUTHTOKEN")
			}
			return loadgen.ServeSDKAgent(cmd.Context(), cfg, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Authtoken, "authtoken", "", "the tunnel credential's token (default: $SLUICE_AGENT_AUTHTOKEN)")
	fl.StringVar(&cfg.ServerAddr, "server-addr", "", "the edge's agents listener, host:port")
	fl.StringVar(&cfg.CAFile, "ca", "", "PEM file of the CA the agent trusts at the edge (sluice serve --dev logs it as agents_ca)")
	fl.StringVar(&cfg.HTTPUpstream, "http-upstream", "", "the URL the HTTP endpoint forwards to")
	fl.StringVar(&cfg.HTTPHost, "http-host", "", "the name of the HTTP endpoint")
	fl.StringVar(&cfg.TCPUpstream, "tcp-upstream", "", "host:port a TCP endpoint forwards to (default: no TCP endpoint)")
	fl.IntVar(&cfg.ExtraTunnels, "extra-tunnels", 0, "more HTTP endpoints, of random names, forwarding to the HTTP upstream")
	fl.StringVar(&cfg.ExtraDomain, "extra-domain", "", "the domain under which the extra endpoints' random names are (default: names the edge picks)")
	return cmd
}
