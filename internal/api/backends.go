package api

import (
	"context"
	"maps"
	"net/http"

	"github.com/sluicehq/sluice/apiwire"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

var tunnelGroupBackendResource = resource{noun: "tunnel group backend", listPath: apiwire.TunnelGroupBackendsPath}

// auditTunnelGroupBackend is the family of the audit kinds of tunnel
// group backends.
const auditTunnelGroupBackend = "tunnel_group_backend"

// routeTunnelGroupBackends serves the family of tunnel group backends,
// the backends of HTTPS edge routes. A backend's body shows the labeled
// tunnels it selects now, from the endpoints the edge records; its audit
// events show its labels, not its tunnels, which change without it.
func (s *Server) routeTunnelGroupBackends() {
	b := s.backends
	route(s, family[backendWithTunnels, apiwire.TunnelGroupBackendInput, apiwire.TunnelGroupBackendInput, apiwire.TunnelGroupBackend]{
		spec: declared.TunnelGroupBackends(), res: tunnelGroupBackendResource,
		audit:       auditTunnelGroupBackend,
		applyCreate: applyTunnelGroupBackend, applyUpdate: applyTunnelGroupBackend,
		create: func(ctx context.Context, accountID string, v backendWithTunnels, opts ...store.WriteOption) (backendWithTunnels, error) {
			created, err := b.CreateTunnelGroupBackend(ctx, accountID, v.TunnelGroupBackend, opts...)
			return s.withTunnels(ctx, accountID, created, err)
		},
		get: func(ctx context.Context, accountID, id string) (backendWithTunnels, error) {
			v, err := b.GetTunnelGroupBackend(ctx, accountID, id)
			return s.withTunnels(ctx, accountID, v, err)
		},
		list: func(ctx context.Context, accountID string, page store.Page) ([]backendWithTunnels, string, error) {
			tunnels, err := b.LabeledEndpoints(ctx, accountID)
			if err != nil {
				return nil, "", err
			}
			if match := page.Match; match != nil {
				// ?filter= sees a backend as its body shows it: with its tunnels.
				page.Match = func(item any) (bool, error) {
					if v, ok := item.(store.TunnelGroupBackend); ok {
						return match(backendWithTunnels{TunnelGroupBackend: v, tunnels: selected(v, tunnels)})
					}
					return match(item)
				}
			}
			items, next, err := b.ListTunnelGroupBackends(ctx, accountID, page)
			if err != nil {
				return nil, "", err
			}
			with := make([]backendWithTunnels, len(items))
			for i, v := range items {
				with[i] = backendWithTunnels{TunnelGroupBackend: v, tunnels: selected(v, tunnels)}
			}
			return with, next, nil
		},
		update: func(ctx context.Context, accountID, id string, fn func(*backendWithTunnels) error, opts ...store.WriteOption) (backendWithTunnels, error) {
			v, err := b.UpdateTunnelGroupBackend(ctx, accountID, id, func(v *store.TunnelGroupBackend) error {
				w := backendWithTunnels{TunnelGroupBackend: *v}
				err := fn(&w)
				*v = w.TunnelGroupBackend
				return err
			}, opts...)
			return s.withTunnels(ctx, accountID, v, err)
		},
		delete: func(ctx context.Context, accountID, id string, opts ...store.WriteOption) (backendWithTunnels, error) {
			v, err := b.DeleteTunnelGroupBackend(ctx, accountID, id, opts...)
			return backendWithTunnels{TunnelGroupBackend: v}, err
		},
		body:        s.tunnelGroupBackendResponse,
		auditObject: s.tunnelGroupBackendAudit,
		stored: func(resource any) (backendWithTunnels, bool) {
			b, ok := resource.(store.TunnelGroupBackend)
			return backendWithTunnels{TunnelGroupBackend: b}, ok
		},
	})
}

// backendWithTunnels is a tunnel group backend with the ids of the
// labeled tunnels it selects, which its body shows.
type backendWithTunnels struct {
	store.TunnelGroupBackend
	tunnels []string // sorted
}

// withTunnels returns the backend v, read with err, with the tunnels it
// selects.
func (s *Server) withTunnels(ctx context.Context, accountID string, v store.TunnelGroupBackend, err error) (backendWithTunnels, error) {
	if err != nil {
		return backendWithTunnels{}, err
	}
	tunnels, err := s.backends.LabeledEndpoints(ctx, accountID)
	if err != nil {
		return backendWithTunnels{}, err
	}
	return backendWithTunnels{TunnelGroupBackend: v, tunnels: selected(v, tunnels)}, nil
}

// selected returns the ids of the labeled endpoints, sorted by id, that
// the backend selects, in their order.
func selected(b store.TunnelGroupBackend, labeled []store.Endpoint) []string {
	var ids []string
	for _, e := range labeled {
		if b.Selects(e.Labels) {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

func (s *Server) tunnelGroupBackendResponse(r *http.Request, b backendWithTunnels) apiwire.TunnelGroupBackend {
	body := apiwire.TunnelGroupBackend{
		ID:          b.ID,
		URI:         s.resourceURI(r, tunnelGroupBackendResource.listPath+"/"+b.ID),
		CreatedAt:   b.CreatedAt.UTC().Format(createdAtLayout),
		Description: b.Description,
		Metadata:    b.Metadata,
		Labels:      maps.Clone(b.Labels),
		Tunnels:     make([]schemas.Ref, len(b.tunnels)),
	}
	if body.Labels == nil {
		body.Labels = map[string]string{}
	}
	for i, id := range b.tunnels {
		body.Tunnels[i] = schemas.Ref{ID: id, URI: s.resourceURI(r, endpointResource.listPath+"/"+id)}
	}
	return body
}

// tunnelGroupBackendAudit is the object of a tunnel_group_backend_*
// event: the fields the catalogue gives the kinds, without the tunnels.
func (s *Server) tunnelGroupBackendAudit(r *http.Request, b backendWithTunnels) any {
	body := s.tunnelGroupBackendResponse(r, b)
	return struct {
		ID          string            `json:"id"`
		URI         string            `json:"uri"`
		CreatedAt   string            `json:"created_at"`
		Description string            `json:"description"`
		Metadata    string            `json:"metadata"`
		Labels      map[string]string `json:"labels"`
	}{body.ID, body.URI, body.CreatedAt, body.Description, body.Metadata, body.Labels}
}

// applyTunnelGroupBackend sets the fields of a create or an update sent.
// Labels replace the backend's whole.
func applyTunnelGroupBackend(in apiwire.TunnelGroupBackendInput, b *backendWithTunnels) {
	setSent(&b.Description, in.Description)
	setSent(&b.Metadata, in.Metadata)
	if in.Labels != nil {
		b.Labels = maps.Clone(*in.Labels)
	}
}

// TunnelGroupBackends keeps the tunnel group backends of accounts, and
// reads the labeled endpoints they select. *store.Store implements it;
// see its methods for the errors each returns.
type TunnelGroupBackends interface {
	CreateTunnelGroupBackend(ctx context.Context, accountID string, in store.TunnelGroupBackend, opts ...store.WriteOption) (store.TunnelGroupBackend, error)
	GetTunnelGroupBackend(ctx context.Context, accountID, id string) (store.TunnelGroupBackend, error)
	ListTunnelGroupBackends(ctx context.Context, accountID string, page store.Page) ([]store.TunnelGroupBackend, string, error)
	UpdateTunnelGroupBackend(ctx context.Context, accountID, id string, fn func(*store.TunnelGroupBackend) error, opts ...store.WriteOption) (store.TunnelGroupBackend, error)
	DeleteTunnelGroupBackend(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.TunnelGroupBackend, error)
	LabeledEndpoints(ctx context.Context, accountID string) ([]store.Endpoint, error)
}
