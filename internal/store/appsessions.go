package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/text/language"

	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/schemas"
)

// AppSession is an application session (specification sections 2.7 and
// 4.3a): an end user's login to an endpoint the edge serves, which the
// edge records, refreshes and ends, and which the account lists and
// revokes through the API. It ends at ExpiresAt: from then on the store
// treats it as absent, and RemoveExpiredAppSessions removes it.
type AppSession struct {
	// ID is "apps_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account whose endpoint the user logged in to.
	AccountID string `json:"account_id"`
	// CreatedAt is when the session was recorded, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// PublicURL is the URL of the hostport the endpoint serves, such as
	// https://app.example.com: http or https, a host and an optional
	// port, no path.
	PublicURL      string         `json:"public_url"`
	BrowserSession BrowserSession `json:"browser_session"`
	// ApplicationUserID is the user's id, "usr_" and a KSUID.
	ApplicationUserID string `json:"application_user_id"`
	// EndpointID is the endpoint's, "ep_" and a KSUID.
	EndpointID string `json:"endpoint_id"`
	// EdgeID and RouteID are the HTTPS edge and route that served the
	// login, or both "" for an agent-initiated endpoint.
	EdgeID  string `json:"edge_id,omitempty"`
	RouteID string `json:"route_id,omitempty"`
	// LastActive is when the user was last seen, by the edge; never
	// before CreatedAt.
	LastActive time.Time `json:"last_active"`
	// ExpiresAt is when the session ends.
	ExpiresAt time.Time `json:"expires_at"`
}

// BrowserSession is the browser of an application session.
type BrowserSession struct {
	UserAgent UserAgent `json:"user_agent"`
	// IPAddress is the client's address, IPv4 or IPv6, as netip writes
	// it.
	IPAddress string   `json:"ip_address"`
	Location  Location `json:"location"`
}

// UserAgent is the User-Agent header of a browser session and what the
// edge made of it. Every field is optional.
type UserAgent struct {
	Raw            string `json:"raw"`
	BrowserName    string `json:"browser_name"`
	BrowserVersion string `json:"browser_version"`
	DeviceType     string `json:"device_type"`
	OSName         string `json:"os_name"`
	OSVersion      string `json:"os_version"`
}

// Location is where the client's address is, as far as the edge knows.
// Zero when it does not.
type Location struct {
	// CountryCode is an ISO 3166-1 alpha-2 code, upper case, or "".
	CountryCode     string  `json:"country_code"`
	Latitude        float64 `json:"latitude"`
	Longitude       float64 `json:"longitude"`
	LatLongRadiusKm uint64  `json:"lat_long_radius_km"`
}

// The bounds of an application session's fields.
const (
	// MaxAppSessionLifetime is the furthest ExpiresAt may be from the
	// time it is written.
	MaxAppSessionLifetime = 30 * 24 * time.Hour
	// MaxPublicURL is the longest PublicURL, in bytes: a scheme, a
	// domain of at most 253 bytes and a port.
	MaxPublicURL = 300
	// MaxUserAgent is the longest UserAgent.Raw, in bytes; MaxUserAgentPart
	// the longest of its other fields.
	MaxUserAgent     = 1024
	MaxUserAgentPart = 255
	// MaxLocationRadiusKm is the largest LatLongRadiusKm: half the
	// Earth's circumference covers every place.
	MaxLocationRadiusKm = 20038
	// clockSkew is how far in the future a LastActive the edge gives may
	// be, by the store's clock.
	clockSkew = time.Minute
)

// check normalizes the session and returns a *ValidationError for the
// first field that breaks a rule, or nil. now is the store's clock.
func (a *AppSession) check(now time.Time) error {
	if err := checkPublicURL(a.PublicURL); err != nil {
		return err
	}
	if err := a.BrowserSession.check(); err != nil {
		return err
	}
	for _, ref := range []struct {
		field, prefix, id string
		optional          bool
	}{
		{"application_user.id", schemas.PrefixAppUser, a.ApplicationUserID, false},
		{"endpoint.id", schemas.PrefixEndpoint, a.EndpointID, false},
		{"edge.id", schemas.PrefixHTTPSEdge, a.EdgeID, true},
		{"route.id", schemas.PrefixHTTPSEdgeRoute, a.RouteID, true},
	} {
		if ref.optional && ref.id == "" {
			continue
		}
		if err := schemas.CheckID(ref.prefix, ref.id); err != nil {
			return invalid(ref.field, "must be %s and a KSUID, and is %q", ref.prefix, schemas.Clip(ref.id))
		}
	}
	if (a.EdgeID == "") != (a.RouteID == "") {
		return invalid("route.id", "and edge.id go together: give both for an endpoint of an HTTPS edge, neither for an agent-initiated one")
	}
	if a.LastActive.Before(a.CreatedAt) {
		return invalid("last_active", "must not be before created_at (%s)", a.CreatedAt.UTC().Format(schemas.TimeLayout))
	}
	if a.LastActive.After(now.Add(clockSkew)) {
		return invalid("last_active", "must not be in the future, and is %s", a.LastActive.UTC().Format(schemas.TimeLayout))
	}
	if !a.ExpiresAt.After(now) {
		return invalid("expires_at", "must be in the future, and is %s", a.ExpiresAt.UTC().Format(schemas.TimeLayout))
	}
	if a.ExpiresAt.After(now.Add(MaxAppSessionLifetime)) {
		return invalid("expires_at", "must be at most %s from now, and is %s", MaxAppSessionLifetime, a.ExpiresAt.UTC().Format(schemas.TimeLayout))
	}
	a.LastActive, a.ExpiresAt = a.LastActive.UTC().Truncate(time.Millisecond), a.ExpiresAt.UTC().Truncate(time.Millisecond)
	return nil
}

