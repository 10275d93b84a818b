package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
)

// version is the agent's version; release builds set it with -ldflags.
var version = "0.1.0-dev"

// devConfig is where `sluice serve --dev` writes an agent configuration
// for this machine: its dev credential's authtoken, the edge's address
// and the dev CA. sluice-agent reads it when no other configuration
// exists, so that a newcomer's second command works.
const devConfig = "sluice-data/edge/agent.yml"

// globals are the flags every command takes.
type globals struct {
	configs    []string
	authtoken  string
	serverAddr string
	webAddr    string
	log        string
	logFormat  string
	logLevel   string
	region     string
}

func newRootCommand() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "sluice-agent",
		Short: "Put a local service online through a sluice edge",
		Long: `sluice-agent puts a local service online through a sluice edge.

  sluice-agent http 3000                 # a public URL for http://localhost:3000
  sluice-agent tcp 5432                  # a public TCP address for localhost:5432
  sluice-agent tunnel --label edge=edghts_2G9ZQx1 8080
                                         # a labeled tunnel, which HTTPS edges' routes reach
  sluice-agent start web api             # tunnels of the configuration file, by name
  sluice-agent start --none              # no tunnel: the local API on 127.0.0.1:4040 starts them

The configuration file (version 2) is ` + "`" + `$SLUICE_AGENT_CONFIG` + "`" + ` or sluice-agent.yml in
the user's configuration directory; --config names others (merged in order). Without
any, the agent uses the one ` + "`sluice serve --dev`" + ` writes to ./` + devConfig + `.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("sluice-agent version {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringSliceVar(&g.configs, "config", nil, "configuration files, merged in order (repeat the flag, or separate with commas)")
	pf.StringVar(&g.authtoken, "authtoken", "", "the tunnel credential's authtoken (overrides the configuration's)")
	pf.StringVar(&g.serverAddr, "server-addr", "", "the edge's agent address, host:port (overrides server_addr)")
	pf.StringVar(&g.webAddr, "web-addr", "", "the local API's address, host:port or false (overrides web_addr)")
	pf.StringVar(&g.log, "log", "", "where the log goes: stdout, stderr, false or a file (overrides log)")
	pf.StringVar(&g.logFormat, "log-format", "", "logfmt, json or term (overrides log_format)")
	pf.StringVar(&g.logLevel, "log-level", "", "debug, info, warn or error (overrides log_level)")
	// Tools written for other agents pass --region; sluice's agent
	// connects where server_addr says, and ignores it.
	pf.StringVar(&g.region, "region", "", "ignored: sluice-agent connects to server_addr (for tools that pass it)")
	_ = pf.MarkHidden("region")
	root.AddCommand(newHTTPCommand(g), newTCPCommand(g), newTunnelCommand(g), newStartCommand(g), newConfigCommand(g), newAuthtokenCommand(g))
	return root
}

// configPaths returns the configuration files to read: --config's, or
// the default file, or the dev server's, whichever exists first; none
// when none does.
func (g *globals) configPaths() ([]string, error) {
	if len(g.configs) > 0 {
		return g.configs, nil
	}
	for _, p := range []string{agentconfig.DefaultPath(), devConfig} {
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the configuration: %w", err)
		}
		if p == devConfig {
			// A file in the working directory names the edge the
			// agent sends its token and traffic to: only one this
			// user wrote, and kept private, is read.
			if err := ownPrivateFile(info); err != nil {
				return nil, fmt.Errorf("%s: %w: sluice serve --dev writes it so; give --config to read it anyway", absPath(p), err)
			}
		}
		return []string{p}, nil
	}
	return nil, nil
}

// loadConfig reads the configuration and lays the flags over it.
func (g *globals) loadConfig() (agentconfig.Config, error) {
	paths, err := g.configPaths()
	if err != nil {
		return agentconfig.Config{}, err
	}
	cfg := agentconfig.Defaults()
	if len(paths) > 0 {
		if cfg, err = agentconfig.Load(paths); err != nil {
			return cfg, err
		}
	}
	if g.authtoken != "" {
		cfg.Authtoken = g.authtoken
	}
	if g.serverAddr != "" {
		cfg.ServerAddrs = []string{g.serverAddr}
	}
	switch g.webAddr {
	case "":
	case "false":
		cfg.WebAddr = ""
	default:
		cfg.WebAddr = g.webAddr
	}
	if g.log != "" {
		cfg.Log = g.log
	}
	if g.logFormat != "" {
		cfg.LogFormat = g.logFormat
	}
	if g.logLevel != "" {
		cfg.LogLevel = g.logLevel
	}
	return cfg, nil
}

// absPath returns p absolute, for messages.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
