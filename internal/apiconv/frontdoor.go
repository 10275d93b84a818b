package apiconv

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/internal/promreg"
	"github.com/sluicehq/sluice/internal/store"
)

// Defaults of the front door (DoorConfig).
const (
	DefaultMaxInFlight      = 64
	DefaultMaxBytesInFlight = 256 << 20
	// DefaultMinBodyRate, 1 KiB/s (8 kbit/s), is below the speed of any
	// link a producer uses; a body stalled for a whole window, or trickled
	// a byte at a time, is cut.
	DefaultMinBodyRate    = 1 << 10
	DefaultBodyRateWindow = 10 * time.Second
	// DefaultMaxAccountManagementInFlight is ample for a person or a
	// deployment tool, whose changes come a few at a time.
	DefaultMaxAccountManagementInFlight = 8
)

// DoorConfig sets the front door's limits. The zero value gets the
// defaults.
type DoorConfig struct {
	// MaxBodyBytes bounds the body of an ingest request (package ingest),
	// which the front door admits (FrontDoor.Admit, ReadBody); default 10
	// MiB. The front door's bytes in flight are at least one such body.
	MaxBodyBytes int64
	// MaxInFlight bounds the ingest requests being read and processed at
	// once; requests beyond it are refused at once with 503 ERR_SLUICE_103.
	// Default DefaultMaxInFlight.
	MaxInFlight int
	// MaxAccountInFlight bounds the ingest requests of one account in
	// flight, its share of MaxInFlight; requests beyond it are refused at
	// once with 429 ERR_SLUICE_130. Default a quarter of MaxInFlight, at
	// least 1, at most MaxInFlight.
	MaxAccountInFlight int
	// MaxBytesInFlight bounds the body bytes all ingest requests in flight
	// hold; a request that would take more is refused with 503
	// ERR_SLUICE_103. A body of known length is counted whole when its
	// request is admitted, any other as it arrives. cmd/sluice derives it
	// from the memory limit. Default DefaultMaxBytesInFlight, at least
	// MaxBodyBytes and one, so that a body of the largest size fits.
	MaxBytesInFlight int64
	// MaxAccountBytesInFlight bounds the body bytes one account's ingest
	// requests in flight hold; beyond it they are refused with 429
	// ERR_SLUICE_131. Default a quarter of MaxBytesInFlight, at least
	// MaxBodyBytes and one, at most MaxBytesInFlight.
	MaxAccountBytesInFlight int64
	// MinBodyRate and BodyRateWindow are the slowest an ingest body may
	// arrive: each BodyRateWindow must bring MinBodyRate×BodyRateWindow
	// more bytes, or the end of the body, or the request is cut with 408
	// ERR_SLUICE_132. Defaults DefaultMinBodyRate and
	// DefaultBodyRateWindow.
	MinBodyRate    int64 // bytes per second
	BodyRateWindow time.Duration
	// MaxAccountManagementInFlight bounds the management requests of one
	// account in flight: reads (GET and HEAD, lists filtered or not) and
	// changes with a body (POST, PATCH, PUT) alike; requests beyond it are
	// refused at once with 429 ERR_SLUICE_130. Bodies (up to 1 MiB
	// each) count in MaxBytesInFlight and MaxAccountBytesInFlight and must
	// arrive at MinBodyRate, as ingest bodies do. Default
	// DefaultMaxAccountManagementInFlight.
	MaxAccountManagementInFlight int
}

func (c *DoorConfig) setDefaults() {
	defaults.Positive(&c.MaxBodyBytes, 10<<20)
	defaults.Positive(&c.MaxInFlight, DefaultMaxInFlight)
	defaults.Positive(&c.MaxAccountInFlight, max(1, c.MaxInFlight/4))
	c.MaxAccountInFlight = min(c.MaxAccountInFlight, c.MaxInFlight)
	defaults.Positive(&c.MaxBytesInFlight, DefaultMaxBytesInFlight)
	c.MaxBytesInFlight = max(c.MaxBytesInFlight, c.MaxBodyBytes+1)
	defaults.Positive(&c.MaxAccountBytesInFlight, c.MaxBytesInFlight/4)
	c.MaxAccountBytesInFlight = min(max(c.MaxAccountBytesInFlight, c.MaxBodyBytes+1), c.MaxBytesInFlight)
	defaults.Positive(&c.MinBodyRate, DefaultMinBodyRate)
	defaults.Positive(&c.BodyRateWindow, DefaultBodyRateWindow)
	defaults.Positive(&c.MaxAccountManagementInFlight, DefaultMaxAccountManagementInFlight)
}

// FrontDoor is what every authenticated request of the HTTP API passes
// through, ingest and management alike: the check of Service-Version and
// of the bearer key (CheckKey), and the admission that bounds the
// requests in flight and the body bytes they hold, for the process and for
// each account (DoorConfig). One listener has one: the management routes
// (AdmitManagement) and package ingest share the bytes it counts. Package
// api's Server.FrontDoor returns the server's.
type FrontDoor struct {
	cfg       DoorConfig // with its defaults
	admission *admission
	log       *slog.Logger
	// refused counts the requests refused, by reason;
	// inFlightRequests and inFlightBytes read the admission's counts.
	refused                         *prometheus.CounterVec
	inFlightRequests, inFlightBytes prometheus.GaugeFunc
}

