package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicehq/sluice/docs"
	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/pipeline"
)

// Paths every serve process answers on, whatever its roles: probes and
// scrapers (deploy/kubernetes, docker-compose.yml) use them. /metrics is
// served on --metrics-http only, as its labels name every account's ids;
// the probes on both listeners.
const (
	healthzPath = "/healthz" // the process runs
	readyzPath  = "/readyz"  // NATS is connected, the stream and store exist, routes are reconciled
	metricsPath = "/metrics" // Prometheus metrics
)

// httpHandler returns the HTTP API of the process's roles on one listener:
// the management routes and /openapi.yaml with api, POST /events (package
// ingest, behind the API's front door) with ingest, and always
// the health and readiness paths (metrics are on metricsHandler). Paths of
// the roles the process does not run answer 404.
func (a *app) httpHandler(cfg api.Config) (*api.Server, error) {
	deps := api.Deps{Keys: a.keys, Publisher: a.producer, Logger: a.log, Metrics: a.registry, Storage: a.storage()}
	if a.roles.api {
		deps.Destinations, deps.Subscriptions, deps.APIKeys, deps.BotUsers, deps.Credentials = a.store, a.store, a.store, a.store, a.store
		deps.Outbox = a.store.Outbox()
		deps.ReservedDomains = a.store
		deps.AgentIngresses = a.store
		deps.AppSessions = a.store
		deps.HTTPSEdges = a.store
		deps.TunnelGroupBackends = a.store
		deps.Tunnels = a.store
		deps.DeadLetters, deps.Replays = a.redriver, pipeline.NewReplayer(a.stream, a.store.Replays(), a.store)
		deps.DeliveryStatus = pipeline.NewStatusReader(a.js, a.statusKV, a.flags.failingAfter)
		deps.DestinationTrial = pipeline.NewTrial(a.newSink, 0)
	}
	srv, err := api.New(cfg, deps)
	if err != nil {
		return nil, err
	}
	if a.roles.ingest {
		in, err := ingest.New(ingest.Config{}, ingest.Deps{Door: srv.FrontDoor(), Publisher: a.producer, Storage: deps.Storage, Logger: a.log, Metrics: a.registry})
		if err != nil {
			return nil, err
		}
		srv.Handle(ingest.Pattern, in)
	}
	srv.Handle("GET "+healthzPath, http.HandlerFunc(healthz))
	srv.Handle("GET "+readyzPath, a.readiness())
	if a.roles.api {
		srv.Handle("GET /openapi.yaml", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/yaml")
			_, _ = w.Write(docs.OpenAPI)
		}))
	}
	return srv, nil
}

// apiBaseURL is the base of the URLs the API answers with and stores in
// audit events: --public-url, or else the address --http listens on. It is
// never a request's Host, which the client chooses. Without --public-url on
// an address beyond loopback, it logs that clients may not reach that URL.
func (f serveFlags) apiBaseURL(addr net.Addr, tls bool, log *slog.Logger) string {
	if f.publicURL != "" {
		return f.publicURL
	}
	base := listenURL(addr, tls)
	if tcp, ok := addr.(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		log.Warn("--public-url is not set: the uri of resources and audit events is the address of --http, which clients may not reach; set --public-url to the URL they use", "public_url", base)
	}
	return base
}

// listenURL is the URL of a listener's address: http://127.0.0.1:8080,
// or https:// when it serves TLS.
func listenURL(addr net.Addr, tls bool) string {
	if tls {
		return "https://" + addr.String()
	}
	return "http://" + addr.String()
}

// metricsHandler serves the listener of --metrics-http: the metrics of reg,
// and the health and readiness paths as on the API's listener, so that a
// probe may use either. Every other path answers 404.
func metricsHandler(reg *prometheus.Registry, ready http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+metricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET "+healthzPath, healthz)
	mux.Handle("GET "+readyzPath, ready)
	return mux
}

// healthz answers that the process runs.
func healthz(w http.ResponseWriter, _ *http.Request) {
	_, _ = io.WriteString(w, "ok\n")
}

// readiness answers 200 when NATS is connected, JetStream's storage takes
// writes (unless not watched: an external server), the stream and store
// exist and, with the worker role, the routes are reconciled.
func (a *app) readiness() http.Handler {
	storage := a.storage()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		var problem string
		if !a.nc.IsConnected() || !a.storeNC.IsConnected() {
			problem = "not connected to NATS"
		} else if err := storageErr(storage); err != nil {
			problem = err.Error()
		} else if _, err := a.js.Stream(ctx, pipeline.EventsStream); err != nil {
			problem = "stream " + pipeline.EventsStream + ": " + err.Error()
		} else if err := a.store.Ping(ctx); err != nil {
			problem = "store: " + err.Error()
		} else if a.delivery != nil && !a.delivery.reconciler.Ready() {
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
func storageErr(storage apiconv.Storage) error {
	if storage == nil {
		return nil
	}
	return storage.Err()
}

// httpTLS loads the certificate and key of --tls-cert and --tls-key, so
// that a file that is missing or wrong stops serve at once. It returns nil
// when neither flag is given: the listener serves plain HTTP.
func (f serveFlags) httpTLS() (*tls.Config, error) {
	if f.tlsCert == "" && f.tlsKey == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s and --tls-key %s: %w: give a PEM certificate (its chain after it) and the PEM private key that goes with it", f.tlsCert, f.tlsKey, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
