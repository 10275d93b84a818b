package agentconfig

import (
	"maps"
	"slices"
	"time"
)

// Version is the one configuration version sluice-agent reads.
const Version = 2

// Defaults of the keys a configuration leaves out.
const (
	DefaultWebAddr            = "127.0.0.1:4040"
	DefaultHeartbeatInterval  = 10 * time.Second
	DefaultHeartbeatTolerance = 15 * time.Second
	DefaultInspectDBSize      = 50 << 20 // bytes
	DefaultLog                = "false"
	DefaultLogFormat          = "term"
	DefaultLogLevel           = "info"
	DefaultRootCAs            = "trusted"
	// DefaultServerPort is the port of a server_addr given without one.
	DefaultServerPort = "443"
)

// Limits of the keys' values.
const (
	MinHeartbeat      = time.Second
	MaxHeartbeat      = 2 * time.Minute
	MinInspectDBSize  = 1 << 20 // bytes
	MaxInspectDBSize  = 1 << 30 // bytes
	MaxMetadata       = 4096    // bytes, of a session's or a tunnel's metadata
	MaxDescription    = 255     // bytes
	MaxTunnelName     = 64      // bytes
	MinPassword       = 8       // bytes, of a basic_auth password
	MaxPassword       = 128     // bytes
	MaxWebAllowHosts  = 64      // entries
	MaxServerAddrs    = 16      // entries
	MaxBasicAuthUsers = 64      // entries
)

// DefaultSchemes are the public schemes of an HTTP tunnel that names
// none: both, HTTPS first (its public_url), as sluice's edge serves both.
var DefaultSchemes = []string{"https", "http"}

// Config is a merged, validated configuration.
type Config struct {
	// Files are the files it was read from, in the order they merged.
	Files []string
	// Authtoken is the tunnel credential's token ("" when none is set).
	Authtoken string
	// ServerAddrs are the edge addresses (host:port) to connect to, in
	// the order to try them; server_addr is one or a list. It is nil
	// when no file names one: the agent then uses its built-in edge.
	ServerAddrs []string
	// RootCAs is "trusted" (the system's roots), "host" (the same), or
	// the path of a PEM file of CA certificates.
	RootCAs string
	// WebAddr is the local API's address; "" when web_addr is false.
	WebAddr string
	// WebAllowHosts are the Host values the local API accepts besides
	// loopback names and addresses.
	WebAllowHosts []string
	// HeartbeatInterval is how often the agent sends a heartbeat.
	HeartbeatInterval time.Duration
	// HeartbeatTolerance is how long the agent waits for a heartbeat's
	// answer before it takes the session for dead; never less than
	// HeartbeatInterval.
	HeartbeatTolerance time.Duration
	// Log is "stdout", "stderr", "false" (no log) or a file's path.
	Log string
	// LogFormat is "logfmt", "json" or "term".
	LogFormat string
	// LogLevel is "debug", "info", "warn" or "error".
	LogLevel string
	// Metadata is the session's metadata, given to the edge.
	Metadata string
	// InspectDBSize bounds the captured requests, in bytes.
	InspectDBSize int64
	// Tunnels are the configuration's tunnels by name.
	Tunnels map[string]Tunnel
}

// Tunnel is one tunnel definition: a key of tunnels in a file, or the
// body of POST /api/tunnels of the local API.
type Tunnel struct {
	// Name is 1 to MaxTunnelName bytes of A-Z, a-z, 0-9, '_', '.' and '-'.
	Name string
	// Proto is "http" or "tcp", or "labeled" for a tunnel given Labels
	// (a file's or a body's proto is http or tcp: a labeled tunnel has
	// labels instead).
	Proto string
	// Labels are a labeled tunnel's labels, name to value: the HTTPS
	// edges' routes whose tunnel group backend selects them send their
	// requests to it. Nil for an http or tcp tunnel.
	Labels map[string]string
	// Addr is where the agent forwards to: a URL (http://host:port or
	// https://host:port) for an HTTP or labeled tunnel, host:port for a
	// TCP one. A bare port or host:port is given the scheme http:// for
	// HTTP and labeled.
	Addr string
	// Domain is the domain asked for ("" for a random one), HTTP only.
	Domain string
	// RemoteAddr is the TCP address asked for ("" for one the edge
	// chooses), TCP only.
	RemoteAddr string
	// Inspect captures the tunnel's requests for the inspector (HTTP
	// and labeled only; default true).
	Inspect bool
	// Metadata is the endpoint's metadata, given to the edge (at most
	// MaxMetadata bytes).
	Metadata string
	// HostHeader rewrites the Host of requests forwarded upstream (HTTP
	// and labeled only):
	// "" keeps it, "rewrite" sets the upstream's host, anything else is
	// the value itself.
	HostHeader string
	// BasicAuth are user:password pairs, one of which a public request
	// must present (checked by the agent).
	BasicAuth []string
	// Schemes are the public schemes of an HTTP tunnel, "https" and/or
	// "http", without repeats (default DefaultSchemes);
	// nil for a TCP tunnel.
	Schemes []string
	// Description is shown in the endpoint's record (at most
	// MaxDescription bytes).
	Description string
	// TrafficPolicy is the endpoint's traffic policy document (YAML or
	// JSON, at most MaxTrafficPolicy bytes), which the edge runs on its
	// requests (HTTP) or connections (TCP, on_tcp_connect); "" for none.
	TrafficPolicy string
}

// LabelPairs returns a labeled tunnel's labels as name=value, by name
// (none for an http or tcp tunnel).
func (t Tunnel) LabelPairs() []string {
	pairs := make([]string, 0, len(t.Labels))
	for _, name := range slices.Sorted(maps.Keys(t.Labels)) {
		pairs = append(pairs, name+"="+t.Labels[name])
	}
	return pairs
}

// MaxTrafficPolicy bounds a tunnel's traffic policy: with the rest of its
// bind, it fits the protocol's 64 KiB message.
const MaxTrafficPolicy = 32 << 10
