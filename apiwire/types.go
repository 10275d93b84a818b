package apiwire

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/schemas"
)

// AgentIngress is an agent ingress as the API returns it (specification
// section 2.1): a domain the account owns, delegated to the service by NS
// records, under which agents connect through regional domains. Its fields
// are in the specification's order.
type AgentIngress struct {
	ID string `json:"id"`
	// The agent ingress's path, `/agent_ingresses/<id>` (not a full URL).
	//
	//openapi:schema {type: string, pattern: "^/agent_ingresses/agin_[0-9A-Za-z]{27}$"}
	URI         string `json:"uri"`
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
	//openapi:ref AgentIngressDomain
	Domain string `json:"domain"` // in lower case
	// The service's name servers (`sluice serve --ingress-ns-targets`), to
	// set as the domain's NS records.
	NSTargets []string `json:"ns_targets"`
	// `tunnel.<region>.<domain>` for each region the service runs
	// (`sluice serve --regions`); the list grows when a region is added.
	RegionDomains               []string           `json:"region_domains"`
	CreatedAt                   string             `json:"created_at"`                    // RFC 3339, in milliseconds
	CertificateManagementPolicy *CertificatePolicy `json:"certificate_management_policy"` // nil: certificates are not managed
	// Null when the policy is null.
	CertificateManagementStatus *CertificateStatus `json:"certificate_management_status"`
}

// CertificatePolicy is how a domain's certificates are managed
// (specification section 2.1).
type CertificatePolicy struct {
	Authority      string `json:"authority"`        // "letsencrypt", the only one
	PrivateKeyType string `json:"private_key_type"` // "rsa" (the default) or "ecdsa"
}

// CertificateStatus is the state of a domain's managed certificate.
type CertificateStatus struct {
	// RenewsAt is when the next renewal is requested; nil until a
	// certificate exists.
	RenewsAt *string `json:"renews_at"`
	// ProvisioningJob is nil when no certificate is being provisioned or
	// renewed.
	ProvisioningJob *CertificateJob `json:"provisioning_job"`
}

// CertificateJob is a certificate being provisioned or renewed.
type CertificateJob struct {
	// ErrorCode is set when provisioning fails: INTERNAL_ERROR
	// (temporary) or DNS_ERROR (the user must correct DNS).
	ErrorCode *string `json:"error_code"`
	Msg       string  `json:"msg"`
	StartedAt string  `json:"started_at"`
	RetriesAt *string `json:"retries_at"`
}

// AgentIngressInput is the body of an agent ingress's create or update:
// the fields set are sent, the others left as they are. Domain is taken by
// a create only. CertificateManagementPolicy sends the policy it points
// to: a pointer to nil sends null, which turns management off.
type AgentIngressInput struct {
	Description *string `json:"description,omitempty"` // at most 255 bytes
	Metadata    *string `json:"metadata,omitempty"`    // at most 4096 bytes
	//openapi:ref AgentIngressDomain
	Domain *string `json:"domain,omitempty"`
	//openapi:ref CertificatePolicyInput
	CertificateManagementPolicy **CertificatePolicy `json:"certificate_management_policy,omitempty"`
}

// UnmarshalJSON reads the body as it is sent: a member
// certificate_management_policy of null is a pointer to nil, as it is
// sent, where encoding/json alone would take it for an absent member.
func (in *AgentIngressInput) UnmarshalJSON(raw []byte) error {
	type fields AgentIngressInput // without this method
	var (
		v      fields
		policy struct {
			Sent json.RawMessage `json:"certificate_management_policy"`
		}
	)
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &policy); err != nil {
		return err
	}
	if v.CertificateManagementPolicy == nil && string(policy.Sent) == "null" {
		v.CertificateManagementPolicy = new(*CertificatePolicy)
	}
	*in = AgentIngressInput(v)
	return nil
}

