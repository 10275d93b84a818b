package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/agent"
	"github.com/sluicehq/sluice/internal/agent/agentconfig"
	"github.com/sluicehq/sluice/internal/agent/localapi"
)

func newHTTPCommand(g *globals) *cobra.Command {
	var t struct {
		domain, hostHeader string
		basicAuth, schemes []string
		inspect            bool
	}
	cmd := &cobra.Command{
		Use:   "http PORT|ADDR|URL",
		Short: "Forward a public HTTP endpoint to a local address",
		Example: `  sluice-agent http 3000
  sluice-agent http 3000 --domain app.example.com
  sluice-agent http https://localhost:8443 --host-header rewrite`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec := map[string]any{"name": "command_line", "proto": "http", "addr": args[0], "inspect": t.inspect}
			if t.domain != "" {
				spec["domain"] = t.domain
			}
			if t.hostHeader != "" {
				spec["host_header"] = t.hostHeader
			}
			if len(t.basicAuth) > 0 {
				spec["basic_auth"] = t.basicAuth
			}
			if len(t.schemes) > 0 {
				spec["schemes"] = t.schemes
			}
			return runCommandLine(cmd, g, spec)
		},
	}
	f := cmd.Flags()
	f.StringVar(&t.domain, "domain", "", "the domain to serve: a reserved one, or a name under a reserved wildcard (default: a random one)")
	f.StringVar(&t.hostHeader, "host-header", "", `the Host the local service sees: "rewrite" for its own address, or a value (default: the public one)`)
	f.StringSliceVar(&t.basicAuth, "basic-auth", nil, "user:password a public request must present (repeatable)")
	f.StringSliceVar(&t.schemes, "scheme", nil, "public schemes, http and/or https (default both)")
	f.BoolVar(&t.inspect, "inspect", true, "capture requests for the inspector and the local API")
	return cmd
}

func newTCPCommand(g *globals) *cobra.Command {
	var remoteAddr string
	cmd := &cobra.Command{
		Use:     "tcp PORT|ADDR",
		Short:   "Forward a public TCP address to a local address",
		Example: `  sluice-agent tcp 5432`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec := map[string]any{"name": "command_line", "proto": "tcp", "addr": args[0]}
			if remoteAddr != "" {
				spec["remote_addr"] = remoteAddr
			}
			return runCommandLine(cmd, g, spec)
		},
	}
	cmd.Flags().StringVar(&remoteAddr, "remote-addr", "", "the public address to bind, host:port of the edge's TCP range (default: a free one)")
	return cmd
}

func newTunnelCommand(g *globals) *cobra.Command {
	var t struct {
		labels     []string
		hostHeader string
		inspect    bool
	}
	cmd := &cobra.Command{
		Use:   "tunnel --label NAME=VALUE... PORT|ADDR|URL",
		Short: "Start a labeled tunnel, which the routes of HTTPS edges reach by its labels",
		Long: `Start a labeled tunnel to a local address. It has no public URL of its own: the routes
of HTTPS edges whose tunnel group backend selects its labels send their requests to it.`,
		Example: `  sluice-agent tunnel --label edge=edghts_2G9ZQx1 8080
  sluice-agent tunnel --label team=web --label env=prod https://localhost:8443`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(t.labels) == 0 {
				return errors.New("give the tunnel's labels with --label NAME=VALUE (repeatable)")
			}
			spec := map[string]any{"name": "command_line", "labels": t.labels, "addr": args[0], "inspect": t.inspect}
			if t.hostHeader != "" {
				spec["host_header"] = t.hostHeader
			}
			return runCommandLine(cmd, g, spec)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&t.labels, "label", nil, "a label, NAME=VALUE (repeatable)")
	f.StringVar(&t.hostHeader, "host-header", "", `the Host the local service sees: "rewrite" for its own address, or a value (default: the public one)`)
	f.BoolVar(&t.inspect, "inspect", true, "capture requests for the inspector and the local API")
	return cmd
}

// runCommandLine runs the one tunnel of the command line.
func runCommandLine(cmd *cobra.Command, g *globals, spec map[string]any) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(spec)
	t, err := agentconfig.DecodeTunnelJSON(raw)
	if err != nil {
		return err
	}
	return run(cmd, cfg, []agentconfig.Tunnel{t})
}

func newStartCommand(g *globals) *cobra.Command {
	var all, none bool
	cmd := &cobra.Command{
		Use:   "start NAME... | --all | --none",
		Short: "Start tunnels of the configuration file",
		Example: `  sluice-agent start web api
  sluice-agent start --all
  sluice-agent start --none --log=stdout   # only the local API: tools start the tunnels`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			tunnels, err := pick(cfg, args, all, none)
			if err != nil {
				return err
			}
			return run(cmd, cfg, tunnels)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "start every tunnel of the configuration")
	cmd.Flags().BoolVar(&none, "none", false, "start no tunnel: only the session and the local API")
	return cmd
}