// checkPublicURL checks that u is an http or https URL of a host and
// optional port, and nothing else.
func checkPublicURL(u string) error {
	const field = "public_url"
	if u == "" {
		return invalid(field, "is required: the URL of the hostport the endpoint serves, such as https://app.example.com")
	}
	if len(u) > MaxPublicURL {
		return invalid(field, "must be at most %d bytes, and is %d", MaxPublicURL, len(u))
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Hostname() == "" || !validPort(p.Port()) || p.User != nil ||
		(p.Path != "" && p.Path != "/") || p.RawQuery != "" || p.Fragment != "" || p.Opaque != "" || strings.ContainsAny(u, " \t\r\n") {
		return invalid(field, "must be an http or https URL of a host and optional port, such as https://app.example.com:443, and is %q", schemas.Clip(u))
	}
	return nil
}

// validPort reports whether port, a URL's, is absent or from 1 to 65535.
func validPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n > 0
}

func (b *BrowserSession) check() error {
	ua := &b.UserAgent
	for _, part := range []struct {
		field string
		value string
		max   int
	}{
		{"browser_session.user_agent.raw", ua.Raw, MaxUserAgent},
		{"browser_session.user_agent.browser_name", ua.BrowserName, MaxUserAgentPart},
		{"browser_session.user_agent.browser_version", ua.BrowserVersion, MaxUserAgentPart},
		{"browser_session.user_agent.device_type", ua.DeviceType, MaxUserAgentPart},
		{"browser_session.user_agent.os_name", ua.OSName, MaxUserAgentPart},
		{"browser_session.user_agent.os_version", ua.OSVersion, MaxUserAgentPart},
	} {
		if err := checkPlainText(part.field, part.value, part.max); err != nil {
			return err
		}
	}
	addr, err := netip.ParseAddr(b.IPAddress)
	if err != nil || addr.Zone() != "" {
		return invalid("browser_session.ip_address", "must be an IPv4 or IPv6 address without a zone, and is %q", schemas.Clip(b.IPAddress))
	}
	b.IPAddress = addr.Unmap().String()
	return b.Location.check()
}

// check normalizes l (a country code in upper case, a latitude or
// longitude of -0 as 0) and returns a *ValidationError for the first
// field that breaks a rule, or nil.
func (l *Location) check() error {
	l.Latitude, l.Longitude = positiveZero(l.Latitude), positiveZero(l.Longitude)
	if l.CountryCode != "" {
		code := strings.ToUpper(l.CountryCode)
		region, err := language.ParseRegion(code)
		if len(code) != 2 || err != nil || !region.IsCountry() || region.String() != code {
			return invalid("browser_session.location.country_code", "must be an ISO 3166-1 alpha-2 country code, such as DE, or empty, and is %q", schemas.Clip(l.CountryCode))
		}
		l.CountryCode = code
	}
	if math.IsNaN(l.Latitude) || l.Latitude < -90 || l.Latitude > 90 {
		return invalid("browser_session.location.latitude", "must be from -90 to 90, and is %v", l.Latitude)
	}
	if math.IsNaN(l.Longitude) || l.Longitude < -180 || l.Longitude > 180 {
		return invalid("browser_session.location.longitude", "must be from -180 to 180, and is %v", l.Longitude)
	}
	if l.LatLongRadiusKm > MaxLocationRadiusKm {
		return invalid("browser_session.location.lat_long_radius_km", "must be at most %d, and is %d", MaxLocationRadiusKm, l.LatLongRadiusKm)
	}
	return nil
}