// AppSession is an application session as the API returns it
// (specification section 2.7): an end user's login to an endpoint, which
// the edge records and the account lists and revokes. Its fields are in
// the specification's order. The API has no create or update of it.
type AppSession struct {
	ID  string `json:"id"`
	URI string `json:"uri"` // its full URL
	// The URL of the hostport the endpoint serves, such as
	// `https://app.example.com`.
	//
	//openapi:schema {maxLength: 300}
	PublicURL      string         `json:"public_url"`
	BrowserSession BrowserSession `json:"browser_session"`
	// The user who logged in; `uri` is `/app/users/<id>`.
	//
	//openapi:ref SessionRef
	ApplicationUser schemas.Ref `json:"application_user"`
	CreatedAt       string      `json:"created_at"` // RFC 3339, in milliseconds
	// When the user was last seen by the edge (RFC 3339, UTC).
	//
	//openapi:ref Timestamp
	LastActive string `json:"last_active"` // in milliseconds
	// When the session ends (RFC 3339, UTC), at most 30 days after it
	// was last set.
	//
	//openapi:ref Timestamp
	ExpiresAt string `json:"expires_at"` // in milliseconds
	// The endpoint logged in to; `uri` is `/endpoints/<id>`.
	//
	//openapi:ref SessionRef
	Endpoint schemas.Ref `json:"endpoint"`
	// The HTTPS edge that served the login; null if the endpoint is
	// agent-initiated.
	//
	//openapi:ref SessionRef
	Edge *schemas.Ref `json:"edge"`
	// The route of the HTTPS edge; null if the endpoint is
	// agent-initiated.
	//
	//openapi:ref SessionRef
	Route *schemas.Ref `json:"route"`
}

// BrowserSession is the browser of an application session.
type BrowserSession struct {
	UserAgent UserAgent `json:"user_agent"`
	IPAddress string    `json:"ip_address"` // IPv4 or IPv6
	Location  Location  `json:"location"`
}

// UserAgent is a browser's User-Agent header and what the edge made of
// it; any field may be "".
type UserAgent struct {
	Raw            string `json:"raw"` // the header, at most 1024 bytes
	BrowserName    string `json:"browser_name"`
	BrowserVersion string `json:"browser_version"`
	DeviceType     string `json:"device_type"`
	OSName         string `json:"os_name"`
	OSVersion      string `json:"os_version"`
}

// Location is where a browser's address is, as far as the edge knows;
// zero when it does not.
type Location struct {
	CountryCode     string  `json:"country_code"` // ISO 3166-1 alpha-2, upper case, or ""
	Latitude        float64 `json:"latitude"`
	Longitude       float64 `json:"longitude"`
	LatLongRadiusKm uint64  `json:"lat_long_radius_km"` // how accurate the coordinates are
}

// APIKey is an API key as the API returns it (specification section 5.3).
type APIKey struct {
	ID          string `json:"id"`
	URI         string `json:"uri"` // its full URL
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
	CreatedAt   string `json:"created_at"` // RFC 3339, in milliseconds
	// The bearer token, `sk_` and 43 base62 digits.
	//
	//openapi:schema {pattern: "^sk_[0-9A-Za-z]{43}$"}
	Token *string `json:"token"` // only in the answer to the create; nil after
}

// APIKeyInput is the body of an API key's create or update: the fields
// set are sent, the others left as they are.
type APIKeyInput struct {
	Description *string `json:"description,omitempty"` // at most 255 bytes
	Metadata    *string `json:"metadata,omitempty"`    // at most 4096 bytes
}

// BotUser is a bot user as the API returns it (specification section
// 2.3): a user that belongs to no person, such as the owner of an agent's
// tunnel credentials.
type BotUser struct {
	ID  string `json:"id"`
	URI string `json:"uri"` // its full URL
	//openapi:ref BotUserName
	Name string `json:"name"`
	// Whether the bot user is active; true on creation.
	Active    bool   `json:"active"`
	CreatedAt string `json:"created_at"` // RFC 3339, in milliseconds
}

// BotUserInput is the body of a bot user's create or update: the fields
// set are sent, the others left as they are. A create takes Name only: a
// new bot user is active.
type BotUserInput struct {
	//openapi:ref BotUserName
	Name   *string `json:"name,omitempty"` // 1 to 255 bytes, unique in the account ignoring case
	Active *bool   `json:"active,omitempty"`
}

