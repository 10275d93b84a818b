package main

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/schemas"
)

// appSessionsFamily declares `sluice app-sessions`, a client of
// /app/sessions: list, get and delete, as the edge records sessions.
func appSessionsFamily() family[apiwire.AppSession, struct{}] {
	return family[apiwire.AppSession, struct{}]{
		spec: resource.AppSessions(),
		kind: resourceKind{
			command: "app-sessions",
			plural:  "application sessions",
			columns: []string{"ID", "CREATED_AT", "LAST_ACTIVE", "EXPIRES_AT", "USER", "IP_ADDRESS", "PUBLIC_URL"},
		},
		short: "List, show and revoke application sessions through the API of a running sluice",
		long: `List, show and revoke the application sessions of the account through the API
of a running sluice (/app/sessions). The edge records a session when an end
user logs in to an endpoint; it ends at its expiry, when revoked here
(delete), or when the account's limit makes room for a newer login. A
revoked session's next request is refused, and the user logs in again.
record, refresh and end do what the edge does, over NATS (--nats-url).

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row: func(a apiwire.AppSession) []string {
			return []string{a.ID, a.CreatedAt, a.LastActive, a.ExpiresAt, a.ApplicationUser.ID, a.BrowserSession.IPAddress, a.PublicURL}
		},
		fields: func(a apiwire.AppSession) []resourceField {
			b := a.BrowserSession
			ref := func(r *schemas.Ref) string {
				if r == nil {
					return "-"
				}
				return r.ID
			}
			return []resourceField{
				{"ID", a.ID}, {"URI", a.URI}, {"PUBLIC_URL", a.PublicURL},
				{"APPLICATION_USER", a.ApplicationUser.ID}, {"ENDPOINT", a.Endpoint.ID},
				{"EDGE", ref(a.Edge)}, {"ROUTE", ref(a.Route)},
				{"CREATED_AT", a.CreatedAt}, {"LAST_ACTIVE", a.LastActive}, {"EXPIRES_AT", a.ExpiresAt},
				{"IP_ADDRESS", b.IPAddress}, {"USER_AGENT", b.UserAgent.Raw},
				{"BROWSER", b.UserAgent.BrowserName + " " + b.UserAgent.BrowserVersion},
				{"OS", b.UserAgent.OSName + " " + b.UserAgent.OSVersion}, {"DEVICE", b.UserAgent.DeviceType},
				{"COUNTRY", b.Location.CountryCode},
				{"LOCATION", strconv.FormatFloat(b.Location.Latitude, 'f', -1, 64) + "," + strconv.FormatFloat(b.Location.Longitude, 'f', -1, 64) +
					" ±" + strconv.FormatUint(b.Location.LatLongRadiusKm, 10) + " km"},
			}
		},
		commands: func(*resourceFlags) []*cobra.Command { return edgeSessionCommands() },
	}
}

// newAppSessionsCommand returns `sluice app-sessions`.
func newAppSessionsCommand() *cobra.Command { return newFamilyCommand(appSessionsFamily()) }
