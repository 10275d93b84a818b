package agentconfig

import "time"

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
)

// Config is a merged, validated configuration.
type Config struct {
	// Files are the files it was read from, in the order they merged.
	Files []string
	// Authtoken is the tunnel credential's token ("" when none is set).
	Authtoken string
	// ServerAddrs are the edge addresses (host:port) to connect to, in
	// the order to try them; server_addr is one or a list.
	ServerAddrs []string
	// RootCAs is "trusted" (the system's roots), "host" (the same), or
	// the path of a PEM file of CA certificates.
	RootCAs string
	// WebAddr is the local API's address; "" when web_addr is false.
	WebAddr string
	// WebAllowHosts are the Host values the local API accepts besides
	// loopback names and addresses.
	WebAllowHosts      []string
	HeartbeatInterval  time.Duration
	HeartbeatTolerance time.Duration
	// Log is "stdout", "stderr", "false" or a file's path.
	Log       string
	LogFormat string // logfmt, json or term
	LogLevel  string // debug, info, warn or error
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
	Name string
	// Proto is "http" or "tcp".
	Proto string
	// Addr is where the agent forwards to: a URL (http://host:port or
	// https://host:port) for an HTTP tunnel, host:port for a TCP one.
	// A bare port or host:port is given the scheme http:// for HTTP.
	Addr string
	// Domain is the domain asked for ("" for a random one), HTTP only.
	Domain string
	// RemoteAddr is the TCP address asked for ("" for one the edge
	// chooses), TCP only.
	RemoteAddr string
	// Inspect captures the tunnel's requests for the inspector (HTTP
	// only; default true).
	Inspect bool
	// Metadata is the endpoint's metadata, given to the edge.
	Metadata string
	// HostHeader rewrites the Host of requests forwarded upstream:
	// "" keeps it, "rewrite" sets the upstream's host, anything else is
	// the value itself.
	HostHeader string
	// BasicAuth are user:password pairs, one of which a public request
	// must present (checked by the agent).
	BasicAuth []string
	// Schemes are the public schemes, "http" and/or "https" (default
	// both... see docs).
	Schemes []string
	// Description is shown in the endpoint's record.
	Description string
}