// Credential is a tunnel credential as the API returns it (specification
// sections 2.4 and 5): the authtoken of an agent, what it may bind, and
// the bot user that owns it.
type Credential struct {
	ID          string `json:"id"`
	URI         string `json:"uri"` // its full URL
	CreatedAt   string `json:"created_at"`
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
	// The authtoken, `ct_` and 43 base62 digits.
	//
	//openapi:schema {pattern: "^ct_[0-9A-Za-z]{43}$"}
	Token *string `json:"token"` // only in the answer to the create; nil after
	//openapi:ref CredentialACL
	ACL []string `json:"acl"` // "*", "bind:<domain>", "bind:*.<domain>" or "bind:<host>:<port>"; none: no restriction
	// The bot user that owns the credential, or null.
	//
	//openapi:ref BotUserID
	OwnerID *string `json:"owner_id"`
}

// CredentialInput is the body of a credential's create or update: the
// fields set are sent, the others left as they are. An update with an
// empty ACL removes every rule, and one with an empty OwnerID the owner.
type CredentialInput struct {
	Description *string `json:"description,omitempty"` // at most 255 bytes
	Metadata    *string `json:"metadata,omitempty"`    // at most 4096 bytes
	//openapi:ref CredentialACL
	ACL *[]string `json:"acl,omitempty"`
	// A bot user of the account; "" (in an update) removes the owner.
	OwnerID *string `json:"owner_id,omitempty"`
}

// HTTPSEdge is an HTTPS edge as the API returns it: the hostports, of
// the account's reserved domains, where it takes traffic, and its routes,
// shown inline as the reference service does; they are a family of their
// own (client.Client.HTTPSEdgeRoutes).
type HTTPSEdge struct {
	ID          string `json:"id"`
	URI         string `json:"uri"` // its full URL
	CreatedAt   string `json:"created_at"`
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
	//openapi:ref Hostports
	Hostports []string `json:"hostports"` // "<domain>:443", each a reserved domain of the account or a name a wildcard one covers
	// Every route of the edge, oldest first, with its modules, as the
	// reference service shows them; they are created and changed at
	// `/edges/https/{edge_id}/routes`.
	Routes []HTTPSEdgeRoute `json:"routes"` // client.Client.HTTPSEdgeRoutes changes them
}

// HTTPSEdgeInput is the body of an HTTPS edge's create or update: the
// fields set are sent, the others left as they are.
type HTTPSEdgeInput struct {
	Description *string `json:"description,omitempty"` // at most 255 bytes
	Metadata    *string `json:"metadata,omitempty"`    // at most 4096 bytes
	//openapi:ref Hostports
	Hostports *[]string `json:"hostports,omitempty"`
}

// HTTPSEdgeRoute is a route of an HTTPS edge as the API returns it: the
// requests it takes (MatchType and Match) and its modules, nil when
// unset (specification sections 2.5, 2.6, 4.3).
type HTTPSEdgeRoute struct {
	ID  string `json:"id"`
	URI string `json:"uri"` // its full URL
	//openapi:ref HTTPSEdgeID
	EdgeID      string `json:"edge_id"`
	CreatedAt   string `json:"created_at"`
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
	//openapi:ref RouteMatchType
	MatchType string `json:"match_type"` // "exact_path" or "path_prefix"
	//openapi:ref RouteMatch
	Match                 string                 `json:"match"` // a path, starting with "/"
	CircuitBreaker        *CircuitBreaker        `json:"circuit_breaker"`
	WebsocketTCPConverter *WebsocketTCPConverter `json:"websocket_tcp_converter"`
	Backend               *RouteBackend          `json:"backend"`
	TrafficPolicy         *RouteTrafficPolicy    `json:"traffic_policy"`
}

// HTTPSEdgeRouteInput is the body of a route's create or update: the
// fields set are sent, the others left as they are. Its modules are set
// with client.Client.CircuitBreaker, WebsocketTCPConverter, RouteBackend
// and RouteTrafficPolicy.
type HTTPSEdgeRouteInput struct {
	Description *string `json:"description,omitempty"` // at most 255 bytes
	Metadata    *string `json:"metadata,omitempty"`    // at most 4096 bytes
	//openapi:ref RouteMatchType
	MatchType *string `json:"match_type,omitempty"` // required at create
	//openapi:ref RouteMatch
	Match *string `json:"match,omitempty"` // required at create
}

