package localapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
)

// Backend is the running agent, as the local API sees it.
//
// StartTunnel returns ErrNotReady while the agent has no session with
// the edge, and ErrTunnelExists for a name
// in use and an *EdgeError when the edge refuses the bind; StopTunnel and
// Replay return ErrNoTunnel for a name no tunnel has.
type Backend interface {
	Tunnels() []Tunnel
	StartTunnel(ctx context.Context, t agentconfig.Tunnel) (Tunnel, error)
	StopTunnel(ctx context.Context, name string) error
	Status() Status
	// Replay sends req through the tunnel's forwarding as if it came
	// from the edge: it is captured again when the tunnel inspects.
	Replay(ctx context.Context, tunnelName string, req *http.Request) error
}

// Errors of a Backend.
var (
	ErrNotReady     = errors.New("tunnel session not ready yet")
	ErrTunnelExists = errors.New("a tunnel of that name is already running")
	ErrNoTunnel     = errors.New("no tunnel of that name is running")
)

// EdgeError is the edge's refusal of a bind, as the edge worded it.
type EdgeError struct{ Msg string }

func (e *EdgeError) Error() string { return e.Msg }

// Tunnel is a running tunnel.
type Tunnel struct {
	Name string
	// ID is the edge's id of the tunnel ("" when it gave none).
	ID        string
	PublicURL string
	Proto     string
	Config    agentconfig.Tunnel
	// Meter counts its connections and requests (never nil).
	Meter *Meter
}

// Status is the agent's session with the edge.
type Status struct {
	// State is "online", "reconnecting" or "offline".
	State        string
	AgentVersion string
	// Edge is the address of the edge it is connected to ("" when none).
	Edge string
	// Latency is the last heartbeat's round trip (0 before the first).
	Latency time.Duration
	// SessionID is the tunnel session's id (ts_...).
	SessionID string
	// ConnectedAt is when the session began (zero when none).
	ConnectedAt time.Time
	// LastError is why the agent last failed to connect, if it did.
	LastError string
}
