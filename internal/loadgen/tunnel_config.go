package loadgen

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"
)

// The modes of the HTTP runs of RunTunnel.
const (
	// TunnelKeepAlive reuses a pool of connections.
	TunnelKeepAlive = "keep-alive"
	// TunnelNewConn opens a connection per request.
	TunnelNewConn = "new-connection"
)

// The paths a request of RunTunnel takes to the local server.
const (
	PathDirect = "direct"
	PathTunnel = "tunnel"
	// PathRoute is through an HTTPS edge's route to a labeled tunnel,
	// PathRouteModules through a route of the same edge and tunnel with
	// its modules on (AgentSluiceRoute).
	PathRoute        = "route"
	PathRouteModules = "route-modules"
)

// Defaults of TunnelConfig.
const (
	DefaultTunnelDuration       = 10 * time.Second
	DefaultTunnelMaxInFlight    = 512
	DefaultTunnelKeepAliveConns = 64
	DefaultTunnelRequestTimeout = 5 * time.Second
	DefaultTunnelTCPBytes       = 256 << 20
	DefaultTunnelIdleSessions   = 1000
	// DefaultTunnelSessionsPerAccount spreads the idle sessions over
	// accounts of 100 sessions each, the store's default limit of agent
	// sessions of an account.
	DefaultTunnelSessionsPerAccount = 100
	DefaultTunnelPause              = time.Second
	DefaultTunnelDrainTimeout       = 30 * time.Second
	// TunnelDomain is the wildcard the bench reserves, and
	// TunnelHost the name of its HTTP endpoint.
	TunnelDomain = "*.bench.example.test"
	TunnelHost   = "tunnel.bench.example.test"
)

// DefaultTunnelRates are the request rates of the HTTP runs by default.
func DefaultTunnelRates() []int { return []int{500, 1000, 2000, 4000} }

// TunnelTarget is the sluice whose edge RunTunnel measures.
type TunnelTarget struct {
	// APIURL is the base URL of the HTTP API and Token an API key of an
	// account there, the one of the endpoints measured.
	APIURL string `json:"api_url"`
	Token  string `json:"-"`
	// Agents is the HOST:PORT agents connect to and AgentsCAs the
	// certificates they trust there.
	Agents    string         `json:"agents"`
	AgentsCAs *x509.CertPool `json:"-"`
	// AgentsCAFile is the PEM file of AgentsCAs, for the agents spawned.
	AgentsCAFile string `json:"agents_ca_file,omitempty"`
	// PublicHTTP is the base URL of the edge's public HTTP listener.
	PublicHTTP string `json:"public_http"`
	// MetricsURL is the base URL of the listener of /metrics.
	MetricsURL string `json:"metrics_url"`
	// PID is the process's id, for its CPU time and memory; 0 measures
	// neither.
	PID int `json:"pid,omitempty"`
	// NewAccount, when not nil, makes another account and returns an
	// API key of it: the idle sessions are spread over such accounts,
	// SessionsPerAccount each. Nil keeps them all in Token's account.
	NewAccount func(ctx context.Context) (string, error) `json:"-"`
}

// TunnelConfig says what RunTunnel measures. The zero value gets the
// defaults.
type TunnelConfig struct {
	// Rates are the requests a second of the HTTP runs, each run for
	// Duration per mode and path; default DefaultTunnelRates and
	// DefaultTunnelDuration.
	Rates    []int         `json:"rates"`
	Duration time.Duration `json:"duration"`
	// Modes are TunnelKeepAlive and TunnelNewConn; default both.
	Modes []string `json:"modes"`
	// MaxInFlight bounds the requests in flight: a request due when as
	// many are in flight is not sent and counts as an error; default
	// DefaultTunnelMaxInFlight.
	MaxInFlight int `json:"max_in_flight"`
	// KeepAliveConns is the pool of connections of TunnelKeepAlive;
	// default DefaultTunnelKeepAliveConns.
	KeepAliveConns int `json:"keep_alive_conns"`
	// RequestTimeout bounds each request; default
	// DefaultTunnelRequestTimeout.
	RequestTimeout time.Duration `json:"request_timeout"`
	// TCPBytes are written through the TCP endpoint and directly; 0 gets
	// DefaultTunnelTCPBytes, negative skips TCP.
	TCPBytes int64 `json:"tcp_bytes"`
	// IdleSessions agents are connected, each with an HTTP endpoint, to
	// measure the memory of a session; 0 gets DefaultTunnelIdleSessions,
	// negative skips it. SessionsPerAccount of them go in one account
	// when the target can make accounts; default
	// DefaultTunnelSessionsPerAccount.
	IdleSessions       int `json:"idle_sessions"`
	SessionsPerAccount int `json:"sessions_per_account"`
	// FloodClients are account B's connections of the flood phase, and
	// FloodRate account A's requests a second beside them; 0 gets
	// DefaultTunnelFloodClients and DefaultTunnelFloodRate, negative
	// clients skips the phase.
	FloodClients int `json:"flood_clients"`
	FloodRate    int `json:"flood_rate"`
	// Agents are the kinds of agent measured in turn, each a process of
	// its own with AgentTunnels tunnels (AgentSDK, AgentSluice,
	// AgentSluiceInspect); default AgentSDK and
	// DefaultTunnelAgentTunnels. AgentBindTimeout bounds the wait for an
	// agent's tunnels; default DefaultTunnelAgentBindTimeout.
	Agents           []string      `json:"agents"`
	AgentTunnels     int           `json:"agent_tunnels"`
	AgentBindTimeout time.Duration `json:"agent_bind_timeout"`
	// SDKAgent is the command that runs ServeSDKAgent (sluice-bench
	// sdk-agent), flags after it; SluiceAgent is the sluice-agent
	// binary. Each is needed when its kind is measured.
	SDKAgent    []string `json:"-"`
	SluiceAgent string   `json:"-"`
	// Pause is the rest between runs; default DefaultTunnelPause.
	Pause time.Duration `json:"pause"`
	// DrainTimeout bounds the wait after a tunnel run for the edge's
	// events to leave its buffer; default DefaultTunnelDrainTimeout.
	DrainTimeout time.Duration `json:"drain_timeout"`
}

