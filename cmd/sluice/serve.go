package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks/destinations"
)

// bootstrapKeyEnv names the environment variable whose token becomes the
// first API key. It is not a flag, so it never shows in a process list, and
// serve removes it from its environment once read.
const bootstrapKeyEnv = "SLUICE_BOOTSTRAP_API_KEY"

// httpReadTimeout bounds the reading of a whole request, body included, so
// that a client trickling its body cannot hold a connection for long. An
// ingest body is bound by --min-body-rate instead, which lets a large body
// on a slow link take longer.
const httpReadTimeout = 60 * time.Second

type serveFlags struct {
	dataDir         string
	dataKeyFile     string
	natsListen      string
	natsURL         string
	natsCreds       string
	natsTLSCA       string
	natsTLSCert     string
	natsTLSKey      string
	retention       time.Duration
	replicas        int
	httpAddr        string
	metricsAddr     string
	publicURL       string
	shutdownTimeout time.Duration
	ackWait         time.Duration
	linger          time.Duration
	failingAfter    time.Duration
	dev             bool
	memoryLimit     string
	devAWSListen    string
	roles           []string
	tlsCert         string
	tlsKey          string
	log             logFlags
	limits          limitFlags // the front door of ingest, what an account may have
}

func newServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run sluice: the HTTP API, delivery and, unless --nats-url is given, an embedded NATS JetStream server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), f, cmd.ErrOrStderr())
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// register defines serve's flags on fl, with their defaults, filling f.
func (f *serveFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.dataDir, "data-dir", "./sluice-data", "where the embedded NATS server stores streams and state; one serve at a time uses it (it holds sluice.lock in it)")
	fl.StringVar(&f.dataKeyFile, "data-key-file", "", "file holding the key (at least 32 bytes, such as the output of openssl rand -hex 32; mode 600) the embedded NATS server encrypts everything it stores in --data-dir with, AWS secret access keys included (not the --dev emulator's DIR/emulator/state.json, which holds the records delivered to it in clear); the same key at every start after (default: not encrypted)")
	fl.StringVar(&f.natsListen, "nats-listen", "", "expose the embedded NATS server's client port at HOST:PORT, a loopback address: it has no authentication (default: not exposed)")
	fl.StringVar(&f.natsURL, "nats-url", "", "use this external NATS server or cluster instead of the embedded one (comma-separated URLs)")
	fl.StringVar(&f.natsCreds, "nats-creds", "", "credentials file (JWT and NKey seed) for --nats-url")
	fl.StringVar(&f.natsTLSCA, "nats-tls-ca", "", "CA certificate file to verify --nats-url's servers")
	fl.StringVar(&f.natsTLSCert, "nats-tls-cert", "", "client certificate file for --nats-url (with --nats-tls-key)")
	fl.StringVar(&f.natsTLSKey, "nats-tls-key", "", "client key file for --nats-url (with --nats-tls-cert)")
	fl.DurationVar(&f.retention, "retention", 72*time.Hour, "how long the event stream keeps events (its MaxAge)")
	fl.IntVar(&f.replicas, "replicas", 1, "replicas of the stream and key-value buckets (3 on a NATS cluster)")
	fl.StringVar(&f.httpAddr, "http", "127.0.0.1:8080", "HOST:PORT of the HTTP API")
	fl.StringVar(&f.metricsAddr, "metrics-http", "127.0.0.1:9464", "HOST:PORT of the listener of /metrics (with /healthz and /readyz), apart from --http as it names every account's ids: keep it off the public network; empty for none")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "certificate file (PEM, chain after it) to serve --http over HTTPS, with --tls-key")
	fl.StringVar(&f.tlsKey, "tls-key", "", "private key file (PEM) of --tls-cert")
	fl.StringSliceVar(&f.roles, "roles", allRoles(), "the roles this process runs, comma-separated: api (management API), ingest (POST /events), worker (route reconciler and delivery); every process serves /healthz and /readyz, and /metrics on --metrics-http")
	fl.StringVar(&f.publicURL, "public-url", "", "scheme and host clients reach the API at, such as https://sluice.example.com, for the URLs in responses and audit events (default: http:// or https:// and the address of --http; never a request's Host)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a shutdown may take to finish requests in flight")
	fl.DurationVar(&f.ackWait, "ack-wait", pipeline.DefaultAckWait, "how long an event handed to a sluice process that then died waits before another process gets it")
	fl.DurationVar(&f.linger, "linger", pipeline.DefaultLinger, "how long a batch that is not full waits for more events before it is sent")
	fl.DurationVar(&f.failingAfter, "failing-after", pipeline.DefaultFailingAfter, "how long a destination's calls fail as a whole before its status is failing (logged, and the gauge sluice_destination_failing) rather than retrying")
	fl.StringVar(&f.memoryLimit, "memory-limit", "", "soft memory limit of the process, such as 512MiB (default: GOMEMLIMIT, or else 90% of the container's memory limit, or none); 0 for none")
	fl.BoolVar(&f.dev, "dev", false, "run sluice's AWS emulator inside serve and deliver every destination to it: any ARN works, no AWS account needed")
	fl.StringVar(&f.devAWSListen, "dev-aws-listen", "127.0.0.1:4566", "HOST:PORT of the AWS emulator of --dev, a loopback address")
	f.log.register(fl)
	f.limits.register(fl)
}

