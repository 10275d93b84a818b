// Package agent is sluice-agent's session with the edge: it connects to
// an edge over TLS, authenticates with a tunnel credential's authtoken,
// binds the tunnels it is given, and forwards the public connections the
// edge hands it to their local addresses, HTTP through a reverse proxy
// that can capture each exchange for the inspector, TCP byte for byte.
// When the connection is lost it reconnects, with jittered backoff and to
// the next edge address when it has several, and binds its configuration's
// tunnels again.
//
// It speaks the protocol of package tunnelwire, as the edge does. It is
// not the local API (package localapi, which it feeds), nor the
// configuration (package agentconfig, which it is given).
package agent