// pick returns the configuration's tunnels that start's arguments name.
func pick(cfg agentconfig.Config, names []string, all, none bool) ([]agentconfig.Tunnel, error) {
	known := make([]string, 0, len(cfg.Tunnels))
	for name := range cfg.Tunnels {
		known = append(known, name)
	}
	sort.Strings(known)
	switch {
	case all && none, (all || none) && len(names) > 0:
		return nil, errors.New("give tunnel names, --all or --none: one of them")
	case none:
		return nil, nil
	case all:
		names = known
	case len(names) == 0:
		return nil, fmt.Errorf("name the tunnels to start (the configuration has %s), or give --all or --none", listOrNone(known))
	}
	var out []agentconfig.Tunnel
	for _, name := range names {
		t, ok := cfg.Tunnels[name]
		if !ok {
			return nil, fmt.Errorf("no tunnel %q in the configuration (it has %s)", name, listOrNone(known))
		}
		t.Name = name
		out = append(out, t)
	}
	return out, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// run runs the agent with tunnels, and the local API, until a signal.
func run(cmd *cobra.Command, cfg agentconfig.Config, tunnels []agentconfig.Tunnel) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	log, closeLog, err := newLogger(cfg.Log, cfg.LogFormat, cfg.LogLevel, stdout, stderr)
	if err != nil {
		return err
	}
	defer closeLog()
	roots, err := rootCAs(cfg.RootCAs)
	if err != nil {
		return err
	}
	captures := localapi.NewCaptures(localapi.CapturesConfig{MaxBytes: cfg.InspectDBSize})
	opts := agent.Options{
		ServerAddrs: cfg.ServerAddrs, Authtoken: cfg.Authtoken, RootCAs: roots,
		HeartbeatInterval: cfg.HeartbeatInterval, HeartbeatTolerance: cfg.HeartbeatTolerance,
		Metadata: cfg.Metadata, Version: version, Log: log, Captures: captures, Tunnels: tunnels,
	}
	if cfg.Log != "stdout" {
		// The log is elsewhere: say where each tunnel is on stdout.
		opts.OnTunnelStarted = func(t localapi.Tunnel) {
			from := t.PublicURL
			if t.Proto == "labeled" {
				from = "labels " + strings.Join(t.Config.LabelPairs(), ",")
			}
			fmt.Fprintf(stdout, "%-14s %s -> %s\n", "Forwarding", from, t.Config.Addr)
		}
	}
	a, err := agent.New(opts)
	if err != nil {
		return err
	}
	log.Info("open config file", "obj", "config", "path", strings.Join(cfg.Files, ","))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWeb, err := startWeb(cfg, a, captures, log, stdout)
	if err != nil {
		return err
	}
	defer stopWeb()

	// Tell the edge which signal stopped the agent.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			// A second signal ends the process at once (climain
			// stopped catching them at the first).
			signal.Stop(sigs)
			name := "SIGINT"
			if s == syscall.SIGTERM {
				name = "SIGTERM"
			}
			a.SetStopReason("the agent received " + name)
			log.Info("received stop request", "obj", "app", "signal", name)
			cancel()
		case <-ctx.Done():
		}
	}()
	err = a.Run(ctx)
	log.Info("session closed", "obj", "csess")
	return err
}

// startWeb serves the local API on web_addr, unless it is off, and
// returns what stops it.
func startWeb(cfg agentconfig.Config, a *agent.Agent, captures *localapi.Captures, log *slog.Logger, stdout io.Writer) (func(), error) {
	if cfg.WebAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", cfg.WebAddr)
	if err != nil {
		log.Error("failed to start the web service", "obj", "web", "addr", cfg.WebAddr, "err", err)
		return nil, fmt.Errorf("the local API's web_addr %s: %w (set web_addr to another address, or false)", cfg.WebAddr, err)
	}
	api := localapi.New(localapi.Config{
		Backend: a, Captures: captures, DecodeTunnel: agentconfig.DecodeTunnelJSON,
		AllowHosts: cfg.WebAllowHosts, Version: version, Logger: log,
	})
	srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	log.Info("starting web service", "obj", "web", "addr", ln.Addr().String(), "allow_hosts", strings.Join(cfg.WebAllowHosts, ","))
	if cfg.Log != "stdout" {
		fmt.Fprintf(stdout, "%-14s http://%s\n", "Web Interface", ln.Addr().String())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		_ = srv.Close()
		<-done
	}, nil
}

// rootCAs returns the pool of root_cas: nil (the system's) for trusted
// and host, else the file's certificates.
func rootCAs(setting string) (*x509.CertPool, error) {
	if slices.Contains([]string{"", "trusted", "host"}, setting) {
		return nil, nil
	}
	pem, err := os.ReadFile(setting)
	if err != nil {
		return nil, fmt.Errorf("root_cas: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("root_cas: %s holds no PEM certificate", setting)
	}
	return pool, nil
}