func runServe(ctx context.Context, f serveFlags, stderr io.Writer) error {
	if err := f.validate(); err != nil {
		return err
	}
	// One serve at a time per data dir, checked before anything opens it:
	// the embedded NATS server's store, and the emulator's with --dev.
	if f.natsURL == "" || f.dev {
		lock, err := lockDataDir(f.dataDir)
		if err != nil {
			return err
		}
		defer lock.release()
	}
	roles, err := parseRoles(f.roles)
	if err != nil {
		return err
	}
	tlsConfig, err := f.httpTLS()
	if err != nil {
		return err
	}
	// Read the bootstrap token once and drop it from the environment, so
	// that nothing sluice starts or reports later can see it.
	bootstrapToken := os.Getenv(bootstrapKeyEnv)
	if err := os.Unsetenv(bootstrapKeyEnv); err != nil {
		return fmt.Errorf("removing %s from the environment: %w", bootstrapKeyEnv, err)
	}
	log, err := f.log.logger(stderr)
	if err != nil {
		return err
	}
	if err := applyMemoryLimit(f.memoryLimit, log); err != nil {
		return err
	}
	// Every address is bound before NATS starts and the first account is
	// made: an address in use stops serve with nothing done.
	listeners, err := f.listen()
	if err != nil {
		return err
	}
	defer listeners.close()
	ln, metricsLn := listeners.http, listeners.metrics
	// The emulator of --dev loads its state before anything else is made,
	// so that a state file it cannot read stops serve with nothing done.
	var dev *devAWS
	if f.dev {
		if dev, err = startDevAWS(listeners.devAWS, f.dataDir, log); err != nil {
			return err
		}
	}
	nc, embedded, closeNATS, err := f.connectNATS(log)
	if err != nil {
		return err
	}
	// The embedded server's storage is watched, and brought back when a
	// full disk has space again; an external server's refusals are
	// reported as they come.
	var (
		storageWatch *natsserver.StorageWatch
		storage      api.Storage
	)
	if embedded != nil {
		storageWatch = embedded.NewStorageWatch(natsserver.StorageWatchConfig{Logger: log.With("component", "storage")})
		storage = storageWatch
	}
	// shutdownDeadline is set when the shutdown starts; closing NATS may
	// take what is left of it.
	var shutdownDeadline time.Time
	defer func() {
		if shutdownDeadline.IsZero() {
			shutdownDeadline = time.Now().Add(f.shutdownTimeout)
		}
		closeCtx, cancel := context.WithDeadline(context.Background(), shutdownDeadline)
		defer cancel()
		closeNATS(closeCtx)
	}()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("creating JetStream context: %w", err)
	}

	setupCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stream, err := pipeline.EnsureStream(setupCtx, js, pipeline.StreamConfig{Retention: f.retention, Replicas: f.replicas})
	if err != nil {
		return err
	}
	dlq, err := pipeline.EnsureDLQStream(setupCtx, js, 0, f.replicas)
	if err != nil {
		return err
	}
	// One filter environment per process: the API checks filters with it,
	// and delivery runs the programs it compiles.
	filterEnv, err := filters.NewEnv(schemas.Default())
	if err != nil {
		return err
	}
	st, err := store.Open(setupCtx, js, store.Config{Replicas: f.replicas, Limits: f.limits.storeLimits()}, store.WithFilters(filterEnv))
	if err != nil {
		return err
	}
	if err := bootstrap(setupCtx, st, bootstrapToken, stderr, log); err != nil {
		return err
	}
	statusKV, err := pipeline.EnsureStatusBucket(setupCtx, js, 0, f.replicas)
	if err != nil {
		return err
	}

	prod, err := producer.New(nc, producer.Config{})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		pipeline.StreamCollector(js, 0),
	)
	newSink := destinations.New
	if dev != nil {
		newSink = dev.sinkFactory().New
	}
	// The API redrives dead letters through the sinks delivery uses.
	deadLetters := pipeline.NewRedriver(pipeline.NewDeadLetters(js, dlq), st, filterEnv, newSink, log)
	var (
		deliverer   *pipeline.Deliverer
		reconciler  *pipeline.Reconciler
		status      *pipeline.StatusRecorder
		routesReady func() bool // nil without the worker role
	)
	if roles.worker {
		if reconciler, deliverer, status, err = f.newDelivery(js, stream, filterEnv, st, newSink, statusKV, reg, log); err != nil {
			return err
		}
		routesReady = reconciler.Ready
	}
	checks := destinationChecks{status: pipeline.NewStatusReader(js, statusKV, f.failingAfter), trial: pipeline.NewTrial(newSink, 0)}
	// Every process serving the management API publishes the audit events
	// of changes whose own process could not (see api.AuditRelay).
	var auditRelay *api.AuditRelay
	if roles.api {
		if auditRelay, err = api.NewAuditRelay(st, prod, api.AuditRelayConfig{Metrics: reg}, log.With("component", "audit_relay")); err != nil {
			return err
		}
	}
	apiConfig := f.limits.apiConfig(log)
	apiConfig.BaseURL = f.apiBaseURL(ln.Addr(), tlsConfig != nil, log)
	handler, err := httpHandler(apiConfig, roles, st, prod, nc, js, reg, routesReady, storage, checks, deadLetters, pipeline.NewReplayer(stream, st), log)
	if err != nil {
		return err
	}

	if dev != nil {
		handler = dev.markAnswers(handler)
	}
	httpSrv := &http.Server{
		Handler:           handler,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       httpReadTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if dev != nil {
		dev.announce(stderr, log)
	}
	metricsSrv := &http.Server{
		Handler:           metricsHandler(reg, readiness(nc, js, st, routesReady, storage)),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       httpReadTimeout,
		ErrorLog:          httpSrv.ErrorLog,
	}
	serving := []any{"http", listenURL(ln.Addr(), tlsConfig != nil), "roles", roles.String(), "nats", natsDescription(f)}
	if metricsLn != nil {
		serving = append(serving, "metrics", "http://"+metricsLn.Addr().String())
	}
	log.Info("sluice is serving", serving...)

	g, gctx := errgroup.WithContext(ctx)
	if dev != nil {
		g.Go(func() error { return dev.serve(gctx) })
	}
	if storageWatch != nil {
		g.Go(func() error { return storageWatch.Run(gctx) })
	}
	if auditRelay != nil {
		g.Go(func() error { return auditRelay.Run(gctx) })
	}
	if roles.worker {
		g.Go(func() error {
			// Delivery stops with the server: each worker hands the events it
			// holds back to JetStream, for this process's next start or another.
			defer deliverer.Stop()
			return reconciler.Run(gctx)
		})
		g.Go(func() error { return status.Run(gctx) })
	}
	g.Go(func() error {
		var err error
		if tlsConfig != nil {
			// The certificate is in httpSrv.TLSConfig already.
			err = httpSrv.ServeTLS(ln, "", "")
		} else {
			err = httpSrv.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serving HTTP: %w", err)
		}
		return nil
	})
	if metricsLn != nil {
		g.Go(func() error {
			if err := metricsSrv.Serve(metricsLn); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serving metrics: %w", err)
			}
			return nil
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		shutdownDeadline = time.Now().Add(f.shutdownTimeout)
		log.Info("shutting down", "deadline", f.shutdownTimeout)
		shutdownCtx, cancel := context.WithDeadline(context.Background(), shutdownDeadline)
		defer cancel()
		// Metrics stay up while requests finish: they say how that goes.
		err := shutdownHTTP(shutdownCtx, httpSrv, log)
		return errors.Join(err, shutdownHTTP(shutdownCtx, metricsSrv, log))
	})
	err = g.Wait()
	log.Info("stopped")
	return err
}