// checkPlainText checks that v is at most max bytes of UTF-8 without
// control characters.
func checkPlainText(field, v string, max int) error {
	if len(v) > max {
		return invalid(field, "must be at most %d bytes, and is %d", max, len(v))
	}
	if !utf8.ValidString(v) {
		return invalid(field, "must be UTF-8")
	}
	if i := strings.IndexFunc(v, unicode.IsControl); i >= 0 {
		return invalid(field, "must not contain control characters, and has one at byte %d", i)
	}
	return nil
}

// appSessions declares application sessions (see family). The API shows,
// lists and revokes them; the edge records, refreshes and ends them
// through RecordAppSession, RefreshAppSession and DeleteAppSession. One
// past its ExpiresAt is hidden.
var appSessions = family[AppSession]{
	kind:   "app_sessions",
	prefix: resource.AppSessions().Prefix,
	noun:   "application session",
	meta:   func(a *AppSession) (*string, *string, *time.Time) { return &a.ID, &a.AccountID, &a.CreatedAt },
	input: func(in AppSession) AppSession {
		in.ID, in.AccountID, in.CreatedAt = "", "", time.Time{}
		return in
	},
	check: func(_ context.Context, s *Store, a *AppSession) error {
		if a.LastActive.IsZero() {
			a.LastActive = a.CreatedAt // a new session: active as it is made
		}
		return a.check(s.now())
	},
	limit: LimitAppSessions,
	max:   func(l Limits) int { return l.AppSessions },
	hidden: func(_ context.Context, s *Store) (func(AppSession) bool, error) {
		now := s.now()
		return func(a AppSession) bool { return !a.ExpiresAt.After(now) }, nil
	},
}

// recordAttempts is how many times RecordAppSession makes room and tries
// again when concurrent records fill the room it made.
const recordAttempts = 5

// RecordAppSession records a new application session of the account, with
// the fields of in that the edge knows: PublicURL, BrowserSession, the
// ids it refers to and ExpiresAt. The store sets ID, AccountID, CreatedAt
// and LastActive (now).
//
// When the account has Limits.AppSessions sessions, the new session takes
// the place of the least recently active one, which ends as a revoked one
// does: the newest login always gets in (a hostile end user logging in
// again and again cannot lock every other user of the account out; at
// worst it makes the others log in again).
//
// It returns a *ValidationError (matching ErrInvalid) for a field that
// breaks a rule, an error wrapping ErrNotFound if the account does not
// exist, or one saying what failed.
func (s *Store) RecordAppSession(ctx context.Context, accountID string, in AppSession) (AppSession, error) {
	in.LastActive = time.Time{}
	for range recordAttempts {
		created, err := appSessions.create(ctx, s, accountID, in, nil)
		if !errors.Is(err, ErrLimit) {
			return created, err
		}
		if err := s.evictAppSession(ctx, accountID); err != nil {
			return AppSession{}, err
		}
	}
	return AppSession{}, fmt.Errorf("recording an application session: other records kept taking the room made: %w", ErrConflict)
}

// evictAppSession deletes an expired session of the account, or else the
// least recently active session of the application user with the most
// sessions: a flood of one user's logins (a user whom the endpoint's
// rules deny after the login, say) takes that user's own sessions, not
// the other users'.
func (s *Store) evictAppSession(ctx context.Context, accountID string) error {
	all, err := listRecords[AppSession](ctx, s, appSessions.filter(accountID))
	if err != nil {
		return fmt.Errorf("listing application sessions: %w", err)
	}
	if len(all) == 0 {
		return nil // creates under way hold the room: try again
	}
	now := s.now()
	perUser := make(map[string]int)
	for _, a := range all {
		perUser[a.ApplicationUserID]++
	}
	oldest := slices.MinFunc(all, func(a, b AppSession) int {
		if aGone, bGone := !a.ExpiresAt.After(now), !b.ExpiresAt.After(now); aGone != bGone {
			return cmpActive(a, b, now) // the expired one first
		}
		if c := cmp.Compare(perUser[b.ApplicationUserID], perUser[a.ApplicationUserID]); c != 0 {
			return c
		}
		return cmpActive(a, b, now)
	})
	return s.evict(ctx, oldest)
}

// errActiveMeanwhile refuses the eviction of a session refreshed since it
// was read.
var errActiveMeanwhile = errors.New("the session was refreshed since it was read")

// evict deletes the session oldest, as it was read, unless it has been
// refreshed since: its user is active, and the record that makes room
// reads the sessions again.
func (s *Store) evict(ctx context.Context, oldest AppSession) error {
	_, err := appSessions.remove(ctx, s, oldest.AccountID, oldest.ID, nil, func(now AppSession) error {
		if !now.LastActive.Equal(oldest.LastActive) || !now.ExpiresAt.Equal(oldest.ExpiresAt) {
			return refusal{errActiveMeanwhile}
		}
		return nil
	})
	switch {
	case errors.Is(err, errActiveMeanwhile):
		return nil
	case errors.Is(err, ErrNotFound):
		return s.removeExpired(ctx, oldest) // expired, or another writer took it
	}
	return err
}

