// Package tunnelwire is the agent protocol as sluice speaks it: the
// messages an agent and the edge exchange over a muxado session on TLS, and
// how they are framed. The edge (package edge) and sluice's own agent share
// it.
//
// An agent opens a TLS connection to the edge's agent listener and runs a
// muxado session on it. Each call is a typed stream: the stream's type
// names the call (Auth, Bind, Unbind, ... from the agent; Proxy, Restart,
// Stop, Update, StopTunnel from the edge), the caller writes one JSON
// request, and the callee answers one JSON response on the same stream.
// Every public connection the edge hands to an agent is a stream of type
// Proxy that starts with a ProxyHeader (an int64 length, little-endian,
// then that many bytes of JSON) and then carries the connection's bytes.
// Heartbeats are muxado's, on a stream of type HeartbeatStream.
//
// The message and field names are those the open-source agent SDKs use on
// the wire, so that their agents connect to sluice unchanged; the types
// are sluice's own. The package does no I/O beyond the framing of one
// message, and holds no state.
package tunnelwire
