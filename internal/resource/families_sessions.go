package resource

import (
	"reflect"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/schemas"
)

// AppSessions is the family of application sessions, /app/sessions
// (specification sections 2.7 and 4.3a). The edge records them; the API
// lists, shows and revokes them, and sets no field.
func AppSessions() Spec {
	return Spec{
		Prefix: schemas.PrefixAppSession, Path: apiwire.AppSessionsPath, ListKey: apiwire.AppSessionsListKey,
		Doc: Doc{
			Stem: "AppSession", Plural: "AppSessions", Tag: "app_sessions",
			Item: "application session", Items: "sessions",
			List: &Op{Summary: "List application sessions, newest first.",
				Description: "Sessions past their `expires_at` are not listed. There is no create: the edge records\n" +
					"a session when an end user logs in.\n",
				Answer: Answer{Description: "A page of application sessions."}},
			Get: &Op{Summary: "Get an application session.",
				Description: "A session past its `expires_at`, or revoked, is not found (404)."},
			Delete: &Op{Summary: "Revoke an application session.",
				Description: "The session ends at once: the edge's next refresh of it fails, and the end user logs\n" +
					"in again.\n"},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.AppSession](),
				ID: "an application session",
				Resource: "An end user's login to an endpoint of the account (specification section 2.7), recorded " +
					"by the edge. It ends at `expires_at`, when revoked, or when a newer login of the account " +
					"takes its place at the limit of sessions (serve `--max-app-sessions`).",
				List:     "A page of application sessions, newest first, under `application_sessions`.",
				Response: "The application session."},
		},
	}
}

// TunnelSessions is the family of tunnel sessions, /tunnel_sessions: an
// agent's session with an edge. The edge records and ends them; the API
// lists and shows them, stops one, and sets no field.
func TunnelSessions() Spec {
	return Spec{
		Prefix: schemas.PrefixTunnelSession, Path: apiwire.TunnelSessionsPath, ListKey: apiwire.TunnelSessionsListKey,
		Doc: Doc{
			Stem: "TunnelSession", Plural: "TunnelSessions", Tag: "tunnel_sessions",
			Item: "tunnel session", Items: "sessions",
			List: &Op{Summary: "List tunnel sessions, newest first.",
				Description: "The sessions of the account's agents connected to an edge now. There is no create,\n" +
					"update or delete (405): the edge records a session when an agent connects with a\n" +
					"credential's authtoken, and ends it when the agent goes. A session whose edge has\n" +
					"stopped (no heartbeat for 15 seconds) is not listed.\n",
				Answer: Answer{Description: "A page of tunnel sessions."}},
			Get: &Op{Summary: "Get a tunnel session.",
				Description: "A session that has ended, or whose edge has stopped, is not found (404)."},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.TunnelSession](),
				ID:       "a tunnel session",
				Resource: "An agent's session with an edge, recorded by the edge when the agent connects with a credential's authtoken.",
				List:     "A page of tunnel sessions, newest first, under `tunnel_sessions`.",
				Response: "The tunnel session."},
		},
	}
}

// Endpoints is the family of endpoints, /endpoints: the public addresses
// agents' sessions serve. The edge records and ends them; the API lists
// and shows them, and sets no field.
func Endpoints() Spec {
	return Spec{
		Prefix: schemas.PrefixEndpoint, Path: apiwire.EndpointsPath, ListKey: apiwire.EndpointsListKey,
		Doc: Doc{
			Stem: "Endpoint", Plural: "Endpoints", Tag: "endpoints",
			Item: "endpoint", Items: "endpoints",
			List: &Op{Summary: "List endpoints, newest first.",
				Description: "The public addresses the account's agents serve now. There is no create, update or\n" +
					"delete (405): the edge records an endpoint when an agent binds it, and ends it when\n" +
					"the agent unbinds it or its session ends.\n",
				Answer: Answer{Description: "A page of endpoints."}},
			Get: &Op{Summary: "Get an endpoint.",
				Description: "An endpoint that has ended, or whose edge has stopped, is not found (404)."},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.Endpoint](),
				ID:       "an endpoint",
				Resource: "A public address an agent's tunnel session serves, recorded by the edge when the agent binds it.",
				List:     "A page of endpoints, newest first, under `endpoints`.",
				Response: "The endpoint."},
		},
	}
}
