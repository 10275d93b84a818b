package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The kinds of agent RunTunnel measures, each in a process of its own.
const (
	// AgentSDK is the Go agent SDK, run by TunnelConfig.SDKAgent
	// (sluice-bench sdk-agent, ServeSDKAgent).
	AgentSDK = "sdk"
	// AgentSluice is sluice-agent, its tunnels not inspecting.
	AgentSluice = "sluice-agent"
	// AgentSluiceInspect is sluice-agent, its HTTP tunnels capturing
	// every exchange for the inspector.
	AgentSluiceInspect = "sluice-agent-inspect"
	// AgentSluiceRoute is sluice-agent with a labeled tunnel that an
	// HTTPS edge's two routes reach, one with every module that applies
	// to an HTTP request and one with none (measureRoutes).
	AgentSluiceRoute = "sluice-agent-route"
)

// Defaults of the agents' processes.
const (
	// DefaultTunnelAgentTunnels is how many tunnels each agent runs: the
	// HTTP one measured, the TCP one, and idle HTTP ones; 100 is as many
	// as one agent session may bind.
	DefaultTunnelAgentTunnels = 100
	// DefaultTunnelAgentBindTimeout bounds the wait for an agent's
	// tunnels to be bound.
	DefaultTunnelAgentBindTimeout = 60 * time.Second
	// agentStopTimeout bounds the wait for an agent to end after SIGTERM.
	agentStopTimeout = 10 * time.Second
)

// TunnelAgentKinds are the kinds of agent RunTunnel knows.
func TunnelAgentKinds() []string {
	return []string{AgentSDK, AgentSluice, AgentSluiceInspect, AgentSluiceRoute}
}

// agentHost returns the name of kind's measured HTTP endpoint, its own so
// that one kind's endpoints never meet another's.
func agentHost(kind string) string {
	label := map[string]string{AgentSDK: "sdk", AgentSluice: "agent", AgentSluiceInspect: "inspect", AgentSluiceRoute: "route"}[kind]
	return label + "." + strings.TrimPrefix(TunnelDomain, "*.")
}

// agentSpec is what an agent process forwards and where it connects.
type agentSpec struct {
	kind         string
	token        string
	server       string // the edge's agents listener, HOST:PORT
	caFile       string
	httpUpstream string // HOST:PORT of the local HTTP server
	tcpUpstream  string // HOST:PORT of the local TCP sink
	tunnels      int    // in all
	sdkCommand   []string
	sluiceAgent  string
	bindTimeout  time.Duration
	extraDomain  string
	measuredHost string
}

// agentBound is where a spawned agent's tunnels are, once all are bound.
type agentBound struct {
	httpURL, tcpURL string
	tunnels         int
	webAddr         string // sluice-agent's local API
}

// agentProcess is a spawned agent.
type agentProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	dir    string // sluice-agent's configuration, removed at stop
	bound  chan agentBound
	exited chan struct{}

	mu   sync.Mutex
	last []string // the last lines it wrote
}

// spawnAgent starts spec's agent and waits, up to spec.bindTimeout, for
// every tunnel to be bound.
func spawnAgent(ctx context.Context, spec agentSpec) (_ *agentProcess, _ agentBound, err error) {
	p := &agentProcess{bound: make(chan agentBound, 1), exited: make(chan struct{})}
	var args []string
	switch spec.kind {
	case AgentSDK:
		if len(spec.sdkCommand) == 0 {
			return nil, agentBound{}, fmt.Errorf("agent %s: no command to run the SDK's agent", spec.kind)
		}
		args = append(append(args, spec.sdkCommand...),
			"--server-addr", spec.server, "--ca", spec.caFile,
			"--http-upstream", "http://"+spec.httpUpstream, "--http-host", spec.measuredHost,
			"--tcp-upstream", spec.tcpUpstream, "--extra-tunnels", strconv.Itoa(spec.tunnels-2), "--extra-domain", spec.extraDomain)
	case AgentSluice, AgentSluiceInspect, AgentSluiceRoute:
		if spec.sluiceAgent == "" {
			return nil, agentBound{}, fmt.Errorf("agent %s: no sluice-agent binary", spec.kind)
		}
		if p.dir, err = os.MkdirTemp("", "sluice-bench-agent-"); err != nil {
			return nil, agentBound{}, err
		}
		file := filepath.Join(p.dir, "sluice-agent.yml")
		if err := os.WriteFile(file, sluiceAgentConfig(spec), 0o600); err != nil {
			_ = os.RemoveAll(p.dir)
			return nil, agentBound{}, fmt.Errorf("writing sluice-agent's configuration: %w", err)
		}
		args = []string{spec.sluiceAgent, "start", "--all", "--config", file, "--log=stdout", "--log-format=json",
			// A free port, which web_addr of the file may not say.
			"--web-addr", "127.0.0.1:0"}
	default:
		return nil, agentBound{}, fmt.Errorf("agent %q: want one of %s", spec.kind, strings.Join(TunnelAgentKinds(), ", "))
	}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Env = withoutAgentEnv(os.Environ())
	if spec.kind == AgentSDK {
		p.cmd.Env = append(p.cmd.Env, "SLUICE_AGENT_AUTHTOKEN="+spec.token)
	}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, agentBound{}, err
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, agentBound{}, err
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, agentBound{}, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, agentBound{}, fmt.Errorf("starting %s: %w", args[0], err)
	}
	var readers sync.WaitGroup
	readers.Go(func() { p.readStdout(stdout, spec) })
	readers.Go(func() { p.readLines(stderr, nil) })
	go func() {
		readers.Wait()
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	timer := time.NewTimer(spec.bindTimeout)
	defer timer.Stop()
	select {
	case b := <-p.bound:
		return p, b, nil
	case <-p.exited:
		return nil, agentBound{}, fmt.Errorf("agent %s exited before its %d tunnels were bound:\n%s", spec.kind, spec.tunnels, p.tail())
	case <-timer.C:
		return nil, agentBound{}, fmt.Errorf("agent %s did not bind its %d tunnels within %s:\n%s", spec.kind, spec.tunnels, spec.bindTimeout, p.tail())
	case <-ctx.Done():
		return nil, agentBound{}, ctx.Err()
	}
}

