package edge

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/internal/dnsname"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// Store is what the edge reads and writes of the store.
type Store interface {
	AuthenticateCredential(ctx context.Context, token string) (store.Credential, error)
	GetBotUser(ctx context.Context, accountID, id string) (store.BotUser, error)
	ListReservedDomains(ctx context.Context, accountID string, page store.Page) ([]store.ReservedDomain, string, error)
	CreateTunnelSession(ctx context.Context, accountID string, in store.TunnelSession) (store.TunnelSession, error)
	DeleteTunnelSession(ctx context.Context, accountID, id string) error
	CreateEndpoint(ctx context.Context, accountID string, in store.Endpoint) (store.Endpoint, error)
	DeleteEndpoint(ctx context.Context, accountID, id string) error
}

// Routing tells the edge what the routes of HTTPS edges serve: it calls
// apply with every HTTPS edge, route and tunnel group backend, then with
// each change, until ctx ends (store.Store.FollowRouting).
type Routing interface {
	FollowRouting(ctx context.Context, log *slog.Logger, apply func(store.RoutingChange), ready func())
}

// Publisher takes the events the edge makes. Publish must not block: the
// edge serves traffic whatever becomes of its events (see Buffer).
type Publisher interface {
	Publish(ev schemas.Encoded)
}

// PortRange is the ports TCP endpoints get their address from, Low to
// High inclusive.
type PortRange struct{ Low, High int }

// ParsePortRange parses "LOW-HIGH".
func ParsePortRange(s string) (PortRange, error) {
	var r PortRange
	if _, err := fmt.Sscanf(s, "%d-%d", &r.Low, &r.High); err != nil || fmt.Sprintf("%d-%d", r.Low, r.High) != s {
		return PortRange{}, fmt.Errorf("%q is not a port range: give LOW-HIGH, such as 20000-20099", s)
	}
	if r.Low < 1 || r.High > 65535 || r.Low > r.High {
		return PortRange{}, fmt.Errorf("port range %s: ports must be 1 to 65535, LOW at most HIGH", s)
	}
	return r, nil
}

