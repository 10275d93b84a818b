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
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
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
	natsNkey        string
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
	repullAfter     time.Duration // hidden: pipeline.DeliveryConfig.RepullAfter
	failingAfter    time.Duration
	dev             bool
	memoryLimit     string
	devAWSListen    string
	devAWSMaxBytes  string
	roles           []string
	tlsCert         string
	tlsKey          string
	trafficPolicy   string
	log             logFlags
	limits          limitFlags // the front door of ingest, what an account may have
	domains         domainFlags
	ingress         ingressFlags
	edge            edgeFlags
	dns             dnsFlags
	acme            acmeFlags
}

func newServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run sluice: the HTTP API, delivery and, unless --nats-url is given, an embedded NATS JetStream server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.settleEdge(func(name string) bool {
				_, inEnv := os.LookupEnv(envName(name))
				return inEnv || cmd.Flags().Changed(name)
			})
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
	fl.StringVar(&f.natsListen, "nats-listen", "", "expose the embedded NATS server's client port at HOST:PORT, a loopback address (it has no TLS); clients authenticate with the NKey seeds serve writes in --data-dir/nats: sluice.nk (sluice's own processes and CLI), producer.nk, edge.nk (default: not exposed)")
	fl.StringVar(&f.natsURL, "nats-url", "", "use this external NATS server or cluster instead of the embedded one (comma-separated URLs)")
	fl.StringVar(&f.natsCreds, "nats-creds", "", "credentials file (JWT and NKey seed) for --nats-url, for decentralised JWT auth")
	fl.StringVar(&f.natsNkey, "nats-nkey", "", "NKey seed file for --nats-url, for a server with nkey users, such as another serve's --data-dir/nats/sluice.nk")
	fl.StringVar(&f.natsTLSCA, "nats-tls-ca", "", "CA certificate file to verify --nats-url's servers")
	fl.StringVar(&f.natsTLSCert, "nats-tls-cert", "", "client certificate file for --nats-url (with --nats-tls-key)")
	fl.StringVar(&f.natsTLSKey, "nats-tls-key", "", "client key file for --nats-url (with --nats-tls-cert)")
	fl.DurationVar(&f.retention, "retention", 72*time.Hour, "how long the event stream keeps events (its MaxAge)")
	fl.IntVar(&f.replicas, "replicas", 1, "replicas of the stream and key-value buckets (3 on a NATS cluster)")
	fl.StringVar(&f.httpAddr, "http", "127.0.0.1:8080", "HOST:PORT of the HTTP API")
	fl.StringVar(&f.metricsAddr, "metrics-http", "127.0.0.1:9464", "HOST:PORT of the listener of /metrics (with /healthz and /readyz), apart from --http as it names every account's ids: keep it off the public network; empty for none")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "certificate file (PEM, chain after it) to serve --http over HTTPS, with --tls-key")
	fl.StringVar(&f.tlsKey, "tls-key", "", "private key file (PEM) of --tls-cert")
	fl.StringSliceVar(&f.roles, "roles", defaultRoles(), "the roles this process runs, comma-separated: api (management API), ingest (POST /events), worker (route reconciler and delivery), edge (agents' tunnels and their public traffic; added to the default where --edge-agents is given, and with --dev); every process serves /healthz and /readyz, and /metrics on --metrics-http")
	fl.StringVar(&f.trafficPolicy, "traffic-policy", "", "traffic policy document (YAML or JSON) applied to every request of --http before the API works on it, such as rate limits per API key (docs/operations.md); serve refuses to start when it has a mistake, and reloads it on SIGHUP and when the file changes, keeping the one before when the new one has a mistake (default: none)")
	fl.StringVar(&f.publicURL, "public-url", "", "scheme and host clients reach the API at, such as https://sluice.example.com, for the URLs in responses and audit events (default: http:// or https:// and the address of --http; never a request's Host)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a shutdown may take to finish requests in flight")
	fl.DurationVar(&f.ackWait, "ack-wait", pipeline.DefaultAckWait, "how long an event handed to a sluice process that then died waits before another process gets it")
	fl.DurationVar(&f.linger, "linger", pipeline.DefaultLinger, "how long a batch that is not full waits for more events before it is sent")
	fl.DurationVar(&f.repullAfter, "repull-after", pipeline.DefaultRepullAfter, "how long a route's worker that receives nothing keeps its NATS pull requests before it makes new ones; negative for never, only for a test to show why it is needed")
	_ = fl.MarkHidden("repull-after")
	fl.DurationVar(&f.failingAfter, "failing-after", pipeline.DefaultFailingAfter, "how long a destination's calls fail as a whole before its status is failing (logged, and the gauge sluice_destination_failing) rather than retrying")
	fl.StringVar(&f.memoryLimit, "memory-limit", "", "soft memory limit of the process, such as 512MiB (default: GOMEMLIMIT, or else 90% of the container's memory limit, or none); 0 for none")
	fl.BoolVar(&f.dev, "dev", false, "run sluice's AWS emulator inside serve and deliver every destination to it: any ARN works, no AWS account needed")
	fl.StringVar(&f.devAWSListen, "dev-aws-listen", "127.0.0.1:4566", "HOST:PORT of the AWS emulator of --dev, a loopback address")
	fl.StringVar(&f.devAWSMaxBytes, "dev-aws-max-stored-bytes", defaultDevAWSMaxBytes, "what each stream, delivery stream and log group of the AWS emulator of --dev keeps at most, such as 8MiB, besides their retention (a day for streams and delivery streams); past it, the oldest records are dropped (docs/emulator.md)")
	f.log.register(fl)
	f.limits.register(fl)
	f.domains.register(fl)
	f.ingress.register(fl)
	f.edge.register(fl)
	f.dns.register(fl)
	f.acme.register(fl)
}