// cmpActive orders sessions expired first, then by LastActive, then by id.
func cmpActive(a, b AppSession, now time.Time) int {
	aGone, bGone := !a.ExpiresAt.After(now), !b.ExpiresAt.After(now)
	switch {
	case aGone && !bGone:
		return -1
	case bGone && !aGone:
		return 1
	}
	if c := a.LastActive.Compare(b.LastActive); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// GetAppSession returns the application session of the account with the
// id. It returns an error wrapping ErrNotFound if the account has no such
// session, including when another account has, or when it has expired or
// been deleted.
func (s *Store) GetAppSession(ctx context.Context, accountID, id string) (AppSession, error) {
	return appSessions.get(ctx, s, accountID, id)
}

// ListAppSessions returns a page of the account's application sessions
// that have not expired, newest first (by id), and the BeforeID of the
// next page, "" after the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListAppSessions(ctx context.Context, accountID string, page Page) ([]AppSession, string, error) {
	return appSessions.list(ctx, s, accountID, page)
}

// RefreshAppSession records activity of the account's session id: its
// LastActive becomes lastActive (zero: now), unless it was later already,
// and, when expiresAt is not zero, its ExpiresAt becomes expiresAt.
//
// It returns the session written, a *ValidationError (matching
// ErrInvalid) for a time that breaks a rule, or an error wrapping
// ErrNotFound if the account has no such session: it was revoked, ended,
// evicted or has expired, and the user must log in again.
func (s *Store) RefreshAppSession(ctx context.Context, accountID, id string, lastActive, expiresAt time.Time) (AppSession, error) {
	if lastActive.IsZero() {
		lastActive = s.now()
	}
	return appSessions.update(ctx, s, accountID, id, func(a *AppSession) error {
		if lastActive.After(a.LastActive) {
			a.LastActive = lastActive
		}
		if !expiresAt.IsZero() {
			a.ExpiresAt = expiresAt
		}
		return nil
	}, nil)
}

// DeleteAppSession deletes (revokes, or ends) the application session of
// the account with the id, and returns it as it was: a refresh of it fails
// from then on. It returns an error wrapping ErrNotFound if the account
// has no such session, or it has expired.
func (s *Store) DeleteAppSession(ctx context.Context, accountID, id string, opts ...WriteOption) (AppSession, error) {
	return appSessions.remove(ctx, s, accountID, id, opts, nil)
}

// RemoveExpiredAppSessions deletes every application session, of every
// account, past its ExpiresAt by the store's clock, and returns how many
// it deleted. A session refreshed meanwhile is kept (each delete is a
// compare-and-swap on the revision read). Several processes may run it at
// once.
func (s *Store) RemoveExpiredAppSessions(ctx context.Context) (int, error) {
	removed := 0
	var errs []error
	// Each entry is handled as it is read, so that the sweep holds one
	// session at a time rather than those of every account.
	err := s.eachEntry(ctx, appSessions.kind+".>", func(entry jetstream.KeyValueEntry) {
		var a AppSession
		if err := json.Unmarshal(entry.Value(), &a); err != nil {
			errs = append(errs, fmt.Errorf("decoding %s: %w", entry.Key(), err))
			return
		}
		if a.ExpiresAt.After(s.now()) {
			return
		}
		err := s.kv.Delete(ctx, entry.Key(), jetstream.LastRevision(entry.Revision()))
		switch {
		case err == nil:
			removed++
		case !isRevisionMismatch(err):
			errs = append(errs, fmt.Errorf("deleting %s: %w", entry.Key(), err))
		}
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing application sessions: %w", err))
	}
	return removed, errors.Join(errs...)
}

// removeExpired deletes the expired session a, unless it changed since it
// was read.
func (s *Store) removeExpired(ctx context.Context, a AppSession) error {
	key := appSessions.key(a.AccountID, a.ID)
	entry, err := s.kv.Get(ctx, key)
	if err != nil {
		return nil // gone already
	}
	var latest AppSession
	if err := json.Unmarshal(entry.Value(), &latest); err != nil || latest.ExpiresAt.After(s.now()) {
		return nil // refreshed meanwhile: not expired
	}
	if err := s.kv.Delete(ctx, key, jetstream.LastRevision(entry.Revision())); err != nil && !isRevisionMismatch(err) {
		return fmt.Errorf("deleting %s: %w", key, err)
	}
	return nil
}

// isRevisionMismatch reports whether err is a compare-and-swap conflict of
// a key-value write: the key changed since it was read.
func isRevisionMismatch(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jsWrongLastSequence || api.ErrorCode == jsWrongLastSequenceConstant)
}
