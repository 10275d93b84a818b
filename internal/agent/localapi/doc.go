// Package localapi is sluice-agent's local API and inspector, served on
// the agent's web_addr: the tunnels it runs (listed, started, stopped),
// the HTTP requests it captured (listed, shown, replayed, cleared), the
// session's status, and the inspector page at /. It also holds what the
// agent's forwarding feeds it: each tunnel's Meter and the Captures.
//
// It is not the agent's session with the edge: a Backend runs that.
package localapi
