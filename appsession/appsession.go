package appsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/apiwire"
)

// The subjects sluice answers on, one per call.
const (
	SubjectRecord  = "sluice.app_sessions.record"
	SubjectRefresh = "sluice.app_sessions.refresh"
	SubjectEnd     = "sluice.app_sessions.end"
)

// The headers of an error answer, as the nats.go micro package writes
// them.
const (
	HeaderErrorCode = "Nats-Service-Error-Code"
	HeaderError     = "Nats-Service-Error"
)

// MaxRequest is the largest request body sluice takes, in bytes.
const MaxRequest = 16 << 10

// DefaultTimeout bounds a call whose ctx has no deadline.
const DefaultTimeout = 5 * time.Second

// Sentinel errors of the calls.
var (
	// ErrEnded means the session does not exist any more: it was
	// revoked, ended, evicted or has expired (or never was, or is
	// another account's). The edge should log the user out.
	ErrEnded = errors.New("appsession: the session has ended")
	// ErrInvalid is matched by an *InvalidError.
	ErrInvalid = errors.New("appsession: invalid request")
)

// RecordRequest is the body of a record: a new session of the account.
// sluice sets its id, created_at and last_active (now).
type RecordRequest struct {
	// AccountID is the account whose endpoint the user logged in to.
	AccountID string `json:"account_id"`
	// PublicURL is the URL of the hostport the endpoint serves: http or
	// https, a host and an optional port, no path; at most 300 bytes.
	PublicURL string `json:"public_url"`
	// BrowserSession is the user's browser: an IP address (required),
	// the user agent (raw at most 1024 bytes, its other fields at most
	// 255, UTF-8 without control characters) and a location (an ISO
	// 3166-1 alpha-2 country code or "", latitude -90 to 90, longitude
	// -180 to 180, lat_long_radius_km at most 20038).
	BrowserSession apiwire.BrowserSession `json:"browser_session"`
	// ApplicationUserID ("usr_" and a KSUID) and EndpointID ("ep_" and a
	// KSUID) are required.
	ApplicationUserID string `json:"application_user_id"`
	EndpointID        string `json:"endpoint_id"`
	// EdgeID ("edghts_...") and RouteID ("edghtsrt_...") go together:
	// both for an endpoint of an HTTPS edge, neither for an
	// agent-initiated one.
	EdgeID  string `json:"edge_id,omitempty"`
	RouteID string `json:"route_id,omitempty"`
	// ExpiresAt is when the session ends: in the future, at most 30 days
	// from now.
	ExpiresAt time.Time `json:"expires_at"`
}

// RefreshRequest is the body of a refresh: activity of a session.
type RefreshRequest struct {
	AccountID string `json:"account_id"`
	ID        string `json:"id"`
	// LastActive is when the user was last seen; zero: now. It never
	// moves last_active back, and may not be in the future.
	LastActive time.Time `json:"last_active,omitzero"`
	// ExpiresAt, unless zero, is the session's new end: in the future, at
	// most 30 days from now.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// EndRequest is the body of an end: the user logged out.
type EndRequest struct {
	AccountID string `json:"account_id"`
	ID        string `json:"id"`
}

// Session is a session as recorded: the answer to a record, a refresh
// and an end (as it was).
type Session struct {
	ID         string    `json:"id"` // "apps_" and a KSUID
	AccountID  string    `json:"account_id"`
	CreatedAt  time.Time `json:"created_at"`
	LastActive time.Time `json:"last_active"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// Client records, refreshes and ends sessions over a NATS connection. It
// is safe for concurrent use.
type Client struct {
	nc *nats.Conn
}

// New returns a Client sending its requests over nc.
func New(nc *nats.Conn) *Client { return &Client{nc: nc} }

// Record records a new session. It returns an *InvalidError (matching
// ErrInvalid) naming the first field that breaks a rule (an account that
// does not exist is one), or a *ServiceError.
func (c *Client) Record(ctx context.Context, in RecordRequest) (Session, error) {
	return c.call(ctx, SubjectRecord, in)
}

// Refresh records activity of a session, and moves its end when
// in.ExpiresAt is set. It returns ErrEnded if the session has ended, an
// *InvalidError (matching ErrInvalid) for a time that breaks a rule, or a
// *ServiceError.
func (c *Client) Refresh(ctx context.Context, in RefreshRequest) (Session, error) {
	return c.call(ctx, SubjectRefresh, in)
}

// End ends a session, as when the user logs out; a refresh of it fails
// from then on. It returns ErrEnded if the session had ended already, or
// a *ServiceError.
func (c *Client) End(ctx context.Context, in EndRequest) error {
	_, err := c.call(ctx, SubjectEnd, in)
	return err
}

func (c *Client) call(ctx context.Context, subject string, body any) (Session, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return Session{}, fmt.Errorf("encoding the request: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	reply, err := c.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return Session{}, fmt.Errorf("requesting %s: %w", subject, err)
	}
	if err := replyError(reply); err != nil {
		return Session{}, err
	}
	var s Session
	if err := json.Unmarshal(reply.Data, &s); err != nil {
		return Session{}, fmt.Errorf("decoding the answer on %s: %w", subject, err)
	}
	return s, nil
}

// replyError returns the error an answer carries, or nil.
func replyError(reply *nats.Msg) error {
	code := reply.Header.Get(HeaderErrorCode)
	if code == "" {
		return nil
	}
	msg := reply.Header.Get(HeaderError)
	switch code {
	case "404":
		return fmt.Errorf("%w: %s", ErrEnded, msg)
	case "400":
		var details struct {
			Field string `json:"field"`
		}
		_ = json.Unmarshal(reply.Data, &details)
		return &InvalidError{Field: details.Field, Msg: msg}
	}
	status, _ := strconv.Atoi(code)
	return &ServiceError{Code: status, Msg: msg}
}

// InvalidError is a request refused because a field breaks a rule.
type InvalidError struct {
	// Field is the JSON path of the field, such as
	// browser_session.ip_address.
	Field string
	// Msg says what is wrong and what is allowed.
	Msg string
}

func (e *InvalidError) Error() string { return "appsession: " + e.Msg }

// Is reports whether target is ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// ServiceError is any other error sluice answered with: 409 (the session
// kept changing under concurrent requests; send it again), 429 (the
// account has as many requests under way as sluice answers at once for
// one account; retry shortly) or 503 (sluice's store is unreachable, or
// the process is stopping; retry), or 500.
type ServiceError struct {
	Code int
	Msg  string
}

func (e *ServiceError) Error() string {
	return fmt.Sprintf("appsession: %d: %s", e.Code, e.Msg)
}
