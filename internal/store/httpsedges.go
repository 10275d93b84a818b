package store

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/resource"
)

// HTTPSEdge is an HTTPS edge of an account: where it takes HTTPS traffic,
// on hostports of its reserved domains. Its routes are HTTPSEdgeRoutes.
type HTTPSEdge struct {
	// ID is "edghts_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the edge.
	AccountID string `json:"account_id"`
	// CreatedAt is when the edge was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Description is free text, at most 255 bytes.
	Description string `json:"description"`
	// Metadata is free text, at most 4096 bytes.
	Metadata string `json:"metadata"`
	// Hostports are "<domain>:443", lower-cased, each a reserved domain of
	// the account or a name under one of its wildcards (checkHostports),
	// without duplicates.
	Hostports []string `json:"hostports"`
}

// HTTPSPort is the only port of an HTTPS edge's hostports.
const HTTPSPort = "443"

// MaxHostports is the most hostports of an HTTPS edge.
const MaxHostports = 100

// check normalizes e and returns a *ValidationError for the first field
// that breaks a rule, or nil. Whether the hostports are the account's is
// checkHostports'.
func (e *HTTPSEdge) check() error {
	spec := resource.HTTPSEdges()
	if err := checkText(spec.Field("description"), e.Description); err != nil {
		return err
	}
	if err := checkText(spec.Field("metadata"), e.Metadata); err != nil {
		return err
	}
	if len(e.Hostports) > MaxHostports {
		return invalid("hostports", "has %d hostports, more than %d: reserve a wildcard domain (*.<domain>) and use names under it", len(e.Hostports), MaxHostports)
	}
	for i, hp := range e.Hostports {
		field := fmt.Sprintf("hostports[%d]", i)
		host, port, err := net.SplitHostPort(hp)
		if err != nil || port != HTTPSPort {
			return invalid(field, "is %q: give <domain>:%s, such as app.example.com:%s", hp, HTTPSPort, HTTPSPort)
		}
		domain, err := CheckReservedDomain(host)
		if err != nil {
			return invalid(field, "is %q, whose domain is not a valid name: give <domain>:%s of a reserved domain of the account", hp, HTTPSPort)
		}
		e.Hostports[i] = domain + ":" + HTTPSPort
		if slices.Contains(e.Hostports[:i], e.Hostports[i]) {
			return invalid(field, "is %q, which the edge has already: give each hostport once", hp)
		}
	}
	return nil
}

// checkHostports returns a *ValidationError naming the first hostport of
// e whose domain is neither a reserved domain of the account nor a name
// under one of its wildcard reserved domains (at any depth, as a bind
// rule of a credential matches: *.example.com covers a.example.com and
// a.b.example.com, not example.com), or nil.
func (s *Store) checkHostports(ctx context.Context, e *HTTPSEdge) error {
	if len(e.Hostports) == 0 {
		return nil
	}
	domains, err := listRecords[ReservedDomain](ctx, s, reservedDomains.filter(e.AccountID))
	if err != nil {
		return fmt.Errorf("listing reserved domains: %w", err)
	}
	for i, hp := range e.Hostports {
		host := strings.TrimSuffix(hp, ":"+HTTPSPort)
		if !slices.ContainsFunc(domains, func(d ReservedDomain) bool { return coversHost(d.Domain, host) }) {
			return invalid(fmt.Sprintf("hostports[%d]", i), "is %q, but %s is not a reserved domain of the account, nor under one of its wildcards: reserve the domain first (POST /reserved_domains)", hp, host)
		}
	}
	return nil
}

// coversHost reports whether the reserved domain covers host: it is host,
// or a wildcard *.<suffix> and host ends in .<suffix> after at least one
// label.
func coversHost(domain, host string) bool {
	if domain == host {
		return true
	}
	suffix, ok := strings.CutPrefix(domain, "*")
	return ok && strings.HasSuffix(host, suffix) && len(host) > len(suffix)
}

