package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// Publisher stores the audit events of management calls.
// *producer.Producer implements it.
type Publisher interface {
	// PublishEncoded stores events and returns one Result per event, in
	// order. A Result's error wraps producer.ErrNotStored when JetStream did
	// not acknowledge the event, and nats.ErrMaxPayload too when the event
	// is larger than the NATS server accepts.
	PublishEncoded(ctx context.Context, events []schemas.Encoded) []producer.Result
}

// Config sets the API's limits. The zero value gets the defaults.
type Config struct {
	// DoorConfig holds the front door's limits (apiconv.FrontDoor), which
	// bound the ingest and management requests in flight and their bytes.
	apiconv.DoorConfig
	// AccountWriteRate and AccountWriteBurst bound how fast one account
	// changes its configuration: every management call that is not a GET
	// takes a token of its account's bucket of AccountWriteBurst tokens,
	// refilled at AccountWriteRate a second, and one that finds it empty
	// is refused with 429 ERR_SLUICE_139 and the wait in Retry-After.
	// Defaults DefaultAccountWriteRate and DefaultAccountWriteBurst; a
	// negative rate leaves changes unbounded.
	AccountWriteRate  float64
	AccountWriteBurst int
	// BaseURL is the scheme and host clients reach the API at, such as
	// https://sluice.example.com, for the full URLs of responses and of
	// the audit events stored (uri, next_page_uri). Required with any
	// management route (Deps.Destinations, Subscriptions, AgentIngresses,
	// APIKeys or BotUsers). It is never taken from a request's Host, which the client
	// chooses: a stored event must not carry a host a caller made up.
	BaseURL string
	// ServiceDomains are the service's own domains (serve
	// --service-domains; default DefaultServiceDomains): a reserved domain
	// may be a name under one, never one or a wildcard covering one, and a
	// custom domain's CNAME targets are names under the first.
	ServiceDomains []string
	// Ingress is the operator's configuration that agent ingresses
	// show: their NS targets and regional domains, and the domains no
	// agent ingress may have.
	Ingress IngressConfig
	// AuditTimeout bounds the publishing of the audit event of one change
	// when it is made; an event not published by then waits in the
	// store's outbox for an AuditRelay. Default DefaultAuditTimeout.
	AuditTimeout time.Duration
	// Front, when set, wraps every route first of all but the operation
	// id: before the storage guard, the key's check and the front door's
	// admission, and with its answers carrying Service-Operation-Id.
	// sluice serve puts its traffic policy (--traffic-policy) there.
	Front func(http.Handler) http.Handler
}

// DefaultAuditTimeout is the default of Config.AuditTimeout.
const DefaultAuditTimeout = 5 * time.Second

func (c *Config) setDefaults() {
	if c.ServiceDomains == nil {
		c.ServiceDomains = DefaultServiceDomains
	}
	if c.AccountWriteRate == 0 {
		c.AccountWriteRate = DefaultAccountWriteRate
	}
	defaults.Positive(&c.AccountWriteBurst, DefaultAccountWriteBurst)
	defaults.Positive(&c.AuditTimeout, DefaultAuditTimeout)
	c.Ingress.setDefaults(c.BaseURL)
}

// Deps are what the API talks to.
type Deps struct {
	// Keys checks the API key of every request; required.
	Keys apiconv.Keys
	// Publisher stores the audit events of management calls; required.
	Publisher Publisher
	Catalogue *schemas.Catalogue    // default schemas.Default()
	Logger    *slog.Logger          // default slog.Default()
	Metrics   prometheus.Registerer // where the API registers its metrics; nil: not registered
	// Destinations keeps event destinations; nil: the /event_destinations
	// routes are not served.
	Destinations Destinations
	// Subscriptions keeps event subscriptions; nil: the
	// /event_subscriptions routes are not served.
	Subscriptions Subscriptions
	// AgentIngresses keeps agent ingresses; nil: the /agent_ingresses
	// routes are not served.
	AgentIngresses AgentIngresses
	// AppSessions keeps application sessions; nil: the /app/sessions
	// routes are not served.
	AppSessions AppSessions
	// APIKeys keeps API keys; nil: the /api_keys routes are not served.
	APIKeys APIKeys
	// BotUsers keeps bot users; nil: the /bot_users routes are not served.
	BotUsers BotUsers
	// Credentials keeps tunnel credentials; nil: the /credentials routes
	// are not served.
	Credentials Credentials
	// HTTPSEdges keeps HTTPS edges and their routes; nil: the
	// /edges/https routes are not served.
	HTTPSEdges HTTPSEdges
	// ReservedDomains keeps reserved domains; nil: the /reserved_domains
	// routes are not served.
	ReservedDomains ReservedDomains
	// TunnelGroupBackends keeps tunnel group backends; nil: the
	// /backends/tunnel_group routes are not served.
	TunnelGroupBackends TunnelGroupBackends
	// Tunnels keeps the tunnel sessions and endpoints the edge records;
	// nil: the /tunnel_sessions and /endpoints routes are not served.
	Tunnels Tunnels
	// DeliveryStatus reads destinations' delivery status; nil (or
	// Destinations nil): GET /event_destinations/{id}/status is not served.
	DeliveryStatus DeliveryStatus
	// DestinationTrial writes test events; nil (or Destinations nil):
	// POST /event_destinations/{id}/test is not served.
	DestinationTrial DestinationTrial
	// DeadLetters reads and redrives the dead letters of destinations;
	// nil (or Destinations nil): the /event_destinations/{id}/dead_letters
	// routes are not served.
	DeadLetters DeadLetters
	// Replays starts and reads replays of subscriptions; nil (or
	// Subscriptions nil): the replay routes of /event_subscriptions are
	// not served.
	Replays Replays
	// Outbox is where the store keeps the audit events of changes until
	// they are published; the API takes out the events it publishes. nil:
	// they are left to an AuditRelay.
	Outbox Outbox
	// Storage says whether JetStream's store takes writes; while it does
	// not, every request that writes is refused at once with 503
	// ERR_SLUICE_110. nil: not watched (an external NATS server, whose
	// refusals are reported as they come).
	Storage apiconv.Storage
}

