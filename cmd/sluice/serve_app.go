package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/acme"
	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/dnsserver"
	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/internal/sessionservice"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// setupTimeout bounds the making of the streams, buckets and first API key
// at start.
const setupTimeout = 30 * time.Second

// app is a serve process: what its roles need, wired by newApp from
// serve's flags, served by Run until its context ends, and released by
// Close.
type app struct {
	flags  serveFlags
	stderr io.Writer
	log    *slog.Logger
	roles  serveRoles
	tls    *tls.Config // nil: --http serves plain HTTP

	lock          *dataDirLock // nil with --nats-url and without --dev
	listeners     *serveListeners
	edgeListeners *edgeListeners // nil without the edge role
	edgeRole      *edgeRole      // nil without the edge role
	dev           *devAWS        // nil without --dev

	nc           *nats.Conn               // carries the events: ingest's publishes, delivery's pulls
	storeNC      *nats.Conn               // carries the store's reads and writes (see natsConns)
	js           jetstream.JetStream      // on nc
	closeNATS    func(context.Context)    // drains nc and storeNC, then stops the embedded server
	storageWatch *natsserver.StorageWatch // nil with --nats-url
	stream       jetstream.Stream         // the events
	dlq          jetstream.Stream         // the dead letters
	statusKV     jetstream.KeyValue       // the destinations' delivery status
	filterEnv    *filters.Env             // one per process: the API checks filters with it, delivery runs them
	store        *store.Store             // accounts, keys, destinations, subscriptions
	keys         *store.KeyCache          // the API keys requests have shown, as long as it watches them
	producer     *producer.Producer       // publishes ingested events and audit events
	registry     *prometheus.Registry     // served on --metrics-http
	newSink      pipeline.SinkFactory     // AWS, or the emulator of --dev
	redriver     *pipeline.Redriver       // the API's dead-letter routes
	delivery     *delivery                // nil without the worker role
	audit        *api.AuditRelay          // nil without the api role
	sessions     *sessionservice.Service  // records the edge's application sessions; nil without the api role
	policy       *policyFront             // nil without --traffic-policy
	dns          *dnsserver.Server        // nil without --dns-listen
	acme         *acme.Manager            // nil without --acme-directory, or the api role
	httpSrv      *http.Server             // --http
	metricsSrv   *http.Server             // --metrics-http, served only when given

	// shutdownDeadline is set when Run starts shutting down; Close drains
	// NATS until it.
	shutdownDeadline time.Time
}

// newApp wires a serve process from f, in the order that makes a mistake
// stop serve with nothing done: the data dir is locked first, every
// address bound and the --dev emulator's state loaded before NATS starts
// and the first account is made. It reads the bootstrap token of
// bootstrapKeyEnv and drops it from the environment. When it fails, it
// releases what it took.
func newApp(ctx context.Context, f serveFlags, stderr io.Writer) (_ *app, err error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	a := &app{flags: f, stderr: stderr}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	bootstrapToken, err := a.configure()
	if err != nil {
		return nil, err
	}
	if err := a.listen(); err != nil {
		return nil, err
	}
	if err := a.connectNATS(); err != nil {
		return nil, err
	}
	if err := a.setUp(ctx, bootstrapToken); err != nil {
		return nil, err
	}
	if err := a.wireRoles(); err != nil {
		return nil, err
	}
	if err := a.newServers(); err != nil {
		return nil, err
	}
	return a, nil
}

// configure locks the data dir, one serve at a time, before anything
// opens it: the embedded NATS server's store, and the emulator's with
// --dev. It then loads the TLS certificate, takes the bootstrap token out
// of the environment, so that nothing sluice starts or reports later can
// see it, makes the logger, loads the traffic policy (a mistake in it stops
// serve here) and applies the memory limit.
func (a *app) configure() (bootstrapToken string, err error) {
	if a.flags.natsURL == "" || a.flags.dev {
		if a.lock, err = lockDataDir(a.flags.dataDir); err != nil {
			return "", err
		}
	}
	if a.roles, err = parseRoles(a.flags.roles); err != nil {
		return "", err
	}
	if a.tls, err = a.flags.httpTLS(); err != nil {
		return "", err
	}
	bootstrapToken = os.Getenv(bootstrapKeyEnv)
	if err := os.Unsetenv(bootstrapKeyEnv); err != nil {
		return "", fmt.Errorf("removing %s from the environment: %w", bootstrapKeyEnv, err)
	}
	if a.log, err = a.flags.log.logger(a.stderr); err != nil {
		return "", err
	}
	if a.flags.trafficPolicy != "" {
		if a.policy, err = newPolicyFront(a.flags.trafficPolicy, a.log.With("component", "traffic_policy"), apiconv.KeyID); err != nil {
			return "", err
		}
	}
	return bootstrapToken, applyMemoryLimit(a.flags.memoryLimit, a.log)
}