func (c *TunnelConfig) setDefaults() {
	if len(c.Rates) == 0 {
		c.Rates = DefaultTunnelRates()
	}
	if len(c.Modes) == 0 {
		c.Modes = []string{TunnelKeepAlive, TunnelNewConn}
	}
	setDefault(&c.Duration, DefaultTunnelDuration)
	setDefault(&c.MaxInFlight, DefaultTunnelMaxInFlight)
	setDefault(&c.KeepAliveConns, DefaultTunnelKeepAliveConns)
	setDefault(&c.RequestTimeout, DefaultTunnelRequestTimeout)
	setDefault(&c.TCPBytes, DefaultTunnelTCPBytes)
	setDefault(&c.IdleSessions, DefaultTunnelIdleSessions)
	setDefault(&c.SessionsPerAccount, DefaultTunnelSessionsPerAccount)
	setDefault(&c.FloodClients, DefaultTunnelFloodClients)
	setDefault(&c.FloodRate, DefaultTunnelFloodRate)
	if len(c.Agents) == 0 {
		c.Agents = []string{AgentSDK}
	}
	setDefault(&c.AgentTunnels, DefaultTunnelAgentTunnels)
	setDefault(&c.AgentBindTimeout, DefaultTunnelAgentBindTimeout)
	setDefault(&c.Pause, DefaultTunnelPause)
	setDefault(&c.DrainTimeout, DefaultTunnelDrainTimeout)
}

// Validate reports what is wrong in the configuration, after defaults.
func (c TunnelConfig) Validate() error {
	var errs []error
	for _, r := range c.Rates {
		if r <= 0 {
			errs = append(errs, fmt.Errorf("rate %d: a rate is at least 1 request a second", r))
		}
	}
	for _, m := range c.Modes {
		if m != TunnelKeepAlive && m != TunnelNewConn {
			errs = append(errs, fmt.Errorf("mode %q: want %s or %s", m, TunnelKeepAlive, TunnelNewConn))
		}
	}
	for i, a := range c.Agents {
		switch {
		case !slices.Contains(TunnelAgentKinds(), a):
			errs = append(errs, fmt.Errorf("agent %q: want one of %v", a, TunnelAgentKinds()))
		case slices.Contains(c.Agents[:i], a):
			errs = append(errs, fmt.Errorf("agent %q is named twice", a))
		}
	}
	if c.AgentTunnels < 2 {
		errs = append(errs, fmt.Errorf("%d tunnels an agent: at least 2, the HTTP and the TCP one", c.AgentTunnels))
	}
	if c.Duration < 100*time.Millisecond {
		errs = append(errs, errors.New("the duration of a run is at least 100ms"))
	}
	if c.MaxInFlight < 1 || c.KeepAliveConns < 1 || c.SessionsPerAccount < 1 {
		errs = append(errs, errors.New("max in flight, keep-alive connections and sessions per account are at least 1"))
	}
	if slices.ContainsFunc(c.Rates, func(r int) bool { return float64(r)*c.Duration.Seconds() < 1 }) {
		errs = append(errs, errors.New("a run of a rate for the duration sends no request"))
	}
	return errors.Join(errs...)
}

// Validate reports what is missing in the target.
func (t TunnelTarget) Validate() error {
	var errs []error
	for name, u := range map[string]string{"API": t.APIURL, "public HTTP": t.PublicHTTP, "metrics": t.MetricsURL} {
		if p, err := url.Parse(u); err != nil || p.Host == "" {
			errs = append(errs, fmt.Errorf("the %s URL %q is not a URL", name, u))
		}
	}
	if t.Token == "" || t.Agents == "" || t.AgentsCAs == nil {
		errs = append(errs, errors.New("the target needs an API key, the agents' address and their CA"))
	}
	return errors.Join(errs...)
}
