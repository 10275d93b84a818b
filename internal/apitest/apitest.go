// Package apitest starts sluice's HTTP API for tests: the real store,
// producer and stream on a real in-process NATS server, with one account
// and its API key. It is for tests only.
package apitest

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
)

// Stack is a running API and what it stands on.
type Stack struct {
	// Logs holds every line the API logged, at every level, as JSON.
	Logs      *Logs
	URL       string // base URL of the API
	Token     string // an API key of AccountID
	KeyID     string // the id of that key
	AccountID string
	JS        jetstream.JetStream
	Stream    jetstream.Stream // SLUICE_EVENTS
	Store     *store.Store
	Metrics   *prometheus.Registry // where the API registered its metrics
	// API is the API's server, for what it gives besides its routes.
	API  *api.Server
	nats *natsserver.Server
}

// Option changes the stack Start builds.
type Option func(*options)

type options struct {
	publisher func(api.Publisher) api.Publisher
	config    api.Config
	store     store.Config
	deps      func(*api.Deps, jetstream.JetStream)
}

// WithDeps has edit change the API's dependencies before it starts, with
// the stack's JetStream, to add those Start does not set (delivery status,
// test writes).
func WithDeps(edit func(deps *api.Deps, js jetstream.JetStream)) Option {
	return func(o *options) { o.deps = edit }
}

// WithConfig starts the API with cfg. Without an AccountWriteRate, the
// account's changes are not bounded (the API's default is).
func WithConfig(cfg api.Config) Option {
	return func(o *options) { o.config = cfg }
}

// WithStoreConfig opens the store with cfg, such as with lower limits.
func WithStoreConfig(cfg store.Config) Option {
	return func(o *options) { o.store = cfg }
}

// WithPublisher has the API publish through wrap(p) instead of the real
// producer p, to inject failures.
func WithPublisher(wrap func(p api.Publisher) api.Publisher) Option {
	return func(o *options) { o.publisher = wrap }
}

// Start starts the stack; t.Cleanup stops it.
func Start(t testing.TB, opts ...Option) *Stack {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := startAPI(t, natstest.Start(t), o)
	ctx := context.Background()
	acct, err := s.Store.CreateAccount(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	key, err := s.Store.CreateAPIKey(ctx, acct.ID, store.APIKeyInput{Description: "test"}, "")
	if err != nil {
		t.Fatal(err)
	}
	s.AccountID, s.Token, s.KeyID = acct.ID, key.Token, key.ID
	return s
}

// Another starts a second API on the NATS server of s, as a second sluice
// process would run, with its own connection, store, logs and metrics, and
// the options given; t.Cleanup stops it. Its account and key are those of s.
func (s *Stack) Another(t testing.TB, opts ...Option) *Stack {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	another := startAPI(t, s.nats, o)
	another.AccountID, another.Token, another.KeyID = s.AccountID, s.Token, s.KeyID
	return another
}

// startAPI starts an API, with the stream and store it needs, on srv.
func startAPI(t testing.TB, srv *natsserver.Server, o options) *Stack {
	t.Helper()
	ctx := context.Background()
	nc, js := natstest.Connect(t, srv)
	stream, err := pipeline.EnsureStream(ctx, js, pipeline.StreamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if o.store.ServiceDomains == nil {
		o.store.ServiceDomains = api.DefaultServiceDomains // as sluice serve gives both
	}
	st, err := store.Open(ctx, js, o.store)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := producer.New(nc, producer.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var pub api.Publisher = prod
	if o.publisher != nil {
		pub = o.publisher(prod)
	}
	reg := prometheus.NewRegistry()
	logs := &Logs{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	deps := api.Deps{Keys: st, Publisher: pub, Destinations: st, Subscriptions: st, AgentIngresses: st, AppSessions: st, APIKeys: st, BotUsers: st, Credentials: st, ReservedDomains: st, Tunnels: st, Outbox: st.Outbox(), Logger: log, Metrics: reg}
	deps.HTTPSEdges = st
	deps.TunnelGroupBackends = st
	if o.deps != nil {
		o.deps(&deps, js)
	}
	// The API's base URL is the server's, unless the options set another.
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	cfg := o.config
	if cfg.AccountWriteRate == 0 {
		// Tests make changes as fast as they can, and many at once; the
		// rate of changes is tested by giving one.
		cfg.AccountWriteRate = -1
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://" + hs.Listener.Addr().String()
	}
	handler, err := api.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ingest.New(ingest.Config{}, ingest.Deps{Door: handler.FrontDoor(), Publisher: deps.Publisher, Storage: deps.Storage, Catalogue: deps.Catalogue, Logger: deps.Logger, Metrics: deps.Metrics})
	if err != nil {
		t.Fatal(err)
	}
	handler.Handle(ingest.Pattern, in)
	hs.Config.Handler = handler
	hs.Start()
	return &Stack{Logs: logs, URL: hs.URL, JS: js, Stream: stream, Store: st, Metrics: reg, API: handler, nats: srv}
}

// Logs is a buffer of log lines safe for concurrent use.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns every line written so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