// listen binds every address, and loads the state of the --dev emulator,
// so that an address in use or a state file it cannot read stops serve
// before NATS starts.
func (a *app) listen() error {
	var err error
	if a.listeners, err = a.flags.listen(); err != nil {
		return err
	}
	if a.roles.edge {
		if a.edgeListeners, err = a.flags.edge.listen(); err != nil {
			return err
		}
	}
	if a.flags.dev {
		maxStoredBytes, err := a.flags.devAWSMaxStoredBytes()
		if err != nil {
			return err
		}
		if a.dev, err = startDevAWS(a.listeners.devAWS, a.flags.dataDir, maxStoredBytes, a.log); err != nil {
			return err
		}
	}
	return nil
}

// connectNATS starts the embedded NATS server, or connects to --nats-url.
// The embedded server's storage is watched, and brought back when a full
// disk has space again; an external server's refusals are reported as
// they come.
func (a *app) connectNATS() error {
	conns, err := a.flags.connectNATS(a.log)
	if err != nil {
		return err
	}
	a.nc, a.storeNC, a.closeNATS = conns.events, conns.store, conns.close
	if conns.embedded != nil {
		a.storageWatch = conns.embedded.NewStorageWatch(natsserver.StorageWatchConfig{Logger: a.log.With("component", "storage")})
	}
	if a.js, err = jetstream.New(a.nc); err != nil {
		return fmt.Errorf("creating JetStream context: %w", err)
	}
	return nil
}

// setUp makes what every role reads and writes, within setupTimeout: the
// event and dead-letter streams, the filter environment, the store and
// its first API key (bootstrapToken's, or a new one), and the status
// bucket.
func (a *app) setUp(ctx context.Context, bootstrapToken string) error {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	var err error
	if a.stream, err = pipeline.EnsureStream(ctx, a.js, pipeline.StreamConfig{Retention: a.flags.retention, Replicas: a.flags.replicas}); err != nil {
		return err
	}
	if a.dlq, err = pipeline.EnsureDLQStream(ctx, a.js, 0, a.flags.replicas); err != nil {
		return err
	}
	if a.filterEnv, err = filters.NewEnv(schemas.Default()); err != nil {
		return err
	}
	storeJS, err := jetstream.New(a.storeNC)
	if err != nil {
		return fmt.Errorf("creating JetStream context: %w", err)
	}
	if a.store, err = store.Open(ctx, storeJS, store.Config{Replicas: a.flags.replicas, Limits: a.flags.limits.storeLimits(), ServiceDomains: a.flags.domains.serviceDomains, ServiceNames: a.flags.ingress.config(nil).NSTargets}, store.WithFilters(a.filterEnv)); err != nil {
		return err
	}
	switch skipped, err := a.store.TrackDomainTree(ctx); {
	case err != nil:
		a.log.Warn("counting reserved domains and agent ingresses made before the domain tree; the next start tries again", "error", err)
	case len(skipped) > 0:
		a.log.Warn("reserved domains or agent ingresses made before the domain tree overlap another account's names, and stay uncounted", "domains", skipped)
	}
	switch names, err := a.store.UnownableNames(ctx); {
	case err != nil:
		a.log.Warn("looking for names no account may hold any longer; the next start looks again", "error", err)
	case len(names) > 0:
		a.log.Warn("names made before sluice refused IP addresses, public suffixes and its own target names are still held: delete them", "names", names)
	}
	a.keys = a.store.NewKeyCache()
	if err := bootstrap(ctx, a.store, bootstrapToken, a.stderr, a.log); err != nil {
		return err
	}
	a.statusKV, err = pipeline.EnsureStatusBucket(ctx, a.js, 0, a.flags.replicas)
	return err
}