// Server is the HTTP API: the management routes of the families given in
// Deps, and what every route of the listener goes through first: the
// operation id, the check of Authorization's form, Config.Front and the
// storage guard. It is an http.Handler. POST /events is package ingest's,
// routed with Handle.
type Server struct {
	cfg       Config
	keys      apiconv.Keys
	publisher Publisher
	// destinations, subscriptions, apiKeys, botUsers and credentials are nil when
	// their routes are not served.
	destinations  Destinations
	subscriptions Subscriptions
	apiKeys       APIKeys
	botUsers      BotUsers
	credentials   Credentials
	domains       ReservedDomains
	deadLetters   DeadLetters
	replays       Replays
	storage       apiconv.Storage
	outbox        Outbox
	catalogue     *schemas.Catalogue
	log           *slog.Logger
	metrics       *metrics
	mux           *http.ServeMux
	handler       http.Handler
	// families are the resource families routed, for the test of
	// docs/openapi.yaml.
	families []familyDoc
	// madeBy says, by a family's path, why the API does not make, change
	// nor delete its resources (family.madeBy); fallback's 405 tells it.
	madeBy map[string]string
	// queries are the query parameters the management routes take, by
	// pattern (takeQuery); a route not in it takes none.
	queries map[string]queryRule

	// agentIngresses is nil when its routes are not served.
	agentIngresses AgentIngresses
	// appSessions is nil when its routes are not served.
	appSessions AppSessions
	// httpsEdges is nil when its routes are not served.
	httpsEdges HTTPSEdges
	// backends is nil when the routes of tunnel group backends are not
	// served.
	backends TunnelGroupBackends
	// tunnels is nil when the routes of tunnel sessions and endpoints
	// are not served.
	tunnels Tunnels

	// deliveryStatus and destinationTrial are nil when their routes are
	// not served.
	deliveryStatus   DeliveryStatus
	destinationTrial DestinationTrial
	// door checks keys, and bounds the requests in flight and their
	// bytes.
	door *apiconv.FrontDoor
	// writeRate bounds how fast each account changes its configuration;
	// nil: unbounded.
	writeRate *writeRate
}