// Config configures an Edge.
type Config struct {
	// Store is read for credentials, bot users and reserved domains, and
	// written with the tunnel sessions and endpoints.
	Store Store
	// Events takes the traffic and agent session events.
	Events Publisher
	// Domain is the service-owned domain under which an endpoint with no
	// domain gets a random subdomain, such as "sluice.localhost".
	Domain string
	// Region is the region the edge reports to agents and in events;
	// default "us".
	Region string
	// HTTPPort and HTTPSPort are the public ports of the HTTP and HTTPS
	// listeners, for endpoints' URLs (80 and 443 are left out of them);
	// 0 when there is no such listener.
	HTTPPort, HTTPSPort int
	// TCPHost is the host name of TCP endpoints' addresses, and TCPPorts
	// their ports; TCP binds are refused without ports.
	TCPHost  string
	TCPPorts PortRange
	// TCPListenHost is the address TCP endpoints listen on, "" for all.
	TCPListenHost string
	// EdgeID names this edge process in the records it writes.
	EdgeID string
	// Secret is the key every edge process shares (store.EdgeSecret):
	// it signs the random subdomains the edge hands out, so that only the
	// account it gave one to can bind it again, on any edge. Without it
	// the edge makes a key of its own, and its random subdomains are
	// bound again only on it, until it restarts.
	Secret []byte
	// Version is sluice's version, told to agents.
	Version string
	// IngressOwner, when not nil, returns the account whose agent
	// ingress has host as a regional connection name
	// (tunnel.<region>.<domain>), and false when none has: an agent
	// connecting through such a name must use a credential of that
	// account.
	IngressOwner func(ctx context.Context, host string) (accountID string, ok bool, err error)
	// Peers, when not nil, finds the edge serving an endpoint this one
	// does not: a public HTTP or HTTPS request for it is forwarded there,
	// signed with a key derived from Secret (see NewPeerServer).
	Peers Peers
	// Routing, when not nil, tells the edge the HTTPS edges, routes and
	// tunnel group backends of every account, which it serves at the
	// edges' hostports (store.Store.FollowRouting).
	Routing Routing
	// Limits bound what one account may hold at this edge.
	Limits Limits
	// AppSessions, when not nil, keeps the application sessions of the
	// logins of openid-connect actions; without it, a bind whose policy
	// has one is refused. GeoIP, when not nil, locates their browsers.
	// LoginPrivateIssuers lets the edge reach providers on loopback and
	// private addresses, which it otherwise refuses (see docs/edge.md).
	AppSessions         AppSessions
	GeoIP               *GeoIP
	LoginPrivateIssuers bool
	// Log is where the edge logs; default slog.Default's handler.
	Log *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Limits bound what one account may hold at one edge process.
type Limits struct {
	// Connections is the most public connections (HTTP and TCP) of one
	// account open at once; default 1000.
	Connections int
	// BindsPerSession is the most endpoints one agent session may bind;
	// default 100.
	BindsPerSession int
	// RequestRate and RequestBurst bound the public requests of one
	// account's endpoints, a second, at one edge process; past them a
	// request is answered 429 without reaching the agent. A negative rate
	// leaves them unbounded. Default rate 1000; default burst
	// DefaultRequestBurst of the rate.
	RequestRate  float64
	RequestBurst int
	// RefusalHold is how long a request refused for its account's rate
	// waits before its 429 is sent: a client that does not slow down
	// gets one refusal a connection per RefusalHold, not one per
	// request it can send, so that answering its flood costs the edge
	// little of what other accounts need. The connection counts against
	// the account's Connections while it waits, which bounds the
	// requests held. Default 1s (the Retry-After the 429 says); a
	// negative hold answers at once.
	RefusalHold time.Duration
}

// DefaultRequestBurst is the burst of an account's requests at the rate
// (a second): a tenth of a second's worth, at least 10 (or the rate,
// when lower), at least 1. The burst is what one account may send an
// edge at one instant: a flooding client's connections, released
// together after their refusals' hold, take it at once, and another
// account's requests wait behind them. A tenth of a second's worth keeps
// that spike short, and Poisson traffic well under the rate never
// reaches it.
func DefaultRequestBurst(rate float64) int {
	return max(int(rate/10), min(int(rate), 10), 1)
}

func (c *Config) setDefaults() {
	if c.Region == "" {
		c.Region = "us"
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if len(c.Secret) == 0 {
		c.Secret = make([]byte, 32)
		_, _ = rand.Read(c.Secret)
	}
	defaults.Positive(&c.Limits.Connections, 1000)
	defaults.Positive(&c.Limits.BindsPerSession, 100)
	if c.Limits.RequestRate == 0 {
		c.Limits.RequestRate = 1000
	}
	if c.Limits.RefusalHold == 0 {
		c.Limits.RefusalHold = time.Second
	}
	defaults.Positive(&c.Limits.RequestBurst, DefaultRequestBurst(c.Limits.RequestRate))
	c.Domain = strings.ToLower(strings.TrimSuffix(c.Domain, "."))
}

// Validate reports what is missing or wrong in the configuration.
func (c *Config) Validate() error {
	switch {
	case c.Store == nil:
		return errors.New("edge: no store")
	case c.Events == nil:
		return errors.New("edge: no publisher of events")
	case c.Domain == "":
		return errors.New("edge: no edge domain: give the domain under which endpoints get random subdomains (--edge-domain)")
	case c.EdgeID == "":
		return errors.New("edge: no edge id")
	}
	if _, err := dnsname.Check(c.Domain, 0); err != nil {
		return fmt.Errorf("edge domain %q: %w", c.Domain, err)
	}
	return nil
}
