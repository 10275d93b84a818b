package sessionservice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluicehq/sluice/appsession"
	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// Sessions keeps application sessions. *store.Store implements it; see its
// methods for the errors each returns.
type Sessions interface {
	RecordAppSession(ctx context.Context, accountID string, in store.AppSession) (store.AppSession, error)
	RefreshAppSession(ctx context.Context, accountID, id string, lastActive, expiresAt time.Time) (store.AppSession, error)
	DeleteAppSession(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.AppSession, error)
	RemoveExpiredAppSessions(ctx context.Context) (int, error)
}

// Config tunes a Service. The zero value is usable.
type Config struct {
	// SweepInterval is how often the sessions past their expiry are
	// removed from the store; default DefaultSweepInterval. Reads hide
	// them at once whatever it is.
	SweepInterval time.Duration
	// RequestTimeout bounds the store's work for one request; default
	// DefaultRequestTimeout. A request under way when Run's ctx ends is
	// answered still, within it.
	RequestTimeout time.Duration
	// MaxConcurrent bounds the requests the process answers at once;
	// default DefaultMaxConcurrent. A request beyond waits for one to
	// end.
	MaxConcurrent int
	// MaxAccountConcurrent bounds those of one account, its share of
	// MaxConcurrent; default a quarter of MaxConcurrent, at least 1, at
	// most MaxConcurrent. A request of an account that has as many under
	// way is answered 429 at once: the edge retries it shortly.
	MaxAccountConcurrent int
	Logger               *slog.Logger // default slog.Default()
}

// DefaultSweepInterval is how often expired sessions are removed by
// default.
const DefaultSweepInterval = time.Minute

// DefaultRequestTimeout is the default of Config.RequestTimeout: shorter
// than the time the client waits by default (appsession.DefaultTimeout),
// so that the service's answer, an error included, reaches a client still
// waiting for it rather than one that has given up and may be retrying.
const DefaultRequestTimeout = appsession.DefaultTimeout * 4 / 5

// DefaultMaxConcurrent is how many requests a process answers at once by
// default.
const DefaultMaxConcurrent = 64