// New returns the API server. Other routes (POST /events, health) can be
// added with Handle before serving. Without any management family in
// Deps, it serves only those.
func New(cfg Config, deps Deps) (*Server, error) {
	cfg.setDefaults()
	if deps.Keys == nil || deps.Publisher == nil {
		return nil, errors.New("api: Keys and Publisher are required")
	}
	if deps.Destinations != nil || deps.Subscriptions != nil || deps.AgentIngresses != nil || deps.AppSessions != nil || deps.APIKeys != nil || deps.BotUsers != nil || deps.Credentials != nil || deps.HTTPSEdges != nil || deps.ReservedDomains != nil || deps.Tunnels != nil || deps.TunnelGroupBackends != nil {
		if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("api: BaseURL %q is not a full http or https URL: the management routes need the scheme and host clients reach the API at, for the uri of resources and audit events", cfg.BaseURL)
		}
	}
	if deps.Catalogue == nil {
		deps.Catalogue = schemas.Default()
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	door, err := apiconv.NewFrontDoor(cfg.DoorConfig, deps.Logger, deps.Metrics)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(deps.Metrics)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:           cfg,
		keys:          deps.Keys,
		publisher:     deps.Publisher,
		destinations:  deps.Destinations,
		subscriptions: deps.Subscriptions,
		apiKeys:       deps.APIKeys,
		botUsers:      deps.BotUsers,
		credentials:   deps.Credentials,
		domains:       deps.ReservedDomains,
		deadLetters:   deps.DeadLetters,
		replays:       deps.Replays,
		storage:       deps.Storage,
		outbox:        deps.Outbox,
		catalogue:     deps.Catalogue,
		log:           deps.Logger,
		metrics:       m,
		mux:           http.NewServeMux(),
		door:          door,
		writeRate:     newWriteRate(cfg.AccountWriteRate, cfg.AccountWriteBurst),
	}
	s.deliveryStatus, s.destinationTrial = deps.DeliveryStatus, deps.DestinationTrial
	s.agentIngresses = deps.AgentIngresses
	s.appSessions = deps.AppSessions
	s.httpsEdges = deps.HTTPSEdges
	s.backends = deps.TunnelGroupBackends
	s.tunnels = deps.Tunnels
	if s.destinations != nil {
		s.routeDestinations()
		s.routeDestinationStatus()
	}
	if s.destinations != nil && s.deadLetters != nil {
		s.routeDeadLetters()
	}
	if s.subscriptions != nil {
		s.routeSubscriptions()
	}
	if s.subscriptions != nil && s.replays != nil {
		s.routeReplays()
	}
	if s.agentIngresses != nil {
		s.routeAgentIngresses()
	}
	if s.appSessions != nil {
		s.routeAppSessions()
	}
	if s.apiKeys != nil {
		s.routeAPIKeys()
	}
	if s.botUsers != nil {
		s.routeBotUsers()
	}
	if s.credentials != nil {
		s.routeCredentials()
	}
	if s.httpsEdges != nil {
		s.routeHTTPSEdges()
	}
	if s.domains != nil {
		s.routeReservedDomains()
		s.routeTLSCertificates()
	}
	if s.backends != nil {
		s.routeTunnelGroupBackends()
	}
	if s.tunnels != nil {
		s.routeTunnels()
	}
	s.mux.HandleFunc("/", s.fallback)
	routes := apiconv.GuardStorage(s.storage, s.mux)
	if cfg.Front != nil {
		routes = cfg.Front(routes)
	}
	s.handler = apiconv.WithOperation(s.log, apiconv.CanonicalAuthorization(s.keys, routes))
	return s, nil
}

// Handle adds a route of another package, behind the operation id, the
// check of Authorization's form, Config.Front and the storage guard, and
// in the answers of 404 and 405. The route checks Service-Version and the
// key itself if it needs them (apiconv.FrontDoor.CheckKey), as POST /events does
// (package ingest); /healthz needs neither.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// FrontDoor returns the front door of the server's routes, for a route
// added with Handle that checks keys and admits bodies as they do.
func (s *Server) FrontDoor() *apiconv.FrontDoor { return s.door }

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// authenticated is the way in of every management route: it checks
// Service-Version and the bearer key (apiconv.FrontDoor.CheckKey), refuses a query
// parameter the route does not take (checkQuery), then admits the
// request's body, if it has one, through the front door
// (apiconv.FrontDoor.AdmitManagement).
// POST /events, which has an admission of its own, takes CheckKey alone.
func (s *Server) authenticated(next http.Handler) http.Handler {
	return s.door.CheckKey(s.checkQuery(s.limitWrites(s.door.AdmitManagement(maxRequestBytes, next))))
}

var methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// fallback answers requests no route took: 405 with Allow when the path
// takes other methods, else 404, both with the API's error body.
func (s *Server) fallback(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range methods {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		why := ""
		if madeBy := s.madeByOf(r.URL.Path); madeBy != "" {
			why = ": " + madeBy
		}
		apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeMethodNotAllowed, "%s does not accept %s; use %s%s", r.URL.Path, r.Method, strings.Join(allowed, " or "), why))
		return
	}
	apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeNotFound, "no such path: %s %s", r.Method, r.URL.Path))
}

// madeByOf returns the madeBy of the family whose path, or a path under
// it, is path; "" for none.
func (s *Server) madeByOf(path string) string {
	for listPath, madeBy := range s.madeBy {
		if path == listPath || strings.HasPrefix(path, listPath+"/") {
			return madeBy
		}
	}
	return ""
}

// storageError returns apiconv.StorageError of the server's storage.
func (s *Server) storageError(ctx context.Context, err error) error {
	return apiconv.StorageError(ctx, s.storage, err)
}
