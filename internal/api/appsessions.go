package api

import (
	"context"
	"net/http"

	"github.com/sluicehq/sluice/apiwire"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// routeAppSessions serves the family of application sessions
// (specification sections 2.7 and 4.3a): list, get and delete (revoke)
// only, as the edge records them (package appsession). The catalogue has
// no audit kinds for them.
func (s *Server) routeAppSessions() {
	a := s.appSessions
	route(s, family[store.AppSession, noBody, noBody, apiwire.AppSession]{
		spec: declared.AppSessions(), res: appSessionResource,
		get: a.GetAppSession, list: a.ListAppSessions, delete: a.DeleteAppSession,
		body: s.appSessionResponse,
	})
}

// The paths of the resources a session refers to: application users,
// endpoints, HTTPS edges and their routes.
const (
	appUsersPath   = "/app/users/"
	endpointsPath  = "/endpoints/"
	httpsEdgesPath = "/edges/https/"
)

func (s *Server) appSessionResponse(r *http.Request, a store.AppSession) apiwire.AppSession {
	ref := func(id, path string) schemas.Ref { return schemas.Ref{ID: id, URI: s.resourceURI(r, path+id)} }
	body := apiwire.AppSession{
		ID:        a.ID,
		URI:       s.resourceURI(r, appSessionResource.listPath+"/"+a.ID),
		PublicURL: a.PublicURL,
		BrowserSession: apiwire.BrowserSession{
			UserAgent: apiwire.UserAgent(a.BrowserSession.UserAgent),
			IPAddress: a.BrowserSession.IPAddress,
			Location:  apiwire.Location(a.BrowserSession.Location),
		},
		ApplicationUser: ref(a.ApplicationUserID, appUsersPath),
		CreatedAt:       a.CreatedAt.UTC().Format(createdAtLayout),
		LastActive:      a.LastActive.UTC().Format(createdAtLayout),
		ExpiresAt:       a.ExpiresAt.UTC().Format(createdAtLayout),
		Endpoint:        ref(a.EndpointID, endpointsPath),
	}
	if a.EdgeID != "" {
		edge, route := ref(a.EdgeID, httpsEdgesPath), ref(a.RouteID, httpsEdgesPath+a.EdgeID+"/routes/")
		body.Edge, body.Route = &edge, &route
	}
	return body
}

// AppSessions keeps the application sessions of accounts. *store.Store
// implements it; see its methods for the errors each returns.
type AppSessions interface {
	GetAppSession(ctx context.Context, accountID, id string) (store.AppSession, error)
	ListAppSessions(ctx context.Context, accountID string, page store.Page) ([]store.AppSession, string, error)
	DeleteAppSession(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.AppSession, error)
}