// CircuitBreaker is the circuit breaker module of a route as the API
// returns it (specification section 2.5).
type CircuitBreaker struct {
	Enabled                  bool    `json:"enabled"`
	TrippedDuration          uint32  `json:"tripped_duration"` // seconds
	RollingWindow            uint32  `json:"rolling_window"`   // seconds
	NumBuckets               uint32  `json:"num_buckets"`      // 1 to 128
	VolumeThreshold          uint32  `json:"volume_threshold"`
	ErrorThresholdPercentage float64 `json:"error_threshold_percentage"` // 0 to 1.0
}

// CircuitBreakerInput is the body that sets a route's circuit breaker,
// replacing it whole: a field not set takes its default.
type CircuitBreakerInput struct {
	Enabled                  *bool    `json:"enabled,omitempty"`          // default true
	TrippedDuration          *uint32  `json:"tripped_duration,omitempty"` // default 10
	RollingWindow            *uint32  `json:"rolling_window,omitempty"`   // default 10
	NumBuckets               *uint32  `json:"num_buckets,omitempty"`      // default 10
	VolumeThreshold          *uint32  `json:"volume_threshold,omitempty"` // default 20
	ErrorThresholdPercentage *float64 `json:"error_threshold_percentage,omitempty"`
}

// WebsocketTCPConverter is the websocket TCP converter module of a route
// as the API returns it (specification section 2.6).
type WebsocketTCPConverter struct {
	Enabled bool `json:"enabled"`
}

// WebsocketTCPConverterInput is the body that sets a route's websocket
// TCP converter, replacing it.
type WebsocketTCPConverterInput struct {
	Enabled *bool `json:"enabled,omitempty"` // default true
}

// RouteBackend is the backend module of a route as the API returns it:
// the tunnel group backend whose tunnels take the route's requests.
type RouteBackend struct {
	Enabled bool        `json:"enabled"`
	Backend schemas.Ref `json:"backend"` // /backends/tunnel_group/<bkdtg_...>
}

// RouteBackendInput is the body that sets a route's backend, replacing
// it.
type RouteBackendInput struct {
	Enabled   *bool   `json:"enabled,omitempty"`    // default true
	BackendID *string `json:"backend_id,omitempty"` // a tunnel group backend of the account, bkdtg_...; required
}

// RouteTrafficPolicy is the traffic policy module of a route as the API
// returns it: a policy document run on the route's requests.
type RouteTrafficPolicy struct {
	Enabled bool   `json:"enabled"`
	Value   string `json:"value"` // the policy document, YAML or JSON, as it was set
}

// RouteTrafficPolicyInput is the body that sets a route's traffic
// policy, replacing it.
type RouteTrafficPolicyInput struct {
	Enabled *bool   `json:"enabled,omitempty"` // default true
	Value   *string `json:"value,omitempty"`   // the policy document, at most 65536 bytes, without on_tcp_connect rules; required
}

// TunnelGroupBackend is a tunnel group backend as the API returns it:
// the labels that select its tunnels, and the labeled tunnels they
// select now.
type TunnelGroupBackend struct {
	ID          string `json:"id"`
	URI         string `json:"uri"` // its full URL
	CreatedAt   string `json:"created_at"`
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
	//openapi:ref Labels
	Labels map[string]string `json:"labels"`
	// The labeled tunnels it selects, sorted by id; `uri` is
	// `/endpoints/<id>`.
	//
	//openapi:schema {type: array, items: {$ref: "#/components/schemas/EndpointRef"}}
	Tunnels []schemas.Ref `json:"tunnels"`
}

// TunnelGroupBackendInput is the body of a tunnel group backend's create
// or update: the fields set are sent, the others left as they are.
// Labels replace the backend's whole.
type TunnelGroupBackendInput struct {
	Description *string `json:"description,omitempty"` // at most 255 bytes
	Metadata    *string `json:"metadata,omitempty"`    // at most 4096 bytes
	//openapi:ref Labels
	Labels *map[string]string `json:"labels,omitempty"` // 1 to 10; required at create
}

