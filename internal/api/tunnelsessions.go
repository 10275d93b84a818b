package api

import (
	"context"
	"maps"
	"net/http"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

var (
	tunnelSessionResource = resource{noun: "tunnel session", listPath: apiwire.TunnelSessionsPath}
	endpointResource      = resource{noun: "endpoint", listPath: apiwire.EndpointsPath}
)

// The 405 of a create, update or delete of the families the edge makes.
const (
	tunnelSessionsMadeBy = "tunnel sessions are made and ended by agents connecting to an edge with a credential's authtoken; " +
		"to end one, POST /tunnel_sessions/{id}/stop, or delete its credential"
	endpointsMadeBy = "endpoints are made and ended by agents binding them through their tunnel session; " +
		"to end one, stop its session (POST /tunnel_sessions/{id}/stop)"
)

// routeTunnels serves the families of tunnel sessions and endpoints,
// which the edge records (package store's CreateTunnelSession and
// CreateEndpoint): list and get only, and the stop of a session. They
// have no audit kinds: sluice's edge alone writes them.
func (s *Server) routeTunnels() {
	t := s.tunnels
	route(s, family[store.TunnelSession, noBody, noBody, apiwire.TunnelSession]{
		spec: declared.TunnelSessions(), res: tunnelSessionResource,
		get: t.GetTunnelSession, list: t.ListTunnelSessions,
		body: s.tunnelSessionResponse, madeBy: tunnelSessionsMadeBy,
	})
	route(s, family[store.Endpoint, noBody, noBody, apiwire.Endpoint]{
		spec: declared.Endpoints(), res: endpointResource,
		get: t.GetEndpoint, list: t.ListEndpoints,
		body: s.endpointResponse, madeBy: endpointsMadeBy,
	})
	s.mux.Handle("POST "+apiwire.TunnelSessionsPath+"/{id}/stop", s.authenticated(http.HandlerFunc(s.stopTunnelSession)))
}

// stopTunnelSession asks the edge holding the session to end it: 204.
func (s *Server) stopTunnelSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.tunnels.StopTunnelSession(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id); err != nil {
		s.writeStoreError(w, r, err, tunnelSessionResource, id)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// tunnelSessionResponse returns the session as the API shows it: without
// its edge and stop request.
func (s *Server) tunnelSessionResponse(r *http.Request, t store.TunnelSession) apiwire.TunnelSession {
	return apiwire.TunnelSession{
		ID:           t.ID,
		URI:          s.resourceURI(r, tunnelSessionResource.listPath+"/"+t.ID),
		AgentVersion: t.AgentVersion,
		Credential:   schemas.Ref{ID: t.CredentialID, URI: s.resourceURI(r, credentialResource.listPath+"/"+t.CredentialID)},
		IP:           t.IP,
		Metadata:     t.Metadata,
		OS:           t.OS,
		Arch:         t.Arch,
		Region:       t.Region,
		StartedAt:    t.StartedAt.UTC().Format(createdAtLayout),
		Transport:    t.Transport,
		UserAgent:    t.UserAgent,
	}
}

// endpointResponse returns the endpoint as the API shows it: without its
// edge.
func (s *Server) endpointResponse(r *http.Request, e store.Endpoint) apiwire.Endpoint {
	body := apiwire.Endpoint{
		ID:            e.ID,
		URI:           s.resourceURI(r, endpointResource.listPath+"/"+e.ID),
		CreatedAt:     e.CreatedAt.UTC().Format(createdAtLayout),
		Proto:         e.Proto,
		Labels:        maps.Clone(e.Labels),
		URL:           e.URL,
		PublicURL:     e.PublicURL,
		Hostport:      e.Hostport,
		UpstreamURL:   e.UpstreamURL,
		Metadata:      e.Metadata,
		Description:   e.Description,
		TunnelSession: schemas.Ref{ID: e.TunnelSessionID, URI: s.resourceURI(r, tunnelSessionResource.listPath+"/"+e.TunnelSessionID)},
	}
	if e.Domain != "" {
		body.Domain = &schemas.Ref{ID: e.Domain, URI: s.resourceURI(r, reservedDomainResource.listPath+"/"+e.Domain)}
	}
	return body
}

// Tunnels keeps the tunnel sessions and endpoints of accounts, which the
// edge records. *store.Store implements it; see its methods for the
// errors each returns.
type Tunnels interface {
	GetTunnelSession(ctx context.Context, accountID, id string) (store.TunnelSession, error)
	ListTunnelSessions(ctx context.Context, accountID string, page store.Page) ([]store.TunnelSession, string, error)
	StopTunnelSession(ctx context.Context, accountID, id string) error
	GetEndpoint(ctx context.Context, accountID, id string) (store.Endpoint, error)
	ListEndpoints(ctx context.Context, accountID string, page store.Page) ([]store.Endpoint, string, error)
}