// newDelivery returns the route reconciler of a process with the worker
// role, the deliverer it applies the routes to, writing with newSink, and
// the recorder of the deliverer's status per destination in statusKV, with
// the delivery metrics and the routes' pending counts on reg.
func (f serveFlags) newDelivery(js jetstream.JetStream, stream jetstream.Stream, env *filters.Env, st *store.Store, newSink pipeline.SinkFactory, statusKV jetstream.KeyValue, reg prometheus.Registerer, log *slog.Logger) (*pipeline.Reconciler, *pipeline.Deliverer, *pipeline.StatusRecorder, error) {
	metrics, err := pipeline.NewMetrics(reg)
	if err != nil {
		return nil, nil, nil, err
	}
	status := pipeline.NewStatusRecorder(statusKV, pipeline.StatusConfig{FailingAfter: f.failingAfter, Metrics: metrics}, log)
	deliverer := pipeline.NewDeliverer(js, stream, env, newSink, pipeline.DeliveryConfig{AckWait: f.ackWait, Linger: f.linger, Metrics: metrics, Status: status, Replays: st}, log)
	if err := reg.Register(deliverer.PendingCollector(0)); err != nil {
		return nil, nil, nil, fmt.Errorf("registering route metrics: %w", err)
	}
	reconciler := pipeline.NewReconciler(stream, st, pipeline.ReconcilerConfig{AckWait: f.ackWait}, log, deliverer.Apply)
	return reconciler, deliverer, status, nil
}

