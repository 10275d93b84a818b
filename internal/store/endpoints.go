package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/schemas"
)

// Endpoint is a public address an agent's tunnel session serves (ep_...):
// the edge records it when the agent binds it, and deletes it when the
// agent unbinds it or its session ends. The API lists and shows it; it
// never shows EdgeID. One whose edge has not heartbeaten for EdgeTimeout
// is hidden, and RemoveDeadEdgeRecords removes it.
type Endpoint struct {
	// ID is "ep_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account of the session.
	AccountID string `json:"account_id"`
	// TunnelSessionID is the session serving it (ts_...).
	TunnelSessionID string `json:"tunnel_session_id"`
	// CreatedAt is when the endpoint was recorded, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Proto is "http", "https" or "tcp", or ProtoLabeled for a labeled
	// tunnel, which has Labels and no URL, PublicURL nor Hostport.
	Proto string `json:"proto"`
	// Labels are a labeled tunnel's labels, which tunnel group backends
	// select it by; nil for the other protocols.
	Labels map[string]string `json:"labels,omitempty"`
	// URL is the public URL: http://host[:port], https://host[:port] or
	// tcp://host:port, of Proto.
	URL string `json:"url"`
	// PublicURL is URL; the store sets it.
	PublicURL string `json:"public_url"`
	// Hostport is the URL's host:port, with the port of the scheme when
	// the URL has none.
	Hostport string `json:"hostport"`
	// Domain is the reserved domain that allowed it (rd_...), or "" for a
	// random subdomain or a TCP address.
	Domain string `json:"domain"`
	// UpstreamURL is what the agent said it forwards to.
	UpstreamURL string `json:"upstream_url"`
	// Metadata is free text, at most MaxMetadata bytes; Description at
	// most MaxDescription.
	Metadata    string `json:"metadata"`
	Description string `json:"description"`
	// EdgeID is the edge process serving it; never in API answers.
	EdgeID string `json:"edge_id"`
}

// The kinds of tunnel sessions and endpoints (see family.kind), which each
// family's hooks name the other's keys with.
const (
	tunnelSessionsKind = "tunnel_sessions"
	endpointsKind      = "endpoints"
)

// ProtoLabeled is the Proto of a labeled tunnel's Endpoint.
const ProtoLabeled = "labeled"

// MaxUpstreamURL is the longest UpstreamURL, in bytes.
const MaxUpstreamURL = 2048

// defaultPorts are the ports of the endpoints' schemes without one.
var defaultPorts = map[string]string{"http": "80", "https": "443"}

// check normalizes the endpoint and returns a *ValidationError for the
// first field that breaks a rule, or nil.
func (e *Endpoint) check() error {
	if err := checkEdgeID(e.EdgeID); err != nil {
		return err
	}
	if schemas.CheckID(schemas.PrefixTunnelSession, e.TunnelSessionID) != nil {
		return invalid("tunnel_session_id", "must be the id of a tunnel session of the account (ts_...), and is %q", schemas.Clip(e.TunnelSessionID))
	}
	switch e.Proto {
	case "http", "https", "tcp":
		if len(e.Labels) > 0 {
			return invalid("labels", "are only for an endpoint of proto %s, and this one is %s", ProtoLabeled, e.Proto)
		}
		if err := e.checkURL(); err != nil {
			return err
		}
	case ProtoLabeled:
		if err := e.checkLabeled(); err != nil {
			return err
		}
	default:
		return invalid("proto", `must be "http", "https", "tcp" or %q, and is %q`, ProtoLabeled, schemas.Clip(e.Proto))
	}
	if e.Domain != "" && schemas.CheckID(schemas.PrefixReservedDomain, e.Domain) != nil {
		return invalid("domain", "must be the id of a reserved domain of the account (rd_...), or empty, and is %q", schemas.Clip(e.Domain))
	}
	if err := checkPlainText("upstream_url", e.UpstreamURL, MaxUpstreamURL); err != nil {
		return err
	}
	if err := checkBytes("description", e.Description, MaxDescription); err != nil {
		return err
	}
	return checkBytes("metadata", e.Metadata, MaxMetadata)
}

// checkLabeled checks the endpoint of a labeled tunnel: its labels, as
// resource.CheckLabels says, and no public address, which it does not
// have (tunnel group backends reach it).
func (e *Endpoint) checkLabeled() error {
	for _, f := range []struct{ name, value string }{
		{"url", e.URL}, {"public_url", e.PublicURL}, {"hostport", e.Hostport}, {"domain", e.Domain},
	} {
		if f.value != "" {
			return invalid(f.name, "must be empty for an endpoint of proto %s, which has no public address, and is %q", ProtoLabeled, schemas.Clip(f.value))
		}
	}
	return checkLabels("labels", e.Labels)
}

// checkURL checks that URL is of Proto, a host and a port (optional for
// http and https) and nothing else, and sets PublicURL and Hostport.
func (e *Endpoint) checkURL() error {
	p, err := url.Parse(e.URL)
	port := ""
	if err == nil {
		port = p.Port()
	}
	if err != nil || len(e.URL) > MaxPublicURL || p.Scheme != e.Proto || p.Hostname() == "" || !validPort(port) ||
		e.Proto == "tcp" && port == "" || p.User != nil || p.Path != "" || p.RawQuery != "" || p.Fragment != "" ||
		p.Opaque != "" || strings.ContainsAny(e.URL, " \t\r\n") {
		return invalid("url", "must be a URL of proto %s, a host and a port (optional for http and https), such as %s://app.example.com:443, and is %q",
			e.Proto, e.Proto, schemas.Clip(e.URL))
	}
	if port == "" {
		port = defaultPorts[e.Proto]
	}
	e.PublicURL, e.Hostport = e.URL, net.JoinHostPort(p.Hostname(), port)
	return nil
}

