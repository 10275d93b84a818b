package tunnelwire

import (
	"encoding/json"
	"log/slog"
)

// Call is the type of a muxado stream: which call it carries.
type Call uint32

// The calls. Their numbers are the protocol's and never change.
const (
	// From the agent to the edge.
	CallAuth             Call = 0
	CallBind             Call = 1
	CallUnbind           Call = 2
	CallStartLabeled     Call = 7
	CallServerInfo       Call = 8
	CallPatchTunnelState Call = 10
	CallAgentMetrics     Call = 11

	// From the edge to the agent.
	CallProxy      Call = 3
	CallRestart    Call = 4
	CallStop       Call = 5
	CallUpdate     Call = 6
	CallStopTunnel Call = 9
)

// HeartbeatStream is the type of the muxado stream heartbeats go on.
const HeartbeatStream = 0xFFFFFFFF

// Version is the protocol version the edge speaks.
const Version = "3"

// Auth is the first call of a session: the agent says who it is and
// presents its authtoken.
type Auth struct {
	// Versions are the protocol versions the agent speaks, preferred
	// first.
	Versions []string `json:"Version"`
	// ClientID is the id of a session the agent resumes; "" for a new
	// one.
	ClientID string    `json:"ClientId"`
	Extra    AuthExtra `json:"Extra"`
}

// AuthExtra is what the agent tells about itself.
type AuthExtra struct {
	OS        string `json:"OS"`
	Arch      string `json:"Arch"`
	Authtoken Secret `json:"Authtoken"`
	// Version is the agent's version.
	Version   string `json:"Version"`
	Hostname  string `json:"Hostname"`
	UserAgent string `json:"UserAgent"`
	Metadata  string `json:"Metadata"`
	// Cookie is what an earlier AuthResponse gave the agent to resume.
	Cookie string `json:"Cookie"`
	// HeartbeatInterval and HeartbeatTolerance are in nanoseconds.
	HeartbeatInterval  int64 `json:"HeartbeatInterval"`
	HeartbeatTolerance int64 `json:"HeartbeatTolerance"`
	// The server calls the agent can serve: nil when it cannot, ""
	// when it can, else why it cannot.
	UpdateUnsupportedError  *string `json:"UpdateUnsupportedError"`
	StopUnsupportedError    *string `json:"StopUnsupportedError"`
	RestartUnsupportedError *string `json:"RestartUnsupportedError"`
	ClientType              string  `json:"ClientType"`
	LegNumber               uint32  `json:"LegNumber"`
}

// Secret is a string that is never shown: formatted, logged or encoded
// in a message of sluice's own, it reads "HIDDEN". Plain returns it.
type Secret string

// String returns "HIDDEN", or "" for an empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "HIDDEN"
}

// Plain returns the secret itself.
func (s Secret) Plain() string { return string(s) }

// LogValue hides the secret from slog's handlers, which encode strings
// without calling String.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// AuthResponse answers Auth. A non-empty Error refuses the session: the
// agent shows it to its user, and the edge closes the connection.
type AuthResponse struct {
	Version  string            `json:"Version"`
	ClientID string            `json:"ClientId"`
	Error    string            `json:"Error"`
	Extra    AuthResponseExtra `json:"Extra"`
}

// AuthResponseExtra is what the edge tells the agent of its session.
type AuthResponseExtra struct {
	// Version is the edge's version.
	Version string `json:"Version"`
	Region  string `json:"Region"`
	// Cookie lets the agent resume; sluice gives none.
	Cookie          string `json:"Cookie"`
	AccountName     string `json:"AccountName"`
	SessionDuration int64  `json:"SessionDuration"`
	PlanName        string `json:"PlanName"`
	Banner          string `json:"Banner"`
	// AgentSessionID is the tunnel session's id (ts_...).
	AgentSessionID string `json:"AgentSessionID"`
}

// Bind asks the edge for a public endpoint.
type Bind struct {
	// ID is the agent's id of the bind, unique in its session; "" for
	// the edge to choose one. A reconnecting agent binds again with the
	// id it had.
	ID string `json:"Id"`
	// Proto is "http", "https", "tcp" or "tls".
	Proto string `json:"Proto"`
	// ForwardsTo is what the agent says it forwards to, shown to users.
	ForwardsTo    string `json:"ForwardsTo"`
	ForwardsProto string `json:"ForwardsProto"`
	// Options are the options of Proto (BindOptions), kept raw until
	// Proto is known.
	Options json.RawMessage `json:"Opts"`
	Extra   BindExtra       `json:"Extra"`
}