// NewFrontDoor returns the front door of the limits of cfg, its zero
// fields given their defaults, logging to log the failures to check a
// key, and registering its metrics with reg unless nil. It returns an
// error when reg holds metrics of the same names already.
func NewFrontDoor(cfg DoorConfig, log *slog.Logger, reg prometheus.Registerer) (*FrontDoor, error) {
	cfg.setDefaults()
	a := newAdmission(cfg)
	d := &FrontDoor{
		cfg:       cfg,
		admission: a,
		log:       log,
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_ingest_refused_requests_total",
			Help: "Requests refused by the front door, to POST /events and management requests with a body, by reason: requests or bytes (sluice's bounds reached, 503), account_requests, account_management or account_bytes (an account at its share of ingest requests, of management requests or of bytes, 429), too_slow (a body cut below the minimum rate, 408), account_write_rate (an account changing its configuration faster than its rate, 429).",
		}, []string{"reason"}),
		inFlightRequests: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sluice_ingest_requests_in_flight",
			Help: "Requests to POST /events being read or processed.",
		}, func() float64 { n, _ := a.inFlight(); return float64(n) }),
		inFlightBytes: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sluice_ingest_body_bytes_in_flight",
			Help: "Body bytes granted to the requests in flight, to POST /events and management requests with a body (a body of known length counts whole from its admission).",
		}, func() float64 { _, n := a.inFlight(); return float64(n) }),
	}
	if err := promreg.Register(reg, "the front door's", d.refused, d.inFlightRequests, d.inFlightBytes); err != nil {
		return nil, err
	}
	return d, nil
}

// CheckKey checks Service-Version and the bearer key before next, which
// finds the key with RequestKey (the form of Authorization was checked
// before the routes, and the key may have been looked up by the traffic
// policy: see KeyID). A request it refuses has its body left unread and
// its connection closed after the answer: without a key, a client holds
// no body bytes and no slot.
func (d *FrontDoor) CheckKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			DropUnread(w, r) // taken back below once the key is good
		}
		if e := checkVersion(r); e != nil {
			WriteError(w, r, e)
			return
		}
		b := bearerOf(r.Context())
		if b == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sluice"`)
			WriteError(w, r, NewError(CodeAuthMissing, "send your API key as Authorization: Bearer <API key>"))
			return
		}
		key, err := b.authenticate(r.Context())
		switch {
		case errors.Is(err, store.ErrUnauthenticated):
			w.Header().Set("WWW-Authenticate", `Bearer realm="sluice", error="invalid_token"`)
			WriteError(w, r, NewError(CodeAuthInvalid, "the API key is unknown or was deleted; use the key sluice printed at its first start (or SLUICE_BOOTSTRAP_API_KEY)"))
			return
		case err != nil:
			d.log.Error("checking API key", "operation_id", OperationID(r.Context()), "error", err)
			w.Header().Set("Retry-After", "1")
			WriteError(w, r, NewError(CodeStoreUnavailable, "sluice cannot check API keys right now (its key store is unreachable); retry shortly"))
			return
		}
		w.Header().Del("Connection")
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxAPIKey, key)))
	})
}

// Admit lets an ingest request of the key's account in, with a first
// grant of bytes for its body, or answers it and returns false: 413 for a
// Content-Length over DoorConfig.MaxBodyBytes, 503 beyond the process's
// bounds (requests or body bytes in flight), 429 beyond its account's
// share, both with Retry-After. The caller releases the ticket when the
// request is answered.
func (d *FrontDoor) Admit(w http.ResponseWriter, r *http.Request) (*Ticket, bool) {
	if r.ContentLength > d.cfg.MaxBodyBytes {
		WriteError(w, r, d.BodyTooLarge())
		return nil, false
	}
	t, refused := d.admission.admit(RequestKey(r.Context()).AccountID, firstGrant(r.ContentLength, d.cfg.MaxBodyBytes))
	if refused != admitted {
		d.refuse(w, r, refused)
		return nil, false
	}
	return t, true
}

// BodyTooLarge is the error of an ingest body over DoorConfig.MaxBodyBytes.
func (d *FrontDoor) BodyTooLarge() *Error {
	return NewError(CodeBodyTooLarge, "the body is over the limit of %d bytes (%d MiB) per request; split the events into several requests", d.cfg.MaxBodyBytes, d.cfg.MaxBodyBytes>>20)
}

// CountWriteRateRefusal counts a change refused because its account
// changes its configuration faster than its rate (package api's
// Config.AccountWriteRate), in the front door's refused requests, with
// reason account_write_rate.
func (d *FrontDoor) CountWriteRateRefusal() {
	d.refused.WithLabelValues("account_write_rate").Inc()
}
