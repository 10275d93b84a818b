package ingest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// Pattern is the route Handler serves, for api.Server.Handle.
const Pattern = "POST /events"

// Media types of ingest bodies.
const (
	mediaJSON   = "application/json"
	mediaNDJSON = "application/x-ndjson"
)

// Publisher stores validated events. *producer.Producer implements it.
type Publisher interface {
	// PublishEncoded stores events and returns one Result per event, in
	// order. A Result's error wraps producer.ErrNotStored when JetStream did
	// not acknowledge the event, and nats.ErrMaxPayload too when the event
	// is larger than the NATS server accepts.
	PublishEncoded(ctx context.Context, events []schemas.Encoded) []producer.Result
}

// Config sets the limits of a batch. The zero value gets the defaults.
// The bytes of a body are bounded by the front door
// (apiconv.DoorConfig.MaxBodyBytes).
type Config struct {
	MaxEvents     int // events per request; default schemas.DefaultMaxEvents
	MaxEventBytes int // bytes per event; default schemas.DefaultMaxEventBytes
}

func (c *Config) setDefaults() {
	defaults.Positive(&c.MaxEvents, schemas.DefaultMaxEvents)
	defaults.Positive(&c.MaxEventBytes, schemas.DefaultMaxEventBytes)
}

// Deps are what ingest talks to.
type Deps struct {
	// Door checks the key of every request and admits its body: the front
	// door of the api.Server whose listener routes Handler
	// (api.Server.FrontDoor); required.
	Door *apiconv.FrontDoor
	// Publisher stores the events; required.
	Publisher Publisher
	// Storage says whether JetStream's store takes writes, to tell a
	// full store from another failure to store; nil: not watched.
	Storage   apiconv.Storage
	Catalogue *schemas.Catalogue    // default schemas.Default()
	Logger    *slog.Logger          // default slog.Default()
	Metrics   prometheus.Registerer // where ingest registers its metrics; nil: not registered
}

// Handler serves POST /events. Route it with api.Server.Handle(Pattern,
// h), behind the server's operation id, Authorization's check and traffic
// policy, which it relies on.
type Handler struct {
	cfg       Config
	door      *apiconv.FrontDoor
	publisher Publisher
	storage   apiconv.Storage
	catalogue *schemas.Catalogue
	log       *slog.Logger
	metrics   *metrics
	handler   http.Handler
}

// New returns the handler of POST /events.
func New(cfg Config, deps Deps) (*Handler, error) {
	cfg.setDefaults()
	if deps.Door == nil || deps.Publisher == nil {
		return nil, errors.New("ingest: Door and Publisher are required")
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
	h := &Handler{
		cfg:       cfg,
		door:      deps.Door,
		publisher: deps.Publisher,
		storage:   deps.Storage,
		catalogue: deps.Catalogue,
		log:       deps.Logger,
		metrics:   m,
	}
	h.handler = h.countRequests(h.door.CheckKey(http.HandlerFunc(h.ingest)))
	return h, nil
}

// ServeHTTP serves POST /events.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// response is the body of a 202 from POST /events.
type response struct {
	// EventIDs are the ids of the events, in the order sent.
	EventIDs []string `json:"event_ids"`
	// Stored counts the events stored by this request.
	Stored int `json:"stored"`
	// Duplicates counts events whose id was already stored (a resent batch).
	Duplicates int `json:"duplicates"`
}
