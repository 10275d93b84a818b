package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicehq/sluice/docs"
	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/store"
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

// destinationChecks are what the API's destination status and test
// endpoints read and write with.
type destinationChecks struct {
	status api.DeliveryStatus
	trial  api.DestinationTrial
}

// httpHandler returns the HTTP API of a process with these roles: the
// management routes and /openapi.yaml with api, POST /events with ingest,
// and always the health and readiness paths (metrics are on metricsHandler). Paths of the roles
// the process does not run answer 404. routesReady, nil without the worker
// role, tells readiness whether the routes are reconciled, storage (nil
// with an external NATS server) whether JetStream takes writes; deadLetters
// serves the dead-letter routes of destinations, replays the replay routes
// of subscriptions.
func httpHandler(cfg api.Config, roles serveRoles, st *store.Store, publisher api.Publisher, nc *nats.Conn, js jetstream.JetStream, reg *prometheus.Registry, routesReady func() bool, storage api.Storage, checks destinationChecks, deadLetters api.DeadLetters, replays api.Replays, log *slog.Logger) (http.Handler, error) {
	deps := api.Deps{Keys: st, Publisher: publisher, Logger: log, Metrics: reg, Storage: storage}
	if roles.api {
		deps.Destinations, deps.Subscriptions, deps.APIKeys, deps.Outbox = st, st, st, st
		deps.DeadLetters, deps.Replays = deadLetters, replays
		deps.DeliveryStatus, deps.DestinationTrial = checks.status, checks.trial
	}
	cfg.WithoutIngest = !roles.ingest
	srv, err := api.New(cfg, deps)
	if err != nil {
		return nil, err
	}
	srv.Handle("GET "+healthzPath, http.HandlerFunc(healthz))
	srv.Handle("GET "+readyzPath, readiness(nc, js, st, routesReady, storage))
	if roles.api {
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
