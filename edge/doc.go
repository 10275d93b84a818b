// Package edge is the service agents connect to: it authenticates an
// agent's session with a tunnel credential's authtoken, binds the
// endpoints the agent asks for (a credential's ACL, the account's reserved
// domains, a random subdomain of the service's edge domain, a TCP port of
// its range), serves public HTTP and TCP traffic through the agents'
// sessions, and turns every request, connection and agent session into an
// event for the pipeline.
//
// It speaks the agent protocol of package tunnelwire over muxado on TLS.
// It keeps no state of its own beyond the sessions connected to it: what
// it checks is read from the store, and what it makes (tunnel sessions,
// endpoints) is written there for the management API to list. It never
// blocks traffic on the pipeline: events wait in a bounded buffer and are
// counted when dropped.
//
// It is not the management API, and it does not issue certificates.
package edge
