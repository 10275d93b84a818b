package main

import (
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/bytesize"
	"github.com/sluicehq/sluice/internal/store"
)

// The memory an ingest body costs while its request is in flight, per body
// byte: the body itself (1), and the events decoded from it and encoded in
// their envelopes (1.84 for a 9 MiB batch of sampled events, 1.30 for a
// 10 MiB batch of invalid ones), and what publishing them holds. 4 covers
// it with room to spare.
const bodyByteCost = 4

// ingestMemoryShare is the share of the memory limit that the bodies of
// ingest requests in flight may cost; the rest is for delivery, the
// embedded NATS server and Go's own overhead.
const ingestMemoryShare = 0.5

// limitFlags are serve's flags of the front door of ingest and of what one
// account may have.
type limitFlags struct {
	maxInFlight             int
	maxAccountInFlight      int
	maxBytesInFlight        string
	maxAccountBytesInFlight string
	minBodyRate             string
	maxAccountManagement    int

	accountWriteRate  float64
	accountWriteBurst int

	destinations           int
	subscriptions          int
	routes                 int
	sourcesPerSubscription int
	runningReplays         int
	apiKeys                int
	agentIngresses         int
	appSessions            int
	botUsers               int
	credentials            int
	httpsEdges             int
	httpsEdgeRoutes        int
	reservedDomains        int
	tunnelSessions         int
	endpoints              int
	tunnelGroupBackends    int
}

func (f *limitFlags) register(fl *pflag.FlagSet) {
	fl.IntVar(&f.maxInFlight, "max-in-flight", apiconv.DefaultMaxInFlight, "ingest requests read and processed at once; beyond, 503")
	fl.IntVar(&f.maxAccountInFlight, "max-account-in-flight", 0, "ingest requests of one account in flight; beyond, 429 (default a quarter of --max-in-flight)")
	fl.StringVar(&f.maxBytesInFlight, "max-bytes-in-flight", "", "body bytes of the ingest requests in flight, such as 64MiB; beyond, 503 (default: half the memory limit over 4 bytes of memory per body byte, or 256MiB without a memory limit)")
	fl.StringVar(&f.maxAccountBytesInFlight, "max-account-bytes-in-flight", "", "body bytes of one account's ingest requests in flight; beyond, 429 (default a quarter of --max-bytes-in-flight, at least the 10 MiB of one body)")
	fl.StringVar(&f.minBodyRate, "min-body-rate", "1KiB", "slowest an ingest or management body may arrive, per second, measured over every 10 s; slower, 408")
	fl.IntVar(&f.maxAccountManagement, "max-account-management-in-flight", apiconv.DefaultMaxAccountManagementInFlight, "management requests of one account in flight, reads (GET, HEAD) and changes (POST, PATCH, PUT) alike; beyond, 429 (bodies count in the bytes in flight)")
	fl.Float64Var(&f.accountWriteRate, "account-write-rate", api.DefaultAccountWriteRate, "changes one account may make a second through the management API (every call but a GET), after a burst of --account-write-burst; beyond, 429; -1: unbounded")
	fl.IntVar(&f.accountWriteBurst, "account-write-burst", api.DefaultAccountWriteBurst, "changes one account may make at once before --account-write-rate applies")
	fl.IntVar(&f.destinations, "max-destinations", store.DefaultMaxDestinations, "event destinations one account may have")
	fl.IntVar(&f.subscriptions, "max-subscriptions", store.DefaultMaxSubscriptions, "event subscriptions one account may have")
	fl.IntVar(&f.routes, "max-routes", store.DefaultMaxRoutes, "routes one account may have: the destinations its subscriptions name, one per destination per subscription, each a consumer and a worker")
	fl.IntVar(&f.sourcesPerSubscription, "max-sources-per-subscription", 0, "sources one subscription may have (default and most: one per event kind)")
	fl.IntVar(&f.runningReplays, "max-running-replays", store.DefaultMaxRunningReplay, "replays one account may have running at once")
	fl.IntVar(&f.apiKeys, "max-api-keys", store.DefaultMaxAPIKeys, "API keys one account may have")
	fl.IntVar(&f.agentIngresses, "max-agent-ingresses", store.DefaultMaxAgentIngresses, "agent ingresses one account may have")
	fl.IntVar(&f.appSessions, "max-app-sessions", store.DefaultMaxAppSessions, "application sessions one account may have; past it, a login evicts the least recently active session")
	fl.IntVar(&f.botUsers, "max-bot-users", store.DefaultMaxBotUsers, "bot users one account may have")
	fl.IntVar(&f.credentials, "max-credentials", store.DefaultMaxCredentials, "tunnel credentials one account may have")
	fl.IntVar(&f.httpsEdges, "max-https-edges", store.DefaultMaxHTTPSEdges, "HTTPS edges one account may have")
	fl.IntVar(&f.httpsEdgeRoutes, "max-https-edge-routes", store.DefaultMaxHTTPSEdgeRoutes, fmt.Sprintf("routes of HTTPS edges one account may have, all its edges together; at most %d (an edge is deleted with its routes in one batch)", store.MaxHTTPSEdgeRoutes))
	fl.IntVar(&f.reservedDomains, "max-reserved-domains", store.DefaultMaxReservedDomains, "reserved domains one account may have")
	fl.IntVar(&f.tunnelSessions, "max-tunnel-sessions", store.DefaultMaxTunnelSessions, "tunnel sessions one account may have: agents connected at once")
	fl.IntVar(&f.endpoints, "max-endpoints", store.DefaultMaxEndpoints, "endpoints one account may have: public addresses its agents serve at once")
	fl.IntVar(&f.tunnelGroupBackends, "max-tunnel-group-backends", store.DefaultMaxTunnelGroupBackends, "tunnel group backends, the backends of HTTPS edge routes, one account may have")
}