// sluiceAgentConfig returns sluice-agent's configuration file for spec:
// the measured HTTP tunnel main, the TCP tunnel sink, and idle HTTP
// tunnels of random names under spec.extraDomain.
func sluiceAgentConfig(spec agentSpec) []byte {
	q := strconv.Quote
	inspect := strconv.FormatBool(spec.kind == AgentSluiceInspect)
	var b strings.Builder
	fmt.Fprintf(&b, "version: 2\nauthtoken: %s\nserver_addr: %s\nroot_cas: %s\ntunnels:\n", q(spec.token), q(spec.server), q(spec.caFile))
	if spec.kind == AgentSluiceRoute {
		// The labeled tunnel the routes reach, named main as the others'
		// measured tunnel is, and the TCP sink.
		fmt.Fprintf(&b, "  main:\n    labels: [%s]\n    addr: %s\n    inspect: false\n", q(routeLabel+"="+routeLabelValue), q("http://"+spec.httpUpstream))
		fmt.Fprintf(&b, "  sink:\n    proto: tcp\n    addr: %s\n", q(spec.tcpUpstream))
		return []byte(b.String())
	}
	fmt.Fprintf(&b, "  main:\n    proto: http\n    addr: %s\n    domain: %s\n    schemes: [http]\n    inspect: %s\n", q("http://"+spec.httpUpstream), q(spec.measuredHost), inspect)
	fmt.Fprintf(&b, "  sink:\n    proto: tcp\n    addr: %s\n", q(spec.tcpUpstream))
	for i := range spec.tunnels - 2 {
		fmt.Fprintf(&b, "  idle-%03d:\n    proto: http\n    addr: %s\n    domain: %s\n    schemes: [http]\n    inspect: %s\n",
			i, q("http://"+spec.httpUpstream), q("x"+randomHex(6)+"."+spec.extraDomain), inspect)
	}
	return []byte(b.String())
}

// readStdout reads what the agent writes on its standard output, and
// sends on p.bound once its tunnels are all bound: the SDK's agent
// writes an SDKAgentBound line; sluice-agent logs JSON, a "started
// tunnel" line for each tunnel and "starting web service" for its local
// API.
func (p *agentProcess) readStdout(r io.Reader, spec agentSpec) {
	var b agentBound
	started := map[string]bool{}
	sent := false
	p.readLines(r, func(line string) {
		if sent {
			return
		}
		if spec.kind == AgentSDK {
			var sb SDKAgentBound
			if json.Unmarshal([]byte(line), &sb) == nil && sb.HTTPURL != "" {
				p.bound <- agentBound{httpURL: sb.HTTPURL, tcpURL: sb.TCPURL, tunnels: sb.Tunnels}
				sent = true
			}
			return
		}
		var rec struct{ Msg, Name, URL, Addr string }
		if json.Unmarshal([]byte(line), &rec) != nil {
			return
		}
		switch rec.Msg {
		case "starting web service":
			b.webAddr = rec.Addr
		case "started tunnel":
			started[rec.Name] = true
			switch rec.Name {
			case "main":
				b.httpURL = rec.URL
			case "sink":
				b.tcpURL = rec.URL
			}
		}
		if len(started) == spec.tunnels {
			b.tunnels = len(started)
			p.bound <- b
			sent = true
		}
	})
}

// readLines keeps the last lines of r, each passed to each when not nil.
func (p *agentProcess) readLines(r io.Reader, each func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.last = append(p.last, line)
		if len(p.last) > 20 {
			p.last = p.last[len(p.last)-20:]
		}
		p.mu.Unlock()
		if each != nil {
			each(line)
		}
	}
}

// tail returns the last lines the agent wrote.
func (p *agentProcess) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.last, "\n")
}

// pid is the agent's process id.
func (p *agentProcess) pid() int { return p.cmd.Process.Pid }

// stop ends the agent, if it started, with SIGTERM (and the end of its
// standard input) and after agentStopTimeout SIGKILL, and removes its
// configuration.
func (p *agentProcess) stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.stdin.Close()
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		timer := time.NewTimer(agentStopTimeout)
		select {
		case <-p.exited:
		case <-timer.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		timer.Stop()
	}
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
}

// countAPITunnels returns how many tunnels sluice-agent's local API at
// addr lists.
func countAPITunnels(ctx context.Context, addr string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/tunnels", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /api/tunnels answered %d", resp.StatusCode)
	}
	var list struct {
		Tunnels []struct {
			Name      string `json:"name"`
			PublicURL string `json:"public_url"`
		} `json:"tunnels"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return 0, fmt.Errorf("GET /api/tunnels: %w", err)
	}
	return len(list.Tunnels), nil
}

// withoutAgentEnv returns env without the agents' variables, so that a
// spawned agent takes only the configuration it is given.
func withoutAgentEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SLUICE_") && !strings.HasPrefix(kv, "NGROK_") {
			out = append(out, kv)
		}
	}
	return out
}