// wireRoles makes the producer, the metrics registry, the sinks and the
// redriver every process has, delivery for the worker role, the audit
// relay for the api role (every process serving the management API
// publishes the audit events of changes whose own process could not, see
// api.AuditRelay), and the DNS server of --dns-listen, whatever the roles.
func (a *app) wireRoles() error {
	var err error
	if a.producer, err = producer.New(a.nc, producer.Config{}); err != nil {
		return err
	}
	a.registry = prometheus.NewRegistry()
	a.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		pipeline.StreamCollector(a.js, 0),
	)
	if a.policy != nil {
		a.registry.MustRegister(a.policy.metrics.collectors()...)
	}
	a.newSink = destinations.New
	if a.dev != nil {
		a.newSink = a.dev.sinkFactory().New
	}
	// The API redrives dead letters through the sinks delivery uses.
	a.redriver = pipeline.NewRedriver(pipeline.NewDeadLetters(a.js, a.dlq), a.store, a.filterEnv, a.newSink, a.log)
	if a.roles.worker {
		if a.delivery, err = a.newDelivery(); err != nil {
			return err
		}
	}
	if a.roles.edge {
		if a.edgeRole, err = a.newEdgeRole(); err != nil {
			return err
		}
	}
	if a.listeners.dnsTCP != nil {
		serviceDomains := a.flags.domains.serviceDomains
		if len(serviceDomains) == 0 { // as the API takes them
			serviceDomains = api.DefaultServiceDomains
		}
		ingress := a.flags.ingress.config(serviceDomains)
		if a.dns, err = dnsserver.New(a.store, a.listeners.dnsUDP, a.listeners.dnsTCP, dnsserver.Config{
			NSTargets:      ingress.NSTargets,
			Regions:        ingress.Regions,
			ServiceDomains: ingress.ServiceDomains,
			EdgeAddrs:      a.flags.dns.addrs(a.flags.dev),
			Logger:         a.log.With("component", "dns"),
		}); err != nil {
			return err
		}
	}
	if a.roles.api {
		a.sessions = sessionservice.New(a.storeNC, a.store, sessionservice.Config{Logger: a.log.With("component", "app_sessions")})
		a.audit, err = api.NewAuditRelay(a.store.Outbox(), a.producer, api.AuditRelayConfig{Metrics: a.registry}, a.log.With("component", "audit_relay"))
	}
	return err
}

// newServers makes the server of --http, with the API of the process's
// roles, and the server of --metrics-http.
func (a *app) newServers() error {
	apiConfig := a.flags.limits.apiConfig(a.log)
	apiConfig.BaseURL = a.flags.apiBaseURL(a.listeners.http.Addr(), a.tls != nil, a.log)
	apiConfig.ServiceDomains = a.flags.domains.serviceDomains
	apiConfig.Ingress = a.flags.ingress.config(a.flags.domains.serviceDomains)
	if a.policy != nil {
		apiConfig.Front = a.policy.wrap
	}
	srv, err := a.httpHandler(apiConfig)
	if err != nil {
		return err
	}
	if err := a.newACME(srv, apiConfig.ServiceDomains); err != nil {
		return err
	}
	var handler http.Handler = srv
	if a.dev != nil {
		handler = a.dev.markAnswers(handler)
	}
	a.httpSrv = &http.Server{
		Handler:           handler,
		TLSConfig:         a.tls,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       httpReadTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	a.metricsSrv = &http.Server{
		Handler:           metricsHandler(a.registry, a.readiness()),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       httpReadTimeout,
		ErrorLog:          a.httpSrv.ErrorLog,
	}
	return nil
}

// Run serves until ctx ends or a server or loop fails, then shuts the
// servers down within --shutdown-timeout, letting requests in flight
// finish, and waits for every loop to stop.
func (a *app) Run(ctx context.Context) error {
	a.announce()
	g, gctx := errgroup.WithContext(ctx)
	for _, run := range a.loops() {
		g.Go(func() error { return run(gctx) })
	}
	g.Go(a.serveHTTP)
	if a.listeners.metrics != nil {
		g.Go(a.serveMetrics)
	}
	g.Go(func() error {
		<-gctx.Done()
		return a.shutdown()
	})
	err := g.Wait()
	a.log.Info("stopped")
	return err
}

// announce says where the process serves: on stderr with --dev, where
// the events go and how to read them, and in the log.
func (a *app) announce() {
	if a.dev != nil {
		a.dev.announce(a.stderr, a.log)
	}
	serving := []any{"http", listenURL(a.listeners.http.Addr(), a.tls != nil), "roles", a.roles.String(), "nats", natsDescription(a.flags)}
	if a.listeners.metrics != nil {
		serving = append(serving, "metrics", "http://"+a.listeners.metrics.Addr().String())
	}
	if a.dns != nil {
		serving = append(serving, "dns", a.listeners.dnsTCP.Addr().String())
	}
	a.log.Info("sluice is serving", serving...)
	if a.edgeRole != nil {
		a.edgeRole.announce(a.log)
	}
}

// loops are what runs beside the servers, each until its ctx ends: the
// --dev emulator, the storage watch, the audit relay, the application
// session service, delivery, the traffic policy's reloads, the edge and
// the DNS server.
func (a *app) loops() []func(context.Context) error {
	var loops []func(context.Context) error
	if a.dev != nil {
		loops = append(loops, a.dev.serve)
	}
	if a.storageWatch != nil {
		loops = append(loops, a.storageWatch.Run)
	}
	loops = append(loops, func(ctx context.Context) error {
		a.keys.Run(ctx, a.log.With("component", "key_cache"))
		return nil
	})
	if a.audit != nil {
		loops = append(loops, a.audit.Run)
	}
	if a.sessions != nil {
		loops = append(loops, a.sessions.Run)
	}
	if a.delivery != nil {
		loops = append(loops, a.delivery.run, a.delivery.status.Run)
	}
	if a.policy != nil {
		loops = append(loops, a.policy.Run)
	}
	if a.edgeRole != nil {
		loops = append(loops, a.edgeRole.run)
	}
	if a.dns != nil {
		loops = append(loops, a.dns.Run)
	}
	if a.acme != nil {
		loops = append(loops, a.acme.Run)
	}
	return loops
}

// serveHTTP serves --http, over TLS with --tls-cert, until shutdown.
func (a *app) serveHTTP() error {
	var err error
	if a.tls != nil {
		// The certificate is in httpSrv.TLSConfig already.
		err = a.httpSrv.ServeTLS(a.listeners.http, "", "")
	} else {
		err = a.httpSrv.Serve(a.listeners.http)
	}
	if !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving HTTP: %w", err)
	}
	return nil
}