// BindExtra is the rest of a Bind.
type BindExtra struct {
	Name        string   `json:"Name"`
	Token       string   `json:"Token"`
	IPPolicyRef string   `json:"IPPolicyRef"`
	Metadata    string   `json:"Metadata"`
	Description string   `json:"Description"`
	Bindings    []string `json:"Bindings"`
	// PoolingEnabled lets several agents serve one endpoint.
	PoolingEnabled bool `json:"PoolingEnabled"`
}

// BindOptions are the options of an HTTP, HTTPS, TCP or TLS bind that the
// edge reads: the URL asked for ("" for one the edge chooses), the
// hostname or address of agents that give those instead, and the PROXY
// protocol version. Other options are ignored.
type BindOptions struct {
	URL        string `json:"URL"`
	Hostname   string `json:"Hostname,omitempty"`
	Subdomain  string `json:"Subdomain,omitempty"`
	Domain     string `json:"Domain,omitempty"`
	Addr       string `json:"Addr,omitempty"`
	ProxyProto int32  `json:"ProxyProto"`
	// TrafficPolicy is the endpoint's policy, as the agent gives it.
	TrafficPolicy string `json:"TrafficPolicy,omitempty"`
}

// BindResponse answers Bind. A non-empty Error refuses it, and the agent
// shows it.
type BindResponse struct {
	ID    string `json:"Id"`
	URL   string `json:"URL"`
	Proto string `json:"Proto"`
	// Options are the options of the endpoint as bound: the Bind's own,
	// as the agent sent them, with its URL and its host (Hostname) or
	// address (Addr) filled in. A reconnecting agent binds again with
	// them, and gets the same address; agents that decode them into the
	// type of their request (the Rust SDK's) find every field they sent.
	Options json.RawMessage   `json:"Opts"`
	Error   string            `json:"Error"`
	Extra   BindResponseExtra `json:"Extra"`
}

// BindResponseExtra is the rest of a BindResponse.
type BindResponseExtra struct {
	Token string `json:"Token"`
	// TunnelID is the endpoint's id (ep_...).
	TunnelID string `json:"TunnelID"`
}

// Unbind asks the edge to close a bind.
type Unbind struct {
	ID string `json:"Id"`
}

// ErrorResponse answers any call with an error only: UnbindResponse,
// the answers to calls the edge does not serve, and the agent's answers
// to Stop, Restart, Update and StopTunnel.
type ErrorResponse struct {
	Error string `json:"Error"`
}

// StartLabeled starts a labeled tunnel: one with no address of its own,
// which the routes of HTTPS edges reach through the tunnel group backends
// that select its labels.
type StartLabeled struct {
	Labels map[string]string `json:"Labels"`
	// ForwardsTo and ForwardsProto say what the agent forwards to, for
	// the tunnel's record.
	ForwardsTo    string `json:"ForwardsTo"`
	ForwardsProto string `json:"ForwardsProto,omitempty"`
	Metadata      string `json:"Metadata"`
}

// StartLabeledResponse answers StartLabeled: the tunnel's id, which the
// edge's Proxy streams for it carry (ProxyHeader.ID), or an Error the
// agent shows.
type StartLabeledResponse struct {
	ID    string `json:"Id"`
	Error string `json:"Error"`
}

// ServerInfoResponse answers ServerInfo.
type ServerInfoResponse struct {
	Region string `json:"Region"`
}

// ProxyHeader starts every Proxy stream: which bind the connection is for
// and where it comes from.
type ProxyHeader struct {
	// ID is the bind's id, as in BindResponse.
	ID string `json:"Id"`
	// ClientAddr is the public client's address, host:port.
	ClientAddr string `json:"ClientAddr"`
	// Proto is the bind's protocol.
	Proto string `json:"Proto"`
	// EdgeType is "" for endpoints, and "https" for the requests of an
	// HTTPS edge's routes to a labeled tunnel. Proto is then "https" for
	// an HTTP request, or "tcp" for the byte stream of a WebSocket that
	// the route's websocket TCP converter turned into raw bytes, which
	// the agent splices to its upstream as they are.
	EdgeType       string `json:"EdgeType"`
	PassthroughTLS bool   `json:"PassthroughTLS"`
}

// StopTunnel tells the agent that the edge closed one of its binds, and
// why.
type StopTunnel struct {
	ID        string `json:"Id"`
	Message   string `json:"Message"`
	ErrorCode string `json:"ErrorCode"`
}

// Stop asks the agent to stop; Restart to restart; Update to update.
type (
	Stop    struct{}
	Restart struct{}
	Update  struct {
		Version            string `json:"Version"`
		PermitMajorVersion bool   `json:"PermitMajorVersion"`
	}
)
