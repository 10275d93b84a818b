package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/resource"
)

// tunnelSessionsFamily declares `sluice tunnel-sessions`, a client of
// /tunnel_sessions: list, get and stop, as the edge records sessions.
func tunnelSessionsFamily() family[apiwire.TunnelSession, struct{}] {
	return family[apiwire.TunnelSession, struct{}]{
		spec: resource.TunnelSessions(),
		kind: resourceKind{
			command: "tunnel-sessions",
			plural:  "tunnel sessions",
			columns: []string{"ID", "STARTED_AT", "CREDENTIAL", "IP", "AGENT_VERSION", "OS", "REGION"},
		},
		short: "List, show and stop tunnel sessions through the API of a running sluice",
		long: `List, show and stop the tunnel sessions of the account through the API of a
running sluice (/tunnel_sessions): the agents connected to an edge now. The
edge records a session when an agent connects with a credential's authtoken,
and ends it when the agent goes; stop asks the edge to end it (the agent may
connect again: delete its credential to keep it out).

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(t apiwire.TunnelSession) []string {
			return []string{t.ID, t.StartedAt, t.Credential.ID, t.IP, t.AgentVersion, t.OS, t.Region}
		},
		fields: func(t apiwire.TunnelSession) []resourceField {
			return []resourceField{
				{"ID", t.ID}, {"URI", t.URI}, {"CREDENTIAL", t.Credential.ID}, {"STARTED_AT", t.StartedAt},
				{"IP", t.IP}, {"AGENT_VERSION", t.AgentVersion}, {"OS", t.OS}, {"ARCH", t.Arch},
				{"REGION", t.Region}, {"TRANSPORT", t.Transport}, {"USER_AGENT", t.UserAgent}, {"METADATA", t.Metadata},
			}
		},
		commands: func(f *resourceFlags) []*cobra.Command { return []*cobra.Command{newTunnelStopCommand(f)} },
	}
}

// newTunnelStopCommand returns `sluice tunnel-sessions stop`.
func newTunnelStopCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "stop ID...",
		Short: "Ask the edge to end tunnel sessions, in turn; stop at the first that cannot be stopped",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			for _, id := range args {
				if err := c.StopTunnelSession(cmd.Context(), id); err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "stop requested", id)
			}
			return nil
		},
	}
}

// endpointsFamily declares `sluice endpoints`, a client of /endpoints:
// list and get, as the edge records endpoints.
func endpointsFamily() family[apiwire.Endpoint, struct{}] {
	return family[apiwire.Endpoint, struct{}]{
		spec: resource.Endpoints(),
		kind: resourceKind{
			command: "endpoints",
			plural:  "endpoints",
			columns: []string{"ID", "CREATED_AT", "PROTO", "URL", "TUNNEL_SESSION", "UPSTREAM_URL"},
		},
		short: "List and show endpoints through the API of a running sluice",
		long: `List and show the endpoints of the account through the API of a running
sluice (/endpoints): the public addresses its agents serve now. The edge
records an endpoint when an agent binds it, and ends it when the agent
unbinds it or its session ends (sluice tunnel-sessions stop).

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(e apiwire.Endpoint) []string {
			return []string{e.ID, e.CreatedAt, e.Proto, e.URL, e.TunnelSession.ID, e.UpstreamURL}
		},
		fields: func(e apiwire.Endpoint) []resourceField {
			domain := "-"
			if e.Domain != nil {
				domain = e.Domain.ID
			}
			return []resourceField{
				{"ID", e.ID}, {"URI", e.URI}, {"CREATED_AT", e.CreatedAt}, {"PROTO", e.Proto}, {"URL", e.URL},
				{"HOSTPORT", e.Hostport}, {"DOMAIN", domain}, {"UPSTREAM_URL", e.UpstreamURL},
				{"TUNNEL_SESSION", e.TunnelSession.ID}, {"DESCRIPTION", e.Description}, {"METADATA", e.Metadata},
			}
		},
	}
}

// newTunnelSessionsCommand returns `sluice tunnel-sessions`.
func newTunnelSessionsCommand() *cobra.Command { return newFamilyCommand(tunnelSessionsFamily()) }

// newEndpointsCommand returns `sluice endpoints`.
func newEndpointsCommand() *cobra.Command { return newFamilyCommand(endpointsFamily()) }