func (c *Config) setDefaults() {
	defaults.Positive(&c.SweepInterval, DefaultSweepInterval)
	defaults.Positive(&c.RequestTimeout, DefaultRequestTimeout)
	defaults.Positive(&c.MaxConcurrent, DefaultMaxConcurrent)
	defaults.Positive(&c.MaxAccountConcurrent, max(1, c.MaxConcurrent/4))
	c.MaxAccountConcurrent = min(c.MaxAccountConcurrent, c.MaxConcurrent)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Service answers appsession's requests on NATS and sweeps expired
// sessions.
type Service struct {
	nc       *nats.Conn
	sessions Sessions
	cfg      Config
}

// New returns a Service answering over nc from sessions. It starts
// nothing: Run does.
func New(nc *nats.Conn, sessions Sessions, cfg Config) *Service {
	cfg.setDefaults()
	return &Service{nc: nc, sessions: sessions, cfg: cfg}
}

// Run answers requests, MaxConcurrent at once, and removes expired
// sessions every SweepInterval until ctx ends, then stops taking requests
// and returns once those under way have been answered: ctx's end does not
// cancel them (RequestTimeout bounds them), so that a process stopping
// in a rolling restart fails no request it took. It returns an error if
// the service cannot subscribe to its subjects.
func (s *Service) Run(ctx context.Context) error {
	running := newSlots(s.cfg.MaxConcurrent, s.cfg.MaxAccountConcurrent)
	defer running.stop()
	svc, err := micro.AddService(s.nc, micro.Config{
		Name:        "sluice-app-sessions",
		Version:     "1.0.0",
		Description: "records, refreshes and ends application sessions (package appsession)",
	})
	if err != nil {
		return fmt.Errorf("starting the application session service: %w", err)
	}
	defer func() { _ = svc.Stop() }()
	for _, ep := range []struct {
		name, subject string
		handle        func(ctx context.Context, data []byte) (store.AppSession, error)
	}{
		{"record", appsession.SubjectRecord, s.record},
		{"refresh", appsession.SubjectRefresh, s.refresh},
		{"end", appsession.SubjectEnd, s.end},
	} {
		handler := micro.HandlerFunc(func(req micro.Request) {
			// The answer is published to the request's reply subject
			// rather than through req, which micro reads once this
			// function returns (for its statistics), before the
			// goroutine answering it is done.
			r := request{nc: s.nc, subject: req.Subject(), reply: req.Reply(), data: req.Data()}
			switch running.run(ctx, requestAccount(r.data), func() { s.answer(context.WithoutCancel(ctx), r, ep.handle) }) {
			case accountBusy:
				r.fail("429", fmt.Sprintf("the account has %d requests under way, its share of this sluice process's; retry shortly", s.cfg.MaxAccountConcurrent), nil)
			case stopping:
				r.fail("503", "this sluice process is stopping; retry shortly", nil)
			}
		})
		if err := svc.AddEndpoint(ep.name, handler, micro.WithEndpointSubject(ep.subject)); err != nil {
			return fmt.Errorf("serving %s: %w", ep.subject, err)
		}
	}
	ticker := time.NewTicker(s.cfg.SweepInterval)
	defer ticker.Stop()
	for {
		s.sweep(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// sweep removes the sessions past their expiry, and logs a failure: the
// next sweep tries again.
func (s *Service) sweep(ctx context.Context) {
	removed, err := s.sessions.RemoveExpiredAppSessions(ctx)
	if err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("removing expired application sessions", "error", err, "removed", removed)
		return
	}
	if removed > 0 {
		s.cfg.Logger.Debug("removed expired application sessions", "removed", removed)
	}
}

// answer handles a request with handle, and answers with the session or
// the error.
func (s *Service) answer(ctx context.Context, req request, handle func(context.Context, []byte) (store.AppSession, error)) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	var (
		v   store.AppSession
		err error = errTooLarge
	)
	if len(req.data) <= appsession.MaxRequest {
		v, err = handle(ctx, req.data)
	}
	if err == nil {
		req.respond(appsession.Session{ID: v.ID, AccountID: v.AccountID, CreatedAt: v.CreatedAt, LastActive: v.LastActive, ExpiresAt: v.ExpiresAt})
		return
	}
	code, msg, details := s.errorAnswer(req.subject, err)
	req.fail(code, msg, details)
}

// request is a request received, answered on its reply subject as the
// micro package answers: a JSON body, or an error in the headers
// appsession.HeaderErrorCode and appsession.HeaderError.
type request struct {
	nc             *nats.Conn
	subject, reply string
	data           []byte
}

// respond answers with v in JSON. A failure to publish is the
// requester's timeout.
func (r request) respond(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		r.fail("500", "encoding the answer: "+err.Error(), nil)
		return
	}
	_ = r.nc.Publish(r.reply, data)
}

// fail answers with an error: its code, message and body.
func (r request) fail(code, msg string, details []byte) {
	_ = r.nc.PublishMsg(&nats.Msg{Subject: r.reply, Data: details, Header: nats.Header{
		appsession.HeaderErrorCode: {code},
		appsession.HeaderError:     {msg},
	}})
}

var errTooLarge = &badRequest{msg: fmt.Sprintf("the request is over %d bytes", appsession.MaxRequest)}

// badRequest is a request that is not what its subject takes.
type badRequest struct{ field, msg string }

func (e *badRequest) Error() string { return e.msg }

// errorAnswer returns the code, message and details of an error's answer.
func (s *Service) errorAnswer(subject string, err error) (code, msg string, details []byte) {
	var (
		invalid *store.ValidationError
		bad     *badRequest
	)
	switch {
	case errors.As(err, &invalid):
		details, _ = json.Marshal(map[string]string{"field": invalid.Field})
		return "400", invalid.Error(), details
	case errors.As(err, &bad):
		details, _ = json.Marshal(map[string]string{"field": bad.field})
		return "400", bad.msg, details
	case errors.Is(err, store.ErrNotFound):
		return "404", "the session has ended (revoked, ended, evicted or expired), or the account has no such session: log the user out", nil
	case errors.Is(err, store.ErrConflict):
		return "409", "the session kept changing under concurrent requests; send the request again", nil
	}
	s.cfg.Logger.Error("application session request failed", "subject", subject, "error", err)
	return "503", "sluice cannot reach its store right now; retry shortly", nil
}

func (s *Service) record(ctx context.Context, data []byte) (store.AppSession, error) {
	var in appsession.RecordRequest
	if err := decode(data, &in); err != nil {
		return store.AppSession{}, err
	}
	if err := checkAccount(in.AccountID); err != nil {
		return store.AppSession{}, err
	}
	b := in.BrowserSession
	a, err := s.sessions.RecordAppSession(ctx, in.AccountID, store.AppSession{
		PublicURL: in.PublicURL,
		BrowserSession: store.BrowserSession{
			UserAgent: store.UserAgent(b.UserAgent),
			IPAddress: b.IPAddress,
			Location:  store.Location(b.Location),
		},
		ApplicationUserID: in.ApplicationUserID,
		EndpointID:        in.EndpointID,
		EdgeID:            in.EdgeID,
		RouteID:           in.RouteID,
		ExpiresAt:         in.ExpiresAt,
	})
	if errors.Is(err, store.ErrNotFound) {
		// The only thing a record can miss is its account.
		return store.AppSession{}, &badRequest{field: "account_id", msg: fmt.Sprintf("account_id %q names no account", in.AccountID)}
	}
	return a, err
}

func (s *Service) refresh(ctx context.Context, data []byte) (store.AppSession, error) {
	var in appsession.RefreshRequest
	if err := decode(data, &in); err != nil {
		return store.AppSession{}, err
	}
	if err := checkAccount(in.AccountID); err != nil {
		return store.AppSession{}, err
	}
	return s.sessions.RefreshAppSession(ctx, in.AccountID, in.ID, in.LastActive, in.ExpiresAt)
}

func (s *Service) end(ctx context.Context, data []byte) (store.AppSession, error) {
	var in appsession.EndRequest
	if err := decode(data, &in); err != nil {
		return store.AppSession{}, err
	}
	if err := checkAccount(in.AccountID); err != nil {
		return store.AppSession{}, err
	}
	return s.sessions.DeleteAppSession(ctx, in.AccountID, in.ID)
}

// checkAccount returns a *badRequest unless id is an account id.
func checkAccount(id string) error {
	if schemas.CheckID(schemas.PrefixAccount, id) != nil {
		return &badRequest{field: "account_id", msg: fmt.Sprintf("account_id must be %s and a KSUID, and is %q", schemas.PrefixAccount, schemas.Clip(id))}
	}
	return nil
}

// decode decodes one JSON object into v, refusing unknown fields, with a
// *badRequest naming the field at fault, when it can. It refuses, as
// ingest and the management API do, what encoding/json would read other
// than as sent (schemas.CheckJSON): a member twice, of which it would take
// the last (an account_id twice would pick the account from the second),
// invalid UTF-8 and lone surrogates, which it would read as U+FFFD; and a
// member named as a field but for case, which it would take for the
// field.
func decode(data []byte, v any) error {
	const notTheObject = "the request is not the JSON object of its subject: "
	if err := schemas.CheckJSON(data); err != nil {
		var field *schemas.FieldError
		if errors.As(err, &field) {
			return &badRequest{field: field.Path, msg: notTheObject + field.Error()}
		}
		return &badRequest{msg: notTheObject + err.Error()}
	}
	if err := exactNames(data, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	field := ""
	if errors.As(err, &typeErr) {
		field = typeErr.Field
	}
	return &badRequest{field: field, msg: notTheObject + err.Error()}
}

// exactNames returns a *badRequest for the first member of the JSON
// object data, to be decoded into a struct of type t, or of the objects
// in it, that is named as a field of the struct but for case. It leaves
// every other error to decoding.
func exactNames(data []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil {
		return nil
	}
	fields := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name != "-" && name != "" {
			fields[name] = f.Type
		}
	}
	for key, value := range members {
		if ft, ok := fields[key]; ok {
			if err := exactNames(value, ft, path+key+"."); err != nil {
				return err
			}
			continue
		}
		for name := range fields {
			if strings.EqualFold(name, key) {
				return &badRequest{field: path + key, msg: fmt.Sprintf("the request is not the JSON object of its subject: member %q is named as field %q but for case; names are case-sensitive, send %q once", path+key, path+name, name)}
			}
		}
	}
	return nil
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