// serveMetrics serves --metrics-http until shutdown.
func (a *app) serveMetrics() error {
	if err := a.metricsSrv.Serve(a.listeners.metrics); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving metrics: %w", err)
	}
	return nil
}

// shutdown lets the requests in flight finish until --shutdown-timeout
// from now, the deadline Close then drains NATS by. Metrics stay up while
// requests finish: they say how that goes.
func (a *app) shutdown() error {
	a.shutdownDeadline = time.Now().Add(a.flags.shutdownTimeout)
	a.log.Info("shutting down", "deadline", a.flags.shutdownTimeout)
	ctx, cancel := context.WithDeadline(context.Background(), a.shutdownDeadline)
	defer cancel()
	err := shutdownHTTP(ctx, a.httpSrv, a.log)
	return errors.Join(err, shutdownHTTP(ctx, a.metricsSrv, a.log))
}

// Close releases what newApp took, last taken first: it drains the NATS
// connection until the shutdown deadline (--shutdown-timeout from now if
// Run did not shut down) and stops the embedded server, closes the
// listeners and unlocks the data dir. Call it once Run has returned, or
// instead of Run.
func (a *app) Close() {
	if a.closeNATS != nil {
		deadline := a.shutdownDeadline
		if deadline.IsZero() {
			deadline = time.Now().Add(a.flags.shutdownTimeout)
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		a.closeNATS(ctx)
		cancel()
	}
	if a.listeners != nil {
		a.listeners.close()
	}
	if a.edgeListeners != nil {
		a.edgeListeners.close()
	}
	if a.lock != nil {
		a.lock.release()
	}
}

// storage is the watch of JetStream's storage, or nil with --nats-url: an
// external server's refusals are reported as they come.
func (a *app) storage() apiconv.Storage {
	if a.storageWatch == nil {
		return nil
	}
	return a.storageWatch
}

// delivery is what the worker role runs: the route reconciler, the
// deliverer it applies the routes to, and the recorder of the deliverer's
// status per destination.
type delivery struct {
	reconciler *pipeline.Reconciler
	deliverer  *pipeline.Deliverer
	status     *pipeline.StatusRecorder
}

// newDelivery returns the delivery of a process with the worker role,
// writing with newSink and recording its status in statusKV, with the
// delivery metrics and the routes' pending counts on the registry.
func (a *app) newDelivery() (*delivery, error) {
	metrics, err := pipeline.NewMetrics(a.registry)
	if err != nil {
		return nil, err
	}
	status := pipeline.NewStatusRecorder(a.statusKV, pipeline.StatusConfig{FailingAfter: a.flags.failingAfter, Metrics: metrics}, a.log)
	deliverer := pipeline.NewDeliverer(a.js, a.stream, a.filterEnv, a.newSink, pipeline.DeliveryConfig{AckWait: a.flags.ackWait, Linger: a.flags.linger, RepullAfter: a.flags.repullAfter, Metrics: metrics, Status: status, Replays: a.store.Replays()}, a.log)
	if err := a.registry.Register(deliverer.PendingCollector(0)); err != nil {
		return nil, fmt.Errorf("registering route metrics: %w", err)
	}
	reconciler := pipeline.NewReconciler(a.stream, a.store, pipeline.ReconcilerConfig{AckWait: a.flags.ackWait}, a.log, deliverer.Apply)
	return &delivery{reconciler: reconciler, deliverer: deliverer, status: status}, nil
}

// run reconciles the routes until ctx ends. Delivery stops with it: each
// worker hands the events it holds back to JetStream, for this process's
// next start or another.
func (d *delivery) run(ctx context.Context) error {
	defer d.deliverer.Stop()
	ctx, cancel := context.WithCancel(ctx)
	governed := make(chan struct{})
	go func() {
		defer close(governed)
		d.deliverer.Govern(ctx)
	}()
	defer func() {
		cancel()
		<-governed
	}()
	return d.reconciler.Run(ctx)
}