// validate returns what is wrong with the flags, each with what to do. A
// number or size of 0 takes its default.
func (f limitFlags) validate() []error {
	var errs []error
	for _, n := range []struct {
		name  string
		value int
	}{
		{"--max-in-flight", f.maxInFlight},
		{"--max-account-in-flight", f.maxAccountInFlight},
		{"--max-account-management-in-flight", f.maxAccountManagement},
		{"--account-write-burst", f.accountWriteBurst},
		{"--max-destinations", f.destinations},
		{"--max-subscriptions", f.subscriptions},
		{"--max-routes", f.routes},
		{"--max-sources-per-subscription", f.sourcesPerSubscription},
		{"--max-running-replays", f.runningReplays},
		{"--max-api-keys", f.apiKeys},
		{"--max-agent-ingresses", f.agentIngresses},
		{"--max-app-sessions", f.appSessions},
		{"--max-bot-users", f.botUsers},
		{"--max-credentials", f.credentials},
		{"--max-https-edges", f.httpsEdges},
		{"--max-https-edge-routes", f.httpsEdgeRoutes},
		{"--max-reserved-domains", f.reservedDomains},
		{"--max-tunnel-sessions", f.tunnelSessions},
		{"--max-endpoints", f.endpoints},
		{"--max-tunnel-group-backends", f.tunnelGroupBackends},
	} {
		if n.value < 0 {
			errs = append(errs, fmt.Errorf("%s %d is negative: give a positive number (0 takes the default)", n.name, n.value))
		}
	}
	if f.httpsEdgeRoutes > store.MaxHTTPSEdgeRoutes {
		errs = append(errs, fmt.Errorf("--max-https-edge-routes %d is over %d: an edge is deleted with its routes in one JetStream batch, which takes at most 1000 writes; give %d or fewer", f.httpsEdgeRoutes, store.MaxHTTPSEdgeRoutes, store.MaxHTTPSEdgeRoutes))
	}
	if f.accountWriteRate < 0 && f.accountWriteRate != -1 {
		errs = append(errs, fmt.Errorf("--account-write-rate %g is negative: give changes a second, or -1 for no bound", f.accountWriteRate))
	}
	for _, s := range []struct{ name, value string }{
		{"--max-bytes-in-flight", f.maxBytesInFlight},
		{"--max-account-bytes-in-flight", f.maxAccountBytesInFlight},
		{"--min-body-rate", f.minBodyRate},
	} {
		if s.value == "" {
			continue
		}
		if _, err := bytesize.Parse(s.value); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", s.name, s.value, err))
		}
	}
	return errs
}

// apiConfig returns the front door of the API: the budget of body bytes
// in flight is --max-bytes-in-flight or else derived from the memory limit
// in force (call it after applyMemoryLimit). It logs the bounds chosen.
func (f limitFlags) apiConfig(log *slog.Logger) api.Config {
	cfg := api.Config{
		DoorConfig: apiconv.DoorConfig{
			MaxInFlight:                  f.maxInFlight,
			MaxAccountInFlight:           f.maxAccountInFlight,
			MaxAccountManagementInFlight: f.maxAccountManagement,
		},
		AccountWriteRate:  f.accountWriteRate,
		AccountWriteBurst: f.accountWriteBurst,
	}
	from := "--max-bytes-in-flight"
	cfg.MaxBytesInFlight = mustSize(f.maxBytesInFlight)
	if cfg.MaxBytesInFlight == 0 {
		cfg.MaxBytesInFlight, from = bytesInFlightFor(debug.SetMemoryLimit(-1))
	}
	cfg.MaxAccountBytesInFlight = mustSize(f.maxAccountBytesInFlight)
	cfg.MinBodyRate = mustSize(f.minBodyRate)
	log.Info("ingest front door", "max_in_flight", f.maxInFlight, "max_bytes_in_flight", cfg.MaxBytesInFlight, "bytes_from", from, "min_body_rate", cfg.MinBodyRate, "max_account_management_in_flight", f.maxAccountManagement)
	return cfg
}

// bytesInFlightFor is the budget of body bytes in flight for a memory
// limit (math.MaxInt64: none), and where it came from.
func bytesInFlightFor(memoryLimit int64) (int64, string) {
	if memoryLimit <= 0 || memoryLimit == math.MaxInt64 {
		return apiconv.DefaultMaxBytesInFlight, "the default, without a memory limit"
	}
	return int64(float64(memoryLimit) * ingestMemoryShare / bodyByteCost), "the memory limit"
}

// mustSize is the size s, which validate checked, or 0 for "".
func mustSize(s string) int64 {
	n, _ := bytesize.Parse(s)
	return n
}

// storeLimits are the limits of what one account may have.
func (f limitFlags) storeLimits() store.Limits {
	return store.Limits{
		Destinations:           f.destinations,
		Subscriptions:          f.subscriptions,
		Routes:                 f.routes,
		SourcesPerSubscription: f.sourcesPerSubscription,
		RunningReplays:         f.runningReplays,
		APIKeys:                f.apiKeys,
		AgentIngresses:         f.agentIngresses,
		AppSessions:            f.appSessions,
		BotUsers:               f.botUsers,
		Credentials:            f.credentials,
		HTTPSEdges:             f.httpsEdges,
		HTTPSEdgeRoutes:        f.httpsEdgeRoutes,
		ReservedDomains:        f.reservedDomains,
		TunnelSessions:         f.tunnelSessions,
		Endpoints:              f.endpoints,
		TunnelGroupBackends:    f.tunnelGroupBackends,
	}
}