// runServe runs a serve process until ctx ends.
func runServe(ctx context.Context, f serveFlags, stderr io.Writer) error {
	a, err := newApp(ctx, f, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Run(ctx)
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

// natsConns are a serve process's connections to NATS. The store's reads
// and writes have a connection of their own: on the one that carries the
// events (ingest's publishes, delivery's pulls and acknowledgements), the
// answer to a management request's read would wait behind the events
// pulled for an account's hundred routes, in the server's buffer for the
// connection and in the client's reader, for hundreds of milliseconds.
type natsConns struct {
	events, store *nats.Conn
	embedded      *natsserver.Server // nil with --nats-url
	// close drains both connections, waiting at most until its ctx ends,
	// and then stops the embedded server.
	close func(context.Context)
}

// connectNATS starts the embedded server, or connects to --nats-url and
// checks that the server takes messages as large as sluice's, and opens
// the process's connections.
func (f serveFlags) connectNATS(log *slog.Logger) (natsConns, error) {
	dial, embedded, err := f.natsDialer(log)
	if err != nil {
		return natsConns{}, err
	}
	var drains []func(context.Context)
	conns := natsConns{embedded: embedded, close: func(ctx context.Context) {
		var wg sync.WaitGroup
		for _, d := range drains {
			wg.Go(func() { d(ctx) })
		}
		wg.Wait()
		if embedded != nil {
			embedded.Shutdown()
		}
	}}
	for _, c := range []struct {
		conn **nats.Conn
		name string
	}{{&conns.events, "sluice"}, {&conns.store, "sluice-store"}} {
		nc, drain, err := dial(c.name)
		if err != nil {
			conns.close(context.Background())
			return natsConns{}, err
		}
		*c.conn = nc
		drains = append(drains, drain)
	}
	return conns, nil
}

// natsDialer starts the embedded server, unless --nats-url is given, and
// returns what opens a connection to it, by name, with the func that
// drains that connection.
func (f serveFlags) natsDialer(log *slog.Logger) (func(name string) (*nats.Conn, func(context.Context), error), *natsserver.Server, error) {
	options := func(name string) ([]nats.Option, <-chan struct{}) {
		closed := make(chan struct{})
		var closedOnce sync.Once
		return []nats.Option{
			nats.ClosedHandler(func(*nats.Conn) { closedOnce.Do(func() { close(closed) }) }),
			nats.Name(name),
			nats.MaxReconnects(-1),
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil {
					log.Warn("disconnected from NATS", "connection", name, "error", err)
				}
			}),
			nats.ReconnectHandler(func(nc *nats.Conn) {
				log.Info("reconnected to NATS", "connection", name, "url", nc.ConnectedUrlRedacted())
			}),
		}, closed
	}
	if f.natsURL != "" {
		security, err := f.natsSecurity().options()
		if err != nil {
			return nil, nil, err
		}
		return func(name string) (*nats.Conn, func(context.Context), error) {
			opts, closed := options(name)
			nc, err := nats.Connect(f.natsURL, append(opts, security...)...)
			if err != nil {
				return nil, nil, fmt.Errorf("connecting to --nats-url %s: %w", f.natsURL, err)
			}
			if limit := nc.MaxPayload(); limit < natsserver.RequiredMaxPayload {
				url := nc.ConnectedUrlRedacted()
				nc.Close()
				return nil, nil, fmt.Errorf("the NATS server at %s takes messages of at most %d bytes (its max_payload), too few for a 1 MiB event and its envelope: set max_payload to at least %d in its configuration (4MB, as the embedded server uses, is fine)", url, limit, natsserver.RequiredMaxPayload)
			}
			return nc, func(ctx context.Context) { drain(ctx, nc, closed, log) }, nil
		}, nil, nil
	}
	var key string
	if f.dataKeyFile != "" {
		var err error
		if key, err = natsserver.ReadKeyFile(f.dataKeyFile); err != nil {
			return nil, nil, fmt.Errorf("--data-key-file: %w", err)
		}
	}
	embedded, err := natsserver.Start(natsserver.Config{
		Key:     key,
		DataDir: f.dataDir,
		Listen:  f.natsListen,
		Logger:  log.With("component", "nats"),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("starting the embedded NATS server: %w", err)
	}
	if url := embedded.ClientURL(); url != "" {
		// The port --nats-listen 127.0.0.1:0 got, for tools to connect to,
		// and the seed files they authenticate with (paths, not secrets).
		log.Info("the embedded NATS server is listening", "nats_url", url,
			"nats_nkey", embedded.SeedFile(natsserver.IdentitySluice),
			"producer_nkey", embedded.SeedFile(natsserver.IdentityProducer),
			"edge_nkey", embedded.SeedFile(natsserver.IdentityEdge))
	}
	return func(name string) (*nats.Conn, func(context.Context), error) {
		opts, closed := options(name)
		nc, err := embedded.Connect(opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("connecting to the embedded NATS server: %w", err)
		}
		return nc, func(ctx context.Context) { drain(ctx, nc, closed, log) }, nil
	}, embedded, nil
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