// Destination is an event destination as the API returns it: where events
// are delivered, and how sluice authenticates there. It never holds the
// secret of an access key.
type Destination struct {
	ID          string `json:"id"`
	URI         string `json:"uri"`
	CreatedAt   string `json:"created_at"`
	Description string `json:"description"`
	Metadata    string `json:"metadata"`
	// How events are serialized; always `json`.
	//
	//openapi:schema {const: json}
	Format string `json:"format"`
	Target Target `json:"target"`
}

// DestinationInput is the body of an event destination's create or
// update: the fields set are sent, the others left as they are. A target
// is replaced whole; one with an access key but without its secret keeps
// the stored secret of the same access key id.
type DestinationInput struct {
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
	//openapi:ref FormatInput
	Format *string `json:"format,omitempty"`
	//openapi:ref TargetInput
	Target *Target `json:"target,omitempty"`
}

// Target is where a destination delivers, as JSON
// {"TYPE": {"auth": {...}, "ARN_FIELD": "ARN"}}, such as
// {"kinesis": {"auth": {...}, "stream_arn": "arn:..."}}; {} for none.
type Target struct {
	Type     string // the target's type, such as kinesis; "" for none
	ARNField string // the name of its ARN's field, such as stream_arn
	ARN      string
	Auth     Auth
}

// MarshalJSON writes the target as the API does, the auth before the ARN,
// without escaping <, > and &.
func (t Target) MarshalJSON() ([]byte, error) {
	if t.Type == "" {
		return []byte("{}"), nil
	}
	return encodeParts(jsonPart{"{", t.Type}, jsonPart{`:{"auth":`, t.Auth}, jsonPart{",", t.ARNField},
		jsonPart{":", t.ARN}, jsonPart{"}}", nil})
}

// UnmarshalJSON reads a target of any type: the one field of its object
// that is not auth is its ARN.
func (t *Target) UnmarshalJSON(raw []byte) error {
	var byType map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byType); err != nil {
		return err
	}
	*t = Target{}
	if len(byType) > 1 {
		return errors.New("a target has one type, not several")
	}
	for typ, fields := range byType {
		t.Type = typ
		for name, value := range fields {
			if name == "auth" {
				if err := json.Unmarshal(value, &t.Auth); err != nil {
					return fmt.Errorf("%s.auth: %w", typ, err)
				}
				continue
			}
			if t.ARNField != "" {
				return fmt.Errorf("%s: two ARNs, %s and %s", typ, t.ARNField, name)
			}
			t.ARNField = name
			if err := json.Unmarshal(value, &t.ARN); err != nil {
				return fmt.Errorf("%s.%s: %w", typ, name, err)
			}
		}
	}
	return nil
}

// Auth says how sluice authenticates to AWS: by assuming Role, or with the
// access key Creds.
type Auth struct {
	Role  *Role  `json:"role,omitempty"`
	Creds *Creds `json:"creds,omitempty"`
}

// Role is an IAM role sluice assumes.
type Role struct {
	RoleARN string `json:"role_arn"`
}

// Creds is an AWS access key. Its secret is write-only: set in a create
// or update, never in an answer.
type Creds struct {
	AccessKeyID     string `json:"aws_access_key_id"`
	SecretAccessKey string `json:"aws_secret_access_key,omitempty"`
}

// String shows the access key id, never the secret, so that printing
// the credentials cannot show it.
func (c Creds) String() string { return "{aws_access_key_id: " + c.AccessKeyID + "}" }

// GoString is String, for %#v.
func (c Creds) GoString() string { return c.String() }

// Subscription is an event subscription as the API returns it
// (specification section 2.8): which event kinds go to which
// destinations.
type Subscription struct {
	ID          string `json:"id"`
	URI         string `json:"uri"`
	CreatedAt   string `json:"created_at"`
	Metadata    string `json:"metadata"`
	Description string `json:"description"`
	//openapi:schema {type: array, items: {$ref: "#/components/schemas/EventSource"}}
	Sources []Source `json:"sources"`
	//openapi:schema {type: array, items: {$ref: "#/components/schemas/DestinationRef"}}
	Destinations []schemas.Ref `json:"destinations"`
}