// httpsEdgesKind is the kind of HTTPS edges.
const httpsEdgesKind = "https_edges"

// httpsEdges declares HTTPS edges (see family). Deleting an edge deletes
// its routes in the same batch (cascade); a route created meanwhile
// rewrites the edge in its own (claimEdge), so one of the two starts over.
var httpsEdges = family[HTTPSEdge]{
	kind:   httpsEdgesKind,
	prefix: resource.HTTPSEdges().Prefix,
	noun:   "HTTPS edge",
	meta:   func(e *HTTPSEdge) (*string, *string, *time.Time) { return &e.ID, &e.AccountID, &e.CreatedAt },
	input: func(in HTTPSEdge) HTTPSEdge {
		return HTTPSEdge{Description: in.Description, Metadata: in.Metadata, Hostports: slices.Clone(in.Hostports)}
	},
	check: func(ctx context.Context, s *Store, e *HTTPSEdge) error {
		if err := e.check(); err != nil {
			return err
		}
		return s.checkHostports(ctx, e)
	},
	limit: LimitHTTPSEdges,
	max:   func(l Limits) int { return l.HTTPSEdges },
	cascade: func(ctx context.Context, s *Store, e HTTPSEdge) ([]write, error) {
		return s.deleteRoutesOf(ctx, e)
	},
}

// CreateHTTPSEdge creates an HTTPS edge of the account with the
// Description, Metadata and Hostports of in; the store sets ID, AccountID
// and CreatedAt.
//
// It returns a *ValidationError (matching ErrInvalid) for a field that
// breaks a rule, including a hostport not of a reserved domain of the
// account, a *LimitError (matching ErrLimit) if the account has
// Limits.HTTPSEdges, or an error wrapping ErrNotFound if the account does
// not exist.
func (s *Store) CreateHTTPSEdge(ctx context.Context, accountID string, in HTTPSEdge, opts ...WriteOption) (HTTPSEdge, error) {
	return httpsEdges.create(ctx, s, accountID, in, opts)
}

// GetHTTPSEdge returns the HTTPS edge of the account with the id. It
// returns an error wrapping ErrNotFound if the account has no such edge,
// including when another account has.
func (s *Store) GetHTTPSEdge(ctx context.Context, accountID, id string) (HTTPSEdge, error) {
	return httpsEdges.get(ctx, s, accountID, id)
}

// ListHTTPSEdges returns a page of the account's HTTPS edges, newest first
// (by id), and the BeforeID of the next page, "" after the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListHTTPSEdges(ctx context.Context, accountID string, page Page) ([]HTTPSEdge, string, error) {
	return httpsEdges.list(ctx, s, accountID, page)
}

// UpdateHTTPSEdge changes the HTTPS edge of the account with the id: it
// calls fn on the stored edge, checks the result as CreateHTTPSEdge does,
// and writes it if the edge has not changed in the meantime; otherwise it
// starts over on a fresh copy, so fn may be called several times and must
// have no other effect. Changes fn makes to ID, AccountID and CreatedAt
// are discarded.
//
// It returns the edge written, or the error of fn as it is, a
// *ValidationError (matching ErrInvalid) for a field that breaks a rule,
// an error wrapping ErrNotFound if the account has no such edge, or one
// wrapping ErrConflict if the edge kept changing under concurrent updates.
func (s *Store) UpdateHTTPSEdge(ctx context.Context, accountID, id string, fn func(*HTTPSEdge) error, opts ...WriteOption) (HTTPSEdge, error) {
	return httpsEdges.update(ctx, s, accountID, id, fn, opts)
}

// DeleteHTTPSEdge deletes the HTTPS edge of the account with the id, and
// all its routes with it, in one batch, and returns the edge as it was.
// It returns an error wrapping ErrNotFound if the account has no such
// edge.
func (s *Store) DeleteHTTPSEdge(ctx context.Context, accountID, id string, opts ...WriteOption) (HTTPSEdge, error) {
	return httpsEdges.remove(ctx, s, accountID, id, opts, nil)
}
