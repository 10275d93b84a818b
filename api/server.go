package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/store"
)

// SupportedVersion is the only value of the Service-Version header sluice accepts.
const SupportedVersion = "2"

// Header names of the API.
const (
	HeaderVersion     = "Service-Version"
	HeaderOperationID = "Service-Operation-Id"
)

// Keys checks API keys. *store.Store implements it.
type Keys interface {
	// Authenticate returns the key whose token this is, or an error wrapping
	// store.ErrUnauthenticated.
	Authenticate(ctx context.Context, token string) (store.APIKey, error)
}

// Publisher stores validated events. *producer.Producer implements it.
type Publisher interface {
	PublishEncoded(ctx context.Context, events []schemas.Encoded) []producer.Result
}

// Config sets the API's limits. The zero value gets the defaults.
type Config struct {
	MaxBodyBytes  int64 // bytes per ingest request; default 10 MiB
	MaxEvents     int   // events per ingest request; default 10,000
	MaxEventBytes int   // bytes per event; default 1 MiB
}

func (c *Config) setDefaults() {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 10 << 20
	}
	if c.MaxEvents <= 0 {
		c.MaxEvents = schemas.DefaultMaxEvents
	}
	if c.MaxEventBytes <= 0 {
		c.MaxEventBytes = schemas.DefaultMaxEventBytes
	}
}

// Deps are what the API talks to.
type Deps struct {
	Keys      Keys
	Publisher Publisher
	Catalogue *schemas.Catalogue    // default schemas.Default()
	Logger    *slog.Logger          // default slog.Default()
	Metrics   prometheus.Registerer // where the API registers its metrics; nil: not registered
}

// Server is the HTTP API. It is an http.Handler.
type Server struct {
	cfg       Config
	keys      Keys
	publisher Publisher
	catalogue *schemas.Catalogue
	log       *slog.Logger
	metrics   *metrics
	mux       *http.ServeMux
	handler   http.Handler
}

// New returns the API server. Extra routes (health, metrics) can be added
// with Handle before serving.
func New(cfg Config, deps Deps) (*Server, error) {
	cfg.setDefaults()
	if deps.Keys == nil || deps.Publisher == nil {
		return nil, errors.New("api: Keys and Publisher are required")
	}
	if deps.Catalogue == nil {
		deps.Catalogue = schemas.Default()
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	m, err := newMetrics(deps.Metrics)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       cfg,
		keys:      deps.Keys,
		publisher: deps.Publisher,
		catalogue: deps.Catalogue,
		log:       deps.Logger,
		metrics:   m,
		mux:       http.NewServeMux(),
	}
	s.mux.Handle("POST /events", s.authenticated(http.HandlerFunc(s.ingest)))
	s.mux.HandleFunc("/", s.fallback)
	s.handler = s.withOperation(s.mux)
	return s, nil
}

// Handle adds a route that needs neither a version nor a key, such as
// /healthz or /metrics.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

type ctxKey int

const (
	ctxOperation ctxKey = iota
	ctxAPIKey
)

func operationID(ctx context.Context) string {
	id, _ := ctx.Value(ctxOperation).(string)
	return id
}

// apiKey returns the key that authenticated the request.
func apiKey(ctx context.Context) store.APIKey {
	k, _ := ctx.Value(ctxAPIKey).(store.APIKey)
	return k
}

// withOperation gives every request an operation id, sent back in a header
// and in error bodies, and turns a panic into a logged 500.
func (s *Server) withOperation(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := schemas.NewID(schemas.PrefixOperation)
		w.Header().Set(HeaderOperationID, id)
		r = r.WithContext(context.WithValue(r.Context(), ctxOperation, id))
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panicked", "operation_id", id, "method", r.Method, "path", r.URL.Path, "panic", p)
				writeError(w, r, newError(CodeInternal, "sluice failed unexpectedly; report operation id %s", id))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// authenticated checks Service-Version and the bearer key before next.
func (s *Server) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e := checkVersion(r); e != nil {
			writeError(w, r, e)
			return
		}
		token, ok := bearerToken(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sluice"`)
			writeError(w, r, newError(CodeAuthMissing, "send your API key as Authorization: Bearer <API key>"))
			return
		}
		key, err := s.keys.Authenticate(r.Context(), token)
		switch {
		case errors.Is(err, store.ErrUnauthenticated):
			w.Header().Set("WWW-Authenticate", `Bearer realm="sluice", error="invalid_token"`)
			writeError(w, r, newError(CodeAuthInvalid, "the API key is unknown or was deleted; create a key with `sluice accounts create` or POST /api_keys"))
			return
		case err != nil:
			s.log.Error("checking API key", "operation_id", operationID(r.Context()), "error", err)
			w.Header().Set("Retry-After", "1")
			writeError(w, r, newError(CodeUnavailable, "sluice cannot check API keys right now (its store is unreachable); retry shortly"))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxAPIKey, key)))
	})
}

func checkVersion(r *http.Request) *Error {
	v := r.Header.Values(HeaderVersion)
	switch {
	case len(v) == 0:
		return newError(CodeVersionMissing, "the %s header is missing; send %s: %s (the only version supported)", HeaderVersion, HeaderVersion, SupportedVersion)
	case len(v) > 1 || strings.TrimSpace(v[0]) != SupportedVersion:
		return newError(CodeVersionUnsupported, "%s %q is not supported; send %s: %s (the only version supported)", HeaderVersion, strings.Join(v, ", "), HeaderVersion, SupportedVersion)
	}
	return nil
}

func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
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
		writeError(w, r, newError(CodeMethodNotAllowed, "%s does not accept %s; use %s", r.URL.Path, r.Method, strings.Join(allowed, " or ")))
		return
	}
	writeError(w, r, newError(CodeNotFound, "no such path: %s %s", r.Method, r.URL.Path))
}
