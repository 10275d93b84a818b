package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/api"
	"github.com/sluicehq/sluice/natsserver"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/store"
)

// bootstrapKeyEnv names the environment variable whose token becomes the
// first API key. It is not a flag, so it never shows in a process list.
const bootstrapKeyEnv = "SLUICE_BOOTSTRAP_API_KEY"

type serveFlags struct {
	dataDir         string
	natsListen      string
	natsURL         string
	natsCreds       string
	natsTLSCA       string
	natsTLSCert     string
	natsTLSKey      string
	retention       time.Duration
	replicas        int
	httpAddr        string
	shutdownTimeout time.Duration
	log             logFlags
}

func newServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run sluice: the ingest API and, unless --nats-url is given, an embedded NATS JetStream server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), f, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dataDir, "data-dir", "./sluice-data", "where the embedded NATS server stores streams and state")
	fl.StringVar(&f.natsListen, "nats-listen", "", "expose the embedded NATS server's client port at HOST:PORT (default: not exposed)")
	fl.StringVar(&f.natsURL, "nats-url", "", "use this external NATS server or cluster instead of the embedded one (comma-separated URLs)")
	fl.StringVar(&f.natsCreds, "nats-creds", "", "credentials file (JWT and NKey seed) for --nats-url")
	fl.StringVar(&f.natsTLSCA, "nats-tls-ca", "", "CA certificate file to verify --nats-url's servers")
	fl.StringVar(&f.natsTLSCert, "nats-tls-cert", "", "client certificate file for --nats-url (with --nats-tls-key)")
	fl.StringVar(&f.natsTLSKey, "nats-tls-key", "", "client key file for --nats-url (with --nats-tls-cert)")
	fl.DurationVar(&f.retention, "retention", 72*time.Hour, "how long the event stream keeps events (its MaxAge)")
	fl.IntVar(&f.replicas, "replicas", 1, "replicas of the stream and key-value buckets (3 on a NATS cluster)")
	fl.StringVar(&f.httpAddr, "http", "127.0.0.1:8080", "HOST:PORT of the HTTP API")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a shutdown may take to finish requests in flight")
	f.log.register(fl)
	return cmd
}

func runServe(ctx context.Context, f serveFlags, stderr io.Writer) error {
	log, err := f.log.logger(stderr)
	if err != nil {
		return err
	}
	nc, closeNATS, err := f.connectNATS(log)
	if err != nil {
		return err
	}
	defer closeNATS()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("creating JetStream context: %w", err)
	}

	setupCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := pipeline.EnsureStream(setupCtx, js, pipeline.StreamConfig{Retention: f.retention, Replicas: f.replicas}); err != nil {
		return err
	}
	st, err := store.Open(setupCtx, js, store.Config{Replicas: f.replicas})
	if err != nil {
		return err
	}
	if err := bootstrap(setupCtx, st, stderr, log); err != nil {
		return err
	}

	prod, err := producer.New(nc, producer.Config{})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv, err := api.New(api.Config{}, api.Deps{Keys: st, Publisher: prod, Logger: log, Metrics: reg})
	if err != nil {
		return err
	}
	srv.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv.Handle("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	}))
	srv.Handle("GET /readyz", readiness(nc, js, st))

	ln, err := net.Listen("tcp", f.httpAddr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", f.httpAddr, err)
	}
	httpSrv := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("sluice is serving", "http", "http://"+ln.Addr().String(), "nats", natsDescription(f))

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := httpSrv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serving HTTP: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		log.Info("shutting down", "deadline", f.shutdownTimeout)
		shutdownCtx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
		defer cancel()
		if err := httpSrv.Shutdown(shutdownCtx); err != nil {
			return fmt.Errorf("shutting down HTTP: %w", err)
		}
		return nil
	})
	err = g.Wait()
	log.Info("stopped")
	return err
}

// connectNATS starts the embedded server, or connects to --nats-url. The
// returned func drains the connection and stops the embedded server.
func (f serveFlags) connectNATS(log *slog.Logger) (*nats.Conn, func(), error) {
	opts := []nats.Option{
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
		if f.natsCreds != "" {
			opts = append(opts, nats.UserCredentials(f.natsCreds))
		}
		if f.natsTLSCA != "" {
			opts = append(opts, nats.RootCAs(f.natsTLSCA))
		}
		if f.natsTLSCert != "" || f.natsTLSKey != "" {
			opts = append(opts, nats.ClientCert(f.natsTLSCert, f.natsTLSKey))
		}
		nc, err := nats.Connect(f.natsURL, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("connecting to --nats-url %s: %w", f.natsURL, err)
		}
		return nc, func() { _ = nc.Drain() }, nil
	}
	embedded, err := natsserver.Start(natsserver.Config{
		DataDir: f.dataDir,
		Listen:  f.natsListen,
		Logger:  log.With("component", "nats"),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("starting the embedded NATS server: %w", err)
	}
	nc, err := embedded.Connect(opts...)
	if err != nil {
		embedded.Shutdown()
		return nil, nil, fmt.Errorf("connecting to the embedded NATS server: %w", err)
	}
	return nc, func() {
		_ = nc.Drain()
		embedded.Shutdown()
	}, nil
}

func natsDescription(f serveFlags) string {
	switch {
	case f.natsURL != "":
		return f.natsURL
	case f.natsListen != "":
		return "embedded, listening on " + f.natsListen + ", data in " + f.dataDir
	}
	return "embedded, in-process only, data in " + f.dataDir
}

// bootstrap creates the first account and API key when no key exists.
func bootstrap(ctx context.Context, st *store.Store, stderr io.Writer, log *slog.Logger) error {
	token := os.Getenv(bootstrapKeyEnv)
	res, err := st.Bootstrap(ctx, token)
	if err != nil {
		return fmt.Errorf("creating the first API key: %w", err)
	}
	if !res.Created {
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

// readiness answers 200 when NATS is connected and the stream and store exist.
func readiness(nc *nats.Conn, js jetstream.JetStream, st *store.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		var problem string
		if !nc.IsConnected() {
			problem = "not connected to NATS"
		} else if _, err := js.Stream(ctx, pipeline.EventsStream); err != nil {
			problem = "stream " + pipeline.EventsStream + ": " + err.Error()
		} else if err := st.Ping(ctx); err != nil {
			problem = "store: " + err.Error()
		}
		if problem != "" {
			http.Error(w, problem, http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
}