// shutdownHTTP lets the requests in flight finish until ctx ends, then
// closes their connections, which ends their contexts: handlers stop
// waiting on NATS before it goes away.
func shutdownHTTP(ctx context.Context, srv *http.Server, log *slog.Logger) error {
	err := srv.Shutdown(ctx)
	if err == nil {
		return nil
	}
	log.Warn("requests were still in flight at the shutdown deadline; closing their connections", "error", err)
	if closeErr := srv.Close(); closeErr != nil {
		err = errors.Join(err, closeErr)
	}
	return fmt.Errorf("shutting down HTTP: %w", err)
}

// connectNATS starts the embedded server, or connects to --nats-url and
// checks that the server takes messages as large as sluice's. It returns
// the embedded server, nil with --nats-url. The returned func drains the
// connection, waiting at most until its ctx ends, and then stops the
// embedded server.
func (f serveFlags) connectNATS(log *slog.Logger) (*nats.Conn, *natsserver.Server, func(context.Context), error) {
	closed := make(chan struct{})
	var closedOnce sync.Once
	opts := []nats.Option{
		nats.ClosedHandler(func(*nats.Conn) { closedOnce.Do(func() { close(closed) }) }),
		nats.Name("sluice"),
		nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("disconnected from NATS", "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("reconnected to NATS", "url", nc.ConnectedUrlRedacted()) }),
	}
	if f.natsURL != "" {
		opts = append(opts, f.natsSecurity().options()...)
		nc, err := nats.Connect(f.natsURL, opts...)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("connecting to --nats-url %s: %w", f.natsURL, err)
		}
		if limit := nc.MaxPayload(); limit < natsserver.RequiredMaxPayload {
			url := nc.ConnectedUrlRedacted()
			nc.Close()
			return nil, nil, nil, fmt.Errorf("the NATS server at %s takes messages of at most %d bytes (its max_payload), too few for a 1 MiB event and its envelope: set max_payload to at least %d in its configuration (4MB, as the embedded server uses, is fine)", url, limit, natsserver.RequiredMaxPayload)
		}
		return nc, nil, func(ctx context.Context) { drain(ctx, nc, closed, log) }, nil
	}
	var key string
	if f.dataKeyFile != "" {
		var err error
		if key, err = natsserver.ReadKeyFile(f.dataKeyFile); err != nil {
			return nil, nil, nil, fmt.Errorf("--data-key-file: %w", err)
		}
	}
	embedded, err := natsserver.Start(natsserver.Config{
		Key:     key,
		DataDir: f.dataDir,
		Listen:  f.natsListen,
		Logger:  log.With("component", "nats"),
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("starting the embedded NATS server: %w", err)
	}
	if url := embedded.ClientURL(); url != "" {
		// The port --nats-listen 127.0.0.1:0 got, for tools to connect to.
		log.Info("the embedded NATS server is listening", "nats_url", url)
	}
	nc, err := embedded.Connect(opts...)
	if err != nil {
		embedded.Shutdown()
		return nil, nil, nil, fmt.Errorf("connecting to the embedded NATS server: %w", err)
	}
	return nc, embedded, func(ctx context.Context) {
		drain(ctx, nc, closed, log)
		embedded.Shutdown()
	}, nil
}

// drain drains nc, so that publishes in flight finish, and waits until it
// is closed (closed is closed by its ClosedHandler). When ctx ends first, it
// closes nc.
func drain(ctx context.Context, nc *nats.Conn, closed <-chan struct{}, log *slog.Logger) {
	if err := nc.Drain(); err != nil {
		// Already closed, or it cannot drain: close it.
		nc.Close()
		return
	}
	select {
	case <-closed:
	case <-ctx.Done():
		log.Warn("the NATS connection did not drain by the shutdown deadline; closing it")
		nc.Close()
	}
}

func natsDescription(f serveFlags) string {
	data := ", data in " + f.dataDir
	if f.dataKeyFile != "" {
		data += ", encrypted"
	}
	switch {
	case f.natsURL != "":
		return f.natsURL
	case f.natsListen != "":
		return "embedded, listening on " + f.natsListen + data
	}
	return "embedded, in-process only" + data
}

// bootstrap creates the first account and API key when no key exists. The
// key's token is token, the value of bootstrapKeyEnv, or a new one printed
// on stderr when token is empty.
func bootstrap(ctx context.Context, st *store.Store, token string, stderr io.Writer, log *slog.Logger) error {
	res, err := st.Bootstrap(ctx, token)
	if err != nil {
		return fmt.Errorf("creating the first API key: %w", err)
	}
	if !res.Created {
		if token != "" {
			log.Warn(bootstrapKeyEnv + " is set, but API keys exist already: it was ignored")
		}
		return nil
	}
	log.Info("created the first account and API key", "account_id", res.Account.ID, "api_key_id", res.Key.ID)
	if token != "" {
		fmt.Fprintf(stderr, "sluice: the token in %s is now API key %s of account %s\n", bootstrapKeyEnv, res.Key.ID, res.Account.ID)
		return nil
	}
	fmt.Fprintf(stderr, "\nsluice: created account %s and its first API key. It is shown only this once:\n\n    %s\n\n", res.Account.ID, res.Key.Token)
	return nil
}

// readiness answers 200 when NATS is connected, JetStream's storage takes
// writes (unless storage is nil: an external server), the stream and store
// exist and, unless routesReady is nil (a process without the worker
// role), the routes are reconciled.
func readiness(nc *nats.Conn, js jetstream.JetStream, st *store.Store, routesReady func() bool, storage api.Storage) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		var problem string
		if !nc.IsConnected() {
			problem = "not connected to NATS"
		} else if err := storageErr(storage); err != nil {
			problem = err.Error()
		} else if _, err := js.Stream(ctx, pipeline.EventsStream); err != nil {
			problem = "stream " + pipeline.EventsStream + ": " + err.Error()
		} else if err := st.Ping(ctx); err != nil {
			problem = "store: " + err.Error()
		} else if routesReady != nil && !routesReady() {
			problem = "routes not reconciled: the route consumers are not made or checked yet, or the last attempt failed"
		}
		if problem != "" {
			http.Error(w, problem, http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
}

// storageErr returns why JetStream's storage refuses writes, or nil when it
// takes them or is not watched (storage nil).
func storageErr(storage api.Storage) error {
	if storage == nil {
		return nil
	}
	return storage.Err()
}
