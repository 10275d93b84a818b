package store

import (
	"context"
	"encoding/json"
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

// claimHostports returns the writes that rewrite, each as it is at the
// revision read now, a reserved domain of the account covering each
// hostport e has and before (nil at a create) had not, so that a delete of
// the domain meanwhile, which DeleteReservedDomain refuses while an edge
// uses it, makes one of the two start over. A domain covers a hostport if
// it is its domain or a wildcard the domain is under (at any depth, as a
// bind rule of a credential matches: *.example.com covers a.example.com
// and a.b.example.com, not example.com).
//
// It returns a *ValidationError naming the first such hostport under the
// names the service hands out (checkServiceName), or that no
// reserved domain of the account covers, or whose name, under a wildcard
// of the account, another account has reserved itself, as it could
// before the domain tree (domaintree.go) refused such a reservation: an
// edge serves a name by the most specific reservation.
func (s *Store) claimHostports(ctx context.Context, before *HTTPSEdge, e HTTPSEdge) ([]write, error) {
	var added []string
	for _, hp := range e.Hostports {
		if before == nil || !slices.Contains(before.Hostports, hp) {
			added = append(added, hp)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	entries, err := s.entries(ctx, reservedDomains.filter(e.AccountID))
	if err != nil {
		return nil, fmt.Errorf("listing reserved domains: %w", err)
	}
	domains := make([]ReservedDomain, len(entries))
	for i, entry := range entries {
		if err := json.Unmarshal(entry.Value(), &domains[i]); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", entry.Key(), err)
		}
	}
	var claims []write
	for _, hp := range added {
		host := strings.TrimSuffix(hp, ":"+HTTPSPort)
		if err := s.checkServiceName(fmt.Sprintf("hostports[%d]", slices.Index(e.Hostports, hp)), host); err != nil {
			return nil, err
		}
		i := slices.IndexFunc(domains, func(d ReservedDomain) bool { return coversHost(d.Domain, host) })
		if i < 0 {
			return nil, invalid(fmt.Sprintf("hostports[%d]", slices.Index(e.Hostports, hp)), "is %q, but %s is not a reserved domain of the account, nor under one of its wildcards: reserve the domain first (POST /reserved_domains)", hp, host)
		}
		if domains[i].Domain != host && !slices.ContainsFunc(domains, func(d ReservedDomain) bool { return d.Domain == host }) {
			// Under a wildcard of the account, the name itself may be
			// another account's reservation, which is more specific.
			if _, free, err := s.freeRevision(ctx, reservedDomainKey("", host)); err != nil {
				return nil, err
			} else if !free {
				return nil, invalid(fmt.Sprintf("hostports[%d]", slices.Index(e.Hostports, hp)), "is %q, under a wildcard of the account, but %s itself is reserved by another account: choose another name", hp, host)
			}
		}
		if held, err := s.othersIngress(ctx, e.AccountID, host, domains[i]); err != nil {
			return nil, err
		} else if held != "" {
			return nil, invalid(fmt.Sprintf("hostports[%d]", slices.Index(e.Hostports, hp)), "is %q, but %s is the domain of another account's agent ingress, which holds it and every name under it: choose another name", hp, held)
		}
		if !slices.ContainsFunc(claims, func(w write) bool { return w.key == entries[i].Key() }) {
			claims = append(claims, claimOf(entries[i]))
		}
	}
	return claims, nil
}

// othersIngress returns host, or the name above it down from the base of
// the account's reserved domain d that covers it, that is the domain of
// another account's agent ingress, which holds it, or "": one made before
// agent ingresses were counted in the domain tree, which d may overlap.
func (s *Store) othersIngress(ctx context.Context, accountID, host string, d ReservedDomain) (string, error) {
	var own []AgentIngress
	for name := host; ; _, name, _ = strings.Cut(name, ".") {
		if _, free, err := s.freeRevision(ctx, agentIngressDomainKey("", name)); err != nil {
			return "", err
		} else if !free {
			if own == nil {
				var err error
				if own, err = listRecords[AgentIngress](ctx, s, agentIngresses.filter(accountID)); err != nil {
					return "", fmt.Errorf("listing agent ingresses: %w", err)
				}
			}
			if !slices.ContainsFunc(own, func(a AgentIngress) bool { return a.Domain == name }) {
				return name, nil
			}
		}
		if name == reservationBase(d.Domain) || !strings.Contains(name, ".") {
			return "", nil
		}
	}
}

// edgesUsing returns the ids of the account's HTTPS edges with a hostport
// that the reserved domain d covers and no other reserved domain of the
// account does, sorted.
func (s *Store) edgesUsing(ctx context.Context, d ReservedDomain) ([]string, error) {
	edges, err := listRecords[HTTPSEdge](ctx, s, httpsEdges.filter(d.AccountID))
	if err != nil {
		return nil, fmt.Errorf("listing HTTPS edges: %w", err)
	}
	domains, err := listRecords[ReservedDomain](ctx, s, reservedDomains.filter(d.AccountID))
	if err != nil {
		return nil, fmt.Errorf("listing reserved domains: %w", err)
	}
	var using []string
	for _, e := range edges {
		if slices.ContainsFunc(e.Hostports, func(hp string) bool {
			host := strings.TrimSuffix(hp, ":"+HTTPSPort)
			return coversHost(d.Domain, host) && !slices.ContainsFunc(domains, func(other ReservedDomain) bool {
				return other.ID != d.ID && coversHost(other.Domain, host)
			})
		}) {
			using = append(using, e.ID)
		}
	}
	slices.Sort(using)
	return using, nil
}

// DomainInUseError is a reserved domain that cannot be deleted because
// HTTPS edges of its account have hostports under it that no other
// reserved domain of the account covers: released, the domain could be
// reserved by another account, whose names the edges would then hold. It
// matches ErrConflict.
type DomainInUseError struct {
	// Domain is the reserved domain that was to be deleted.
	Domain string
	// Edges are the ids of the edges using it, sorted.
	Edges []string
}

// Error names the domain and the edges.
func (e *DomainInUseError) Error() string {
	return fmt.Sprintf("the reserved domain %s is used by the hostports of HTTPS edges %s: remove those hostports from them (PATCH /edges/https/{edge_id}), or delete them, first",
		e.Domain, strings.Join(e.Edges, ", "))
}

// Unwrap returns ErrConflict.
func (e *DomainInUseError) Unwrap() error { return ErrConflict }

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
// A hostport added rewrites a reserved domain that covers it in the batch
// that writes the edge (claimHostports), and a delete of the domain
// meanwhile is refused or starts over (DeleteReservedDomain).
var httpsEdges = family[HTTPSEdge]{
	kind:   httpsEdgesKind,
	prefix: resource.HTTPSEdges().Prefix,
	noun:   "HTTPS edge",
	meta:   func(e *HTTPSEdge) (*string, *string, *time.Time) { return &e.ID, &e.AccountID, &e.CreatedAt },
	input: func(in HTTPSEdge) HTTPSEdge {
		return HTTPSEdge{Description: in.Description, Metadata: in.Metadata, Hostports: slices.Clone(in.Hostports)}
	},
	check: func(_ context.Context, _ *Store, e *HTTPSEdge) error { return e.check() },
	limit: LimitHTTPSEdges,
	max:   func(l Limits) int { return l.HTTPSEdges },
	writes: func(ctx context.Context, s *Store, before *HTTPSEdge, e HTTPSEdge) ([]write, error) {
		return s.claimHostports(ctx, before, e)
	},
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