// endpoints declares endpoints (see family). The edge writes them, without
// audit events; the API only reads them. An endpoint claims its tunnel
// session in the batch that creates it (claimKey), so a session deleted
// at the same time is seen by one of the two writers, and deletes its
// endpoints (deleteEndpointsOf).
var endpoints = family[Endpoint]{
	kind:   endpointsKind,
	prefix: resource.Endpoints().Prefix,
	noun:   "endpoint",
	meta:   func(e *Endpoint) (*string, *string, *time.Time) { return &e.ID, &e.AccountID, &e.CreatedAt },
	input: func(in Endpoint) Endpoint {
		in.ID, in.AccountID, in.CreatedAt, in.PublicURL, in.Hostport = "", "", time.Time{}, "", ""
		in.Labels = maps.Clone(in.Labels)
		return in
	},
	check: func(_ context.Context, _ *Store, e *Endpoint) error { return e.check() },
	limit: LimitEndpoints,
	max:   func(l Limits) int { return l.Endpoints },
	writes: func(ctx context.Context, s *Store, before *Endpoint, e Endpoint) ([]write, error) {
		if before != nil && before.TunnelSessionID == e.TunnelSessionID {
			return nil, nil
		}
		claim, err := s.claimKey(ctx, tunnelSessionsKind+"."+e.AccountID+"."+e.TunnelSessionID)
		if errors.Is(err, ErrNotFound) {
			return nil, &ValidationError{Field: "tunnel_session_id", Err: ErrNotFound,
				Msg: fmt.Sprintf("names no tunnel session of the account: %s", e.TunnelSessionID)}
		}
		if err != nil {
			return nil, err
		}
		return []write{claim}, nil
	},
	hidden: hiddenOffEdge(func(e Endpoint) string { return e.EdgeID }),
}

// deleteEndpointsOf returns the deletes of the endpoints of the session
// t, at the revisions read, for the batch that deletes t.
func (s *Store) deleteEndpointsOf(ctx context.Context, t TunnelSession) ([]write, error) {
	entries, err := s.entries(ctx, endpointsKind+"."+t.AccountID+".*")
	if err != nil {
		return nil, fmt.Errorf("listing endpoints of tunnel session %s: %w", t.ID, err)
	}
	var writes []write
	for _, entry := range entries {
		var e Endpoint
		if err := json.Unmarshal(entry.Value(), &e); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", entry.Key(), err)
		}
		if e.TunnelSessionID == t.ID {
			writes = append(writes, write{key: entry.Key(), del: true, revision: entry.Revision()})
		}
	}
	return writes, nil
}

// CreateEndpoint records an endpoint of the account's tunnel session
// in.TunnelSessionID, with the fields of in the edge knows; the store sets
// ID, CreatedAt, PublicURL (URL) and Hostport. A labeled tunnel's
// endpoint has Proto ProtoLabeled, Labels that resource.CheckLabels
// takes, and no URL, PublicURL, Hostport nor Domain; the others have no
// Labels.
//
// It returns a *ValidationError (matching ErrInvalid) for a field that
// breaks a rule, including a tunnel_session_id that names no session of
// the account, a *LimitError (matching ErrLimit) if the account has
// Limits.Endpoints, or an error wrapping ErrNotFound if the account does
// not exist.
func (s *Store) CreateEndpoint(ctx context.Context, accountID string, in Endpoint) (Endpoint, error) {
	return endpoints.create(ctx, s, accountID, in, nil)
}

// GetEndpoint returns the endpoint of the account with the id. It returns
// an error wrapping ErrNotFound if the account has no such endpoint,
// including when another account has, or its edge is gone.
func (s *Store) GetEndpoint(ctx context.Context, accountID, id string) (Endpoint, error) {
	return endpoints.get(ctx, s, accountID, id)
}

// ListEndpoints returns a page of the account's endpoints whose edge is
// alive, newest first (by id), and the BeforeID of the next page, "" after
// the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListEndpoints(ctx context.Context, accountID string, page Page) ([]Endpoint, string, error) {
	return endpoints.list(ctx, s, accountID, page)
}

// DeleteEndpoint deletes the endpoint of the account with the id: the
// edge calls it when the agent unbinds it. It returns an error wrapping
// ErrNotFound if the account has no such endpoint.
func (s *Store) DeleteEndpoint(ctx context.Context, accountID, id string) error {
	_, err := endpoints.remove(ctx, s, accountID, id, nil, nil)
	return err
}

// LabeledEndpoints returns every endpoint of the account of proto
// ProtoLabeled whose edge is alive, sorted by id: the labeled tunnels
// that tunnel group backends select (TunnelGroupBackend.Selects). It
// returns an error wrapping ErrNotFound if accountID is not an account
// id.
func (s *Store) LabeledEndpoints(ctx context.Context, accountID string) ([]Endpoint, error) {
	if err := schemas.CheckID(schemas.PrefixAccount, accountID); err != nil {
		return nil, fmt.Errorf("account %q: %w", accountID, ErrNotFound)
	}
	gone, err := endpoints.gone(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("listing endpoints: %w", err)
	}
	all, err := listRecords[Endpoint](ctx, s, endpoints.filter(accountID))
	if err != nil {
		return nil, fmt.Errorf("listing endpoints: %w", err)
	}
	all = slices.DeleteFunc(all, func(e Endpoint) bool { return e.Proto != ProtoLabeled || gone(e) != nil })
	slices.SortFunc(all, func(a, b Endpoint) int { return strings.Compare(a.ID, b.ID) })
	return all, nil
}