// SubscriptionInput is the body of an event subscription's create or
// update: the fields set are sent, the others left as they are. Sources
// and DestinationIDs replace the whole list.
type SubscriptionInput struct {
	Description *string `json:"description,omitempty"` // at most 255 characters
	Metadata    *string `json:"metadata,omitempty"`    // at most 4096 characters
	// The event kinds to route, each at most once.
	//
	//openapi:schema {type: array, items: {$ref: "#/components/schemas/EventSourceCreate"}}
	Sources *[]SourceInput `json:"sources,omitempty"`
	// The destinations to send the events to.
	//
	//openapi:schema {uniqueItems: true, items: {$ref: "#/components/schemas/DestinationID"}}
	DestinationIDs *[]string `json:"destination_ids,omitempty"`
}

// Source is a source of a subscription as the API returns it: an event
// kind, and for a traffic kind its filter and fields when set.
type Source struct {
	Type   string   `json:"type"` // such as http_request_complete.v0
	URI    string   `json:"uri"`
	Filter string   `json:"filter,omitempty"` // CEL over the event, bound to ev
	Fields []string `json:"fields,omitempty"` // dotted paths delivered; none: every field
}

// SourceInput is a source to add, or one of the sources of a
// SubscriptionInput.
type SourceInput struct {
	Type   string   `json:"type"`
	Filter string   `json:"filter,omitempty"`
	Fields []string `json:"fields,omitempty"`
}

// SourceUpdate is the body of a source's update: the fields set replace
// the old ones.
type SourceUpdate struct {
	Filter *string   `json:"filter,omitempty"`
	Fields *[]string `json:"fields,omitempty"`
}

// SourceList is every source of a subscription.
type SourceList struct {
	Sources []Source `json:"sources"`
	URI     string   `json:"uri"`
}

// TunnelSession is an agent's session with an edge as the API returns it
// (ts_...): the edge records it when the agent connects, and ends it when
// the agent goes; the API lists, shows and stops it, and has no create,
// update or delete of it.
type TunnelSession struct {
	ID  string `json:"id"`
	URI string `json:"uri"` // its full URL
	// The version the agent gave.
	AgentVersion string `json:"agent_version"`
	// The credential the agent connected with; `uri` is `/credentials/<id>`.
	//
	//openapi:ref TunnelRef
	Credential schemas.Ref `json:"credential"`
	// The agent's address, IPv4 or IPv6.
	IP string `json:"ip"`
	// What the agent sent, at most 4096 bytes.
	Metadata string `json:"metadata"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Region   string `json:"region"`
	// When the session started (RFC 3339, UTC).
	//
	//openapi:ref Timestamp
	StartedAt string `json:"started_at"` // in milliseconds
	// How the agent is connected, `muxado`.
	Transport string `json:"transport"`
	UserAgent string `json:"user_agent"`
}

// Endpoint is a public address an agent's tunnel session serves, as the
// API returns it (ep_...): the edge records it when the agent binds it,
// and ends it when the agent unbinds it or its session ends; the API
// lists and shows it, and has no create, update or delete of it.
type Endpoint struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`        // its full URL
	CreatedAt string `json:"created_at"` // RFC 3339, in milliseconds
	// `labeled` for a labeled tunnel, which has `labels` and no public
	// address (its `url`, `public_url` and `hostport` are empty): tunnel
	// group backends select it.
	//
	//openapi:schema {enum: [http, https, tcp, labeled]}
	Proto string `json:"proto"`
	// A labeled tunnel's labels; absent for the other protos.
	//
	//openapi:ref Labels
	Labels map[string]string `json:"labels,omitempty"`
	// The public URL, `http://host[:port]`, `https://host[:port]` or
	// `tcp://host:port`; empty for a labeled tunnel.
	URL string `json:"url"`
	// The same as `url`.
	PublicURL string `json:"public_url"`
	// The URL's `host:port`.
	Hostport string `json:"hostport"`
	// The reserved domain that allowed it; null for a random subdomain or
	// a TCP address.
	//
	//openapi:ref TunnelRef
	Domain *schemas.Ref `json:"domain"` // /reserved_domains/<rd_...>
	// What the agent said it forwards to.
	UpstreamURL string `json:"upstream_url"`
	Metadata    string `json:"metadata"`
	Description string `json:"description"`
	// The session serving it; `uri` is `/tunnel_sessions/<id>`.
	//
	//openapi:ref TunnelRef
	TunnelSession schemas.Ref `json:"tunnel_session"`
}
