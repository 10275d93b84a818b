package store

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/schemas"
)

// TunnelSession is an agent's session with an edge (ts_...): the edge
// records it when the agent authenticates, and deletes it when the agent
// goes. The API lists and shows it, and stops it (StopTunnelSession); it
// never shows EdgeID nor StopRequested. One whose edge has not heartbeaten
// for EdgeTimeout is hidden, and RemoveDeadEdgeRecords removes it.
type TunnelSession struct {
	// ID is "ts_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account of the credential the agent connected
	// with.
	AccountID string `json:"account_id"`
	// AgentVersion is the version the agent gave.
	AgentVersion string `json:"agent_version"`
	// CredentialID is the credential the agent connected with (cr_...).
	CredentialID string `json:"credential_id"`
	// IP is the agent's address, IPv4 or IPv6.
	IP string `json:"ip"`
	// Metadata is what the agent sent, cut to MaxMetadata bytes.
	Metadata string `json:"metadata"`
	// OS, Arch, Region and UserAgent are what the agent gave of itself.
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	Region string `json:"region"`
	// Transport is how the agent is connected, "muxado".
	Transport string `json:"transport"`
	UserAgent string `json:"user_agent"`
	// StartedAt is when the session was recorded, in UTC.
	StartedAt time.Time `json:"started_at"`
	// EdgeID is the edge process holding the session; never in API
	// answers.
	EdgeID string `json:"edge_id"`
	// StopRequested is set by StopTunnelSession: the edge holding the
	// session ends it (WatchEdge tells it). Never in API answers.
	StopRequested bool `json:"stop_requested"`
}

// LogValue returns the session as slog shows it, without Metadata.
func (t TunnelSession) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", t.ID),
		slog.String("account_id", t.AccountID),
		slog.String("credential_id", t.CredentialID),
		slog.String("edge_id", t.EdgeID),
		slog.Time("started_at", t.StartedAt),
	)
}

// The bounds of what an agent says of itself, in bytes.
const (
	// MaxAgentField is the longest AgentVersion, OS, Arch, Region and
	// Transport.
	MaxAgentField = 255
	// MaxAgentUserAgent is the longest UserAgent.
	MaxAgentUserAgent = 1024
)

// cutText returns v cut to at most max bytes, on a character boundary.
func cutText(v string, max int) string {
	if len(v) <= max {
		return v
	}
	v = v[:max]
	for len(v) > 0 && !utf8.ValidString(v) {
		v = v[:len(v)-1]
	}
	return v
}

// check normalizes the session and returns a *ValidationError for the
// first field that breaks a rule, or nil.
func (t *TunnelSession) check() error {
	if err := checkEdgeID(t.EdgeID); err != nil {
		return err
	}
	if schemas.CheckID(schemas.PrefixCredential, t.CredentialID) != nil {
		return invalid("credential_id", "must be the id of a credential of the account (cr_...), and is %q", schemas.Clip(t.CredentialID))
	}
	addr, err := netip.ParseAddr(t.IP)
	if err != nil || addr.Zone() != "" {
		return invalid("ip", "must be an IPv4 or IPv6 address without a zone, and is %q", schemas.Clip(t.IP))
	}
	t.IP = addr.Unmap().String()
	for _, f := range []struct {
		field, value string
		max          int
	}{
		{"agent_version", t.AgentVersion, MaxAgentField},
		{"os", t.OS, MaxAgentField},
		{"arch", t.Arch, MaxAgentField},
		{"region", t.Region, MaxAgentField},
		{"transport", t.Transport, MaxAgentField},
		{"user_agent", t.UserAgent, MaxAgentUserAgent},
	} {
		if err := checkPlainText(f.field, f.value, f.max); err != nil {
			return err
		}
	}
	if !utf8.ValidString(t.Metadata) || len(t.Metadata) > MaxMetadata {
		return invalid("metadata", "must be UTF-8 of at most %d bytes", MaxMetadata)
	}
	return nil
}

// tunnelSessions declares tunnel sessions (see family). The edge writes
// them, without audit events; the API only reads and stops them. A
// session's endpoints are deleted in the batch that deletes it.
var tunnelSessions = family[TunnelSession]{
	kind:   tunnelSessionsKind,
	prefix: resource.TunnelSessions().Prefix,
	noun:   "tunnel session",
	meta:   func(t *TunnelSession) (*string, *string, *time.Time) { return &t.ID, &t.AccountID, &t.StartedAt },
	input: func(in TunnelSession) TunnelSession {
		in.ID, in.AccountID, in.StartedAt, in.StopRequested = "", "", time.Time{}, false
		in.Metadata = cutText(strings.ToValidUTF8(in.Metadata, "\uFFFD"), MaxMetadata)
		return in
	},
	check: func(_ context.Context, _ *Store, t *TunnelSession) error { return t.check() },
	limit: LimitTunnelSessions,
	max:   func(l Limits) int { return l.TunnelSessions },
	cascade: func(ctx context.Context, s *Store, t TunnelSession) ([]write, error) {
		return s.deleteEndpointsOf(ctx, t)
	},
	hidden: hiddenOffEdge(func(t TunnelSession) string { return t.EdgeID }),
}

// CreateTunnelSession records a tunnel session of the account with the
// fields of in the edge knows; the store sets ID and StartedAt, and
// clears StopRequested. Metadata is cut to MaxMetadata bytes. The edge
// EdgeID must have heartbeaten (HeartbeatEdge) for the session to be seen.
//
// It returns a *ValidationError (matching ErrInvalid) for a field that
// breaks a rule, a *LimitError (matching ErrLimit) if the account has
// Limits.TunnelSessions, or an error wrapping ErrNotFound if the account
// does not exist.
func (s *Store) CreateTunnelSession(ctx context.Context, accountID string, in TunnelSession) (TunnelSession, error) {
	return tunnelSessions.create(ctx, s, accountID, in, nil)
}

// GetTunnelSession returns the tunnel session of the account with the id.
// It returns an error wrapping ErrNotFound if the account has no such
// session, including when another account has, or its edge is gone.
func (s *Store) GetTunnelSession(ctx context.Context, accountID, id string) (TunnelSession, error) {
	return tunnelSessions.get(ctx, s, accountID, id)
}

// ListTunnelSessions returns a page of the account's tunnel sessions whose
// edge is alive, newest first (by id), and the BeforeID of the next page,
// "" after the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListTunnelSessions(ctx context.Context, accountID string, page Page) ([]TunnelSession, string, error) {
	return tunnelSessions.list(ctx, s, accountID, page)
}

// StopTunnelSession asks the edge holding the tunnel session of the
// account with the id to end it: it sets StopRequested, which WatchEdge
// reports. It returns an error wrapping ErrNotFound if the account has no
// such session.
func (s *Store) StopTunnelSession(ctx context.Context, accountID, id string) error {
	_, err := tunnelSessions.update(ctx, s, accountID, id, func(t *TunnelSession) error {
		t.StopRequested = true
		return nil
	}, nil)
	return err
}

// DeleteTunnelSession deletes the tunnel session of the account with the
// id, and its endpoints, in one write: the edge calls it when the agent's
// session ends. It returns an error wrapping ErrNotFound if the account
// has no such session.
func (s *Store) DeleteTunnelSession(ctx context.Context, accountID, id string) error {
	_, err := tunnelSessions.remove(ctx, s, accountID, id, nil, nil)
	return err
}
