package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/resource"
)

// TunnelGroupBackend is a backend of HTTPS edge routes: the account's
// labeled tunnels whose labels include all of its Labels, each of which
// takes a share of the requests of the routes it backs.
type TunnelGroupBackend struct {
	// ID is "bkdtg_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the backend.
	AccountID string `json:"account_id"`
	// CreatedAt is when the backend was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Description is free text, at most 255 bytes.
	Description string `json:"description"`
	// Metadata is free text, at most 4096 bytes.
	Metadata string `json:"metadata"`
	// Labels select the tunnels: a tunnel is in the group when each of
	// them is one of its labels, with the same value.
	Labels map[string]string `json:"labels"`
}

// Selects reports whether the backend's group holds a tunnel with the
// labels.
func (b *TunnelGroupBackend) Selects(labels map[string]string) bool {
	if len(b.Labels) == 0 {
		return false
	}
	for k, v := range b.Labels {
		if w, ok := labels[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// check returns a *ValidationError for the first field that breaks a
// rule, or nil: a backend has 1 to resource.MaxLabels labels, each as
// resource.CheckLabels says.
func (b *TunnelGroupBackend) check() error {
	spec := resource.TunnelGroupBackends()
	if err := checkText(spec.Field("description"), b.Description); err != nil {
		return err
	}
	if err := checkText(spec.Field("metadata"), b.Metadata); err != nil {
		return err
	}
	return checkLabels("labels", b.Labels)
}

// checkLabels returns a *ValidationError of field, wrapping the
// *resource.LabelsError, if labels break a rule of resource.CheckLabels.
func checkLabels(field string, labels map[string]string) error {
	if err := resource.CheckLabels(labels); err != nil {
		return &ValidationError{Field: field, Msg: err.Error(), Err: err}
	}
	return nil
}

// tunnelGroupBackendsKind is the kind of tunnel group backends.
const tunnelGroupBackendsKind = "tunnel_group_backends"

// tunnelGroupBackends declares tunnel group backends (see family). A
// route that takes a backend rewrites it in the batch that writes the
// route (claimBackend), so that a delete of the backend meanwhile, which
// DeleteTunnelGroupBackend refuses while a route uses it, starts over.
var tunnelGroupBackends = family[TunnelGroupBackend]{
	kind:   tunnelGroupBackendsKind,
	prefix: resource.TunnelGroupBackends().Prefix,
	noun:   "tunnel group backend",
	meta:   func(b *TunnelGroupBackend) (*string, *string, *time.Time) { return &b.ID, &b.AccountID, &b.CreatedAt },
	input: func(in TunnelGroupBackend) TunnelGroupBackend {
		return TunnelGroupBackend{Description: in.Description, Metadata: in.Metadata, Labels: maps.Clone(in.Labels)}
	},
	check: func(_ context.Context, _ *Store, b *TunnelGroupBackend) error { return b.check() },
	limit: LimitTunnelGroupBackends,
	max:   func(l Limits) int { return l.TunnelGroupBackends },
}

// BackendInUseError is a tunnel group backend that cannot be deleted
// because routes of HTTPS edges of its account send their requests to
// it. It matches ErrConflict.
type BackendInUseError struct {
	// BackendID is the backend that was to be deleted.
	BackendID string
	// Routes are the ids of the routes using it, sorted.
	Routes []string
}

// Error names the backend and the routes.
func (e *BackendInUseError) Error() string {
	return fmt.Sprintf("tunnel group backend %s is the backend of the HTTPS edge routes %s: remove it from them (DELETE /edges/https/{edge_id}/routes/{id}/backend), or give them another (PUT), first",
		e.BackendID, strings.Join(e.Routes, ", "))
}

// Unwrap returns ErrConflict.
func (e *BackendInUseError) Unwrap() error { return ErrConflict }

// claimBackend returns the write that rewrites the account's tunnel
// group backend as it is, at its revision, so that a delete of it
// meanwhile makes one of the two start over; or a *ValidationError of
// backend.backend_id, wrapping ErrNotFound, if the account has no such
// backend.
func (s *Store) claimBackend(ctx context.Context, accountID, backendID string) ([]write, error) {
	claim, err := s.claimKey(ctx, tunnelGroupBackends.key(accountID, backendID))
	if errors.Is(err, ErrNotFound) {
		return nil, &ValidationError{Field: "backend.backend_id", Err: ErrNotFound,
			Msg: fmt.Sprintf("names no tunnel group backend of the account: %s; create one with POST /backends/tunnel_group, or list yours with GET /backends/tunnel_group", backendID)}
	}
	if err != nil {
		return nil, err
	}
	return []write{claim}, nil
}

// CreateTunnelGroupBackend creates a tunnel group backend of the account
// with the Description, Metadata and Labels of in; the store sets ID,
// AccountID and CreatedAt.
//
// It returns a *ValidationError (matching ErrInvalid) for a field that
// breaks a rule, a *LimitError (matching ErrLimit) if the account has
// Limits.TunnelGroupBackends, or an error wrapping ErrNotFound if the
// account does not exist.
func (s *Store) CreateTunnelGroupBackend(ctx context.Context, accountID string, in TunnelGroupBackend, opts ...WriteOption) (TunnelGroupBackend, error) {
	return tunnelGroupBackends.create(ctx, s, accountID, in, opts)
}

// GetTunnelGroupBackend returns the tunnel group backend of the account
// with the id. It returns an error wrapping ErrNotFound if the account
// has no such backend, including when another account has.
func (s *Store) GetTunnelGroupBackend(ctx context.Context, accountID, id string) (TunnelGroupBackend, error) {
	return tunnelGroupBackends.get(ctx, s, accountID, id)
}

// ListTunnelGroupBackends returns a page of the account's tunnel group
// backends, newest first (by id), and the BeforeID of the next page, ""
// after the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListTunnelGroupBackends(ctx context.Context, accountID string, page Page) ([]TunnelGroupBackend, string, error) {
	return tunnelGroupBackends.list(ctx, s, accountID, page)
}

// UpdateTunnelGroupBackend changes the tunnel group backend of the
// account with the id: it calls fn on the stored backend, checks the
// result as CreateTunnelGroupBackend does, and writes it if the backend
// has not changed in the meantime; otherwise it starts over on a fresh
// copy, so fn may be called several times and must have no other effect.
// Changes fn makes to ID, AccountID and CreatedAt are discarded.
//
// It returns the backend written, or the error of fn as it is, a
// *ValidationError (matching ErrInvalid) for a field that breaks a rule,
// an error wrapping ErrNotFound if the account has no such backend, or
// one wrapping ErrConflict if the backend kept changing under concurrent
// updates.
func (s *Store) UpdateTunnelGroupBackend(ctx context.Context, accountID, id string, fn func(*TunnelGroupBackend) error, opts ...WriteOption) (TunnelGroupBackend, error) {
	return tunnelGroupBackends.update(ctx, s, accountID, id, fn, opts)
}

// DeleteTunnelGroupBackend deletes the tunnel group backend of the
// account with the id, and returns it as it was. It returns a
// *BackendInUseError (matching ErrConflict) naming the routes of HTTPS
// edges whose backend it is, if any: it is not deleted then. It returns
// an error wrapping ErrNotFound if the account has no such backend.
//
// A route given the backend at the same time rewrites the backend in its
// batch (claimBackend), and the delete is a compare-and-swap on the
// revision read before the routes were: one of the two writers sees the
// other.
func (s *Store) DeleteTunnelGroupBackend(ctx context.Context, accountID, id string, opts ...WriteOption) (TunnelGroupBackend, error) {
	routesTo := func(r HTTPSEdgeRoute) bool { return r.Backend != nil && r.Backend.BackendID == id }
	return tunnelGroupBackends.remove(ctx, s, accountID, id, opts, refuseWhileUsed[TunnelGroupBackend](ctx, s, &httpsEdgeRoutes, accountID, routesTo, func(ids []string) error {
		return &BackendInUseError{BackendID: id, Routes: ids}
	}))
}
