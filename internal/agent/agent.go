package agent

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
	"github.com/sluicehq/sluice/internal/agent/localapi"
	"github.com/sluicehq/sluice/internal/defaults"
)

// Options configure an Agent.
type Options struct {
	// ServerAddrs are the edges' agent addresses (host:port), tried in
	// order: after a lost connection the agent goes on to the next.
	ServerAddrs []string
	Authtoken   string
	// RootCAs verify the edge's certificate; nil for the system's.
	RootCAs *x509.CertPool
	// HeartbeatInterval and HeartbeatTolerance: the agent beats every
	// interval, and ends a session whose beat goes unanswered that long.
	HeartbeatInterval  time.Duration
	HeartbeatTolerance time.Duration
	// Metadata is the session's, as the edge records it.
	Metadata string
	// Version is the agent's version, told to the edge.
	Version string
	Log     *slog.Logger
	// Captures keep the exchanges of tunnels that inspect; nil for none.
	Captures Capturer
	// Tunnels are the configuration's: started on every session, so
	// they come back after a reconnect.
	Tunnels []agentconfig.Tunnel
	// MinBackoff and MaxBackoff bound the wait between connection
	// attempts (defaults 500 ms and 30 s).
	MinBackoff, MaxBackoff time.Duration
	// OnTunnelStarted, when set, is told of each endpoint a tunnel binds
	// (PublicURL is its URL) and each labeled tunnel it starts (ID is
	// its id, PublicURL ""), on every session (the command line prints
	// them).
	OnTunnelStarted func(localapi.Tunnel)
	// Dial connects to an edge; nil for a plain TCP dial. Tests set it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (o *Options) setDefaults() {
	defaults.Positive(&o.HeartbeatInterval, agentconfig.DefaultHeartbeatInterval)
	defaults.Positive(&o.HeartbeatTolerance, agentconfig.DefaultHeartbeatTolerance)
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	defaults.Positive(&o.MinBackoff, 500*time.Millisecond)
	defaults.Positive(&o.MaxBackoff, 30*time.Second)
	if o.Dial == nil {
		var d net.Dialer
		o.Dial = d.DialContext
	}
	if o.Version == "" {
		o.Version = "dev"
	}
}

// Capturer captures the exchanges of a tunnel that inspects
// (localapi.Captures).
type Capturer interface {
	Capturing(tunnelName string, next http.Handler) http.Handler
}

// Agent runs sessions with the edge, one at a time, and the tunnels on
// them.
type Agent struct {
	opts Options

	mu      sync.Mutex
	session *session           // the current session; nil between sessions
	tunnels map[string]*tunnel // by name, the running ones
	status  localapi.Status
	// sessions counts the sessions established, for the log (Run's
	// goroutine only).
	sessions int
	// stopReason is what the agent tells the edge when Run's context
	// ends: why it closes its session.
	stopReason string
}

// New returns an Agent; Run runs it.
func New(opts Options) (*Agent, error) {
	opts.setDefaults()
	if len(opts.ServerAddrs) == 0 {
		return nil, errors.New("no edge address: set server_addr")
	}
	if opts.Authtoken == "" {
		return nil, errors.New("no authtoken: set authtoken in the configuration, pass --authtoken, or run `sluice-agent config add-authtoken TOKEN`")
	}
	for _, t := range opts.Tunnels {
		if err := checkTunnel(t); err != nil {
			return nil, fmt.Errorf("tunnel %s: %w", t.Name, err)
		}
	}
	return &Agent{opts: opts, tunnels: map[string]*tunnel{},
		status: localapi.Status{State: "offline", AgentVersion: opts.Version}}, nil
}

// SetStopReason sets what the agent tells the edge when Run's context
// ends ("the agent was stopped" when unset).
func (a *Agent) SetStopReason(reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopReason = reason
}

// Run connects to the edge and keeps connected until ctx ends, then
// closes the session, telling the edge why. It returns nil then; it
// returns an error only when the edge refuses the authtoken (retrying
// would not help), or ErrEdgeStopped when the edge stops the agent.
func (a *Agent) Run(ctx context.Context) error {
	defer a.closeTunnels()
	log := a.opts.Log
	wait := a.opts.MinBackoff
	// next is the index of the edge address to try next: after a failed
	// attempt or a lost session, the following one.
	for next := 0; ; next++ {
		addr := a.opts.ServerAddrs[next%len(a.opts.ServerAddrs)]
		s, err := a.connect(ctx, addr)
		if ctx.Err() != nil {
			if s != nil {
				a.closeSession(s)
				_ = s.mux.Close()
			}
			return nil
		}
		if err == nil {
			wait = a.opts.MinBackoff
			a.runSession(ctx, s)
			if ctx.Err() != nil {
				return nil
			}
			err = context.Cause(s.ctx)
			log.Warn("session closed, starting reconnect loop", "addr", addr, "err", err)
		}
		if errors.Is(err, ErrEdgeStopped) {
			a.setState("offline", err.Error())
			return err
		}
		var refused *refusedError
		if errors.As(err, &refused) && refused.fatal {
			a.setState("offline", err.Error())
			log.Error("the edge refused the session", "addr", addr, "err", err)
			return err
		}
		a.setState("reconnecting", err.Error())
		d := jitter(wait)
		log.Warn("failed to reconnect session", "addr", addr, "err", err, "retry_in", d.Round(time.Millisecond).String())
		wait = min(2*wait, a.opts.MaxBackoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(d):
		}
	}
}

// closeTunnels stops every tunnel's forwarding, as Run ends.
func (a *Agent) closeTunnels() {
	a.mu.Lock()
	ts := a.tunnels
	a.tunnels = map[string]*tunnel{}
	a.mu.Unlock()
	for _, t := range ts {
		t.fwd.close()
	}
	a.setState("offline", "")
}

// jitter returns d scaled by a random factor in [0.5, 1.5).
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.5 + rand.Float64()))
}

func (a *Agent) setState(state, lastErr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status.State = state
	if lastErr != "" {
		a.status.LastError = lastErr
	}
	if state != "online" {
		a.status.Edge, a.status.SessionID, a.status.ConnectedAt, a.status.Latency = "", "", time.Time{}, 0
	}
}

// Status returns the session's state.
func (a *Agent) Status() localapi.Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.status
}
