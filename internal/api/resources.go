package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/store"
)

// resource names a kind of resource of the management API in messages.
// Its path is package client's, which the CLI calls.
type resource struct {
	noun     string // "event destination"
	listPath string // "/event_destinations"
	// taken is the code of a value of the family taken (a
	// store.TakenError), such as a domain of any account; 0 for
	// apiconv.CodeNameTaken.
	taken apiconv.Code
}

var (
	destinationResource  = resource{noun: "event destination", listPath: apiwire.EventDestinationsPath}
	subscriptionResource = resource{noun: "event subscription", listPath: apiwire.EventSubscriptionsPath}
	agentIngressResource = resource{noun: "agent ingress", listPath: apiwire.AgentIngressesPath, taken: apiconv.CodeIngressDomainTaken}
	appSessionResource   = resource{noun: "application session", listPath: apiwire.AppSessionsPath}
	apiKeyResource       = resource{noun: "API key", listPath: apiwire.APIKeysPath}
	botUserResource      = resource{noun: "bot user", listPath: apiwire.BotUsersPath}
	credentialResource   = resource{noun: "tunnel credential", listPath: apiwire.CredentialsPath}
)

// writeStoreError answers with the API error of an error of the store about
// the resource id of the kind res ("" for none). A *ValidationError is
// checked first, as it may also match ErrNotFound.
func (s *Server) writeStoreError(w http.ResponseWriter, r *http.Request, err error, res resource, id string) {
	var (
		invalid *store.ValidationError
		inUse   *store.InUseError
		owner   *store.OwnerInUseError
		used    *store.DomainInUseError
		backend *store.BackendInUseError
		limit   *store.LimitError
		taken   *store.TakenError
		domain  *store.DomainTakenError
		own     *serviceDomainError
		up      parentError
	)
	if errors.As(err, &up) {
		res, id = up.res, up.id
	}
	switch {
	case errors.As(err, &own):
		apiconv.WriteError(w, r, own.apiError())
	case errors.As(err, &limit):
		apiconv.WriteError(w, r, limitError(limit))
	case errors.As(err, &invalid):
		e := apiconv.NewError(apiconv.CodeInvalidField, "%s", invalid.Error())
		e.Details = map[string]string{"field": invalid.Field}
		apiconv.WriteError(w, r, e)
	case errors.As(err, &inUse):
		e := apiconv.NewError(apiconv.CodeInUse, "%s", inUse.Error())
		e.Details = map[string]string{"subscriptions": apiconv.DetailJSON(inUse.Subscriptions)}
		apiconv.WriteError(w, r, e)
	case errors.As(err, &owner):
		e := apiconv.NewError(apiconv.CodeOwnerInUse, "%s", owner.Error())
		e.Details = map[string]string{"credentials": apiconv.DetailJSON(owner.Credentials)}
		apiconv.WriteError(w, r, e)
	case errors.As(err, &used):
		e := apiconv.NewError(apiconv.CodeDomainInUse, "%s", used.Error())
		e.Details = map[string]string{"https_edges": apiconv.DetailJSON(used.Edges)}
		apiconv.WriteError(w, r, e)
	case errors.As(err, &backend):
		e := apiconv.NewError(apiconv.CodeBackendInUse, "%s", backend.Error())
		e.Details = map[string]string{"https_edge_routes": apiconv.DetailJSON(backend.Routes)}
		apiconv.WriteError(w, r, e)
	case errors.As(err, &domain):
		e := apiconv.NewError(apiconv.CodeDomainTaken, "%s", domain.Error())
		e.Details = map[string]string{"field": "domain"}
		apiconv.WriteError(w, r, e)
	case errors.As(err, &taken):
		code := apiconv.CodeNameTaken
		if res.taken != 0 {
			code = res.taken
		}
		e := apiconv.NewError(code, "%s", taken.Error())
		e.Details = map[string]string{"field": taken.Field}
		apiconv.WriteError(w, r, e)
	case errors.Is(err, store.ErrLastAPIKey):
		apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeLastAPIKey, "API key %s is your account's only key, and deleting it would lock the account out: create another key with POST /api_keys first", id))
	case errors.Is(err, store.ErrNotFound):
		apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeResourceNotFound, "your account has no %s %q; list yours with GET %s", res.noun, id, res.listPath))
	case errors.Is(err, store.ErrConflict):
		apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeConcurrentChange, "the %s %s kept changing under concurrent updates; send the request again", res.noun, id))
	case s.storageError(r.Context(), err) != nil:
		s.log.Warn("configuration store refuses writes", "operation_id", apiconv.OperationID(r.Context()), "method", r.Method, "path", r.URL.Path, "error", err, "storage", s.storageError(r.Context(), err))
		apiconv.WriteStorageError(w, r)
	default:
		s.log.Error("configuration store failed", "operation_id", apiconv.OperationID(r.Context()), "method", r.Method, "path", r.URL.Path, "error", err)
		w.Header().Set("Retry-After", "1")
		apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeConfigUnavailable, "sluice cannot reach its configuration store right now; retry shortly"))
	}
}

// limits are the API's words for each limit of store.Limits: its code, what
// frees room under it, and the serve flag that raises it.
var limits = map[string]struct {
	code apiconv.Code
	free string
	flag string
}{
	store.LimitDestinations:           {apiconv.CodeDestinationLimit, "delete one you no longer use (DELETE /event_destinations/{id})", "--max-destinations"},
	store.LimitSubscriptions:          {apiconv.CodeSubscriptionLimit, "delete one you no longer use (DELETE /event_subscriptions/{id})", "--max-subscriptions"},
	store.LimitRoutes:                 {apiconv.CodeRouteLimit, "name fewer destinations, or delete a subscription you no longer use (DELETE /event_subscriptions/{id})", "--max-routes"},
	store.LimitSourcesPerSubscription: {apiconv.CodeSourceLimit, "remove a source, or route the kinds through another subscription", "--max-sources-per-subscription"},
	store.LimitRunningReplays:         {apiconv.CodeReplayLimit, "wait for one to finish (GET /event_subscriptions/{id}/replays shows their state)", "--max-running-replays"},
	store.LimitAgentIngresses:         {apiconv.CodeAgentIngressLimit, "delete one you no longer use (DELETE /agent_ingresses/{id})", "--max-agent-ingresses"},
	store.LimitAPIKeys:                {apiconv.CodeAPIKeyLimit, "delete one you no longer use (DELETE /api_keys/{id})", "--max-api-keys"},
	store.LimitBotUsers:               {apiconv.CodeBotUserLimit, "delete one you no longer use (DELETE /bot_users/{id})", "--max-bot-users"},
	store.LimitCredentials:            {apiconv.CodeCredentialLimit, "delete one you no longer use (DELETE /credentials/{id})", "--max-credentials"},
	store.LimitHTTPSEdges:             {apiconv.CodeHTTPSEdgeLimit, "delete one you no longer use (DELETE /edges/https/{edge_id}), which deletes its routes too", "--max-https-edges"},
	store.LimitHTTPSEdgeRoutes:        {apiconv.CodeHTTPSRouteLimit, "delete one you no longer use (DELETE /edges/https/{edge_id}/routes/{id})", "--max-https-edge-routes"},
	store.LimitTunnelGroupBackends:    {apiconv.CodeBackendLimit, "delete one you no longer use (DELETE /backends/tunnel_group/{id})", "--max-tunnel-group-backends"},
	store.LimitReservedDomains:        {apiconv.CodeDomainLimit, "delete one you no longer use (DELETE /reserved_domains/{id})", "--max-reserved-domains"},
}

// limitError is the API error of a create over a limit of the account: it
// names the limit, how to free room, and how to have it raised.
func limitError(l *store.LimitError) *apiconv.Error {
	words := limits[l.Limit]
	if l.Would > 0 {
		e := apiconv.NewError(words.code, "this would give your account %d %s, over its limit of %d: %s, or ask the operator of sluice to raise the limit (%s)", l.Would, l.Limit, l.Max, words.free, words.flag)
		e.Details = map[string]string{"limit": l.Limit, "max": strconv.Itoa(l.Max), "would": strconv.Itoa(l.Would)}
		return e
	}
	e := apiconv.NewError(words.code, "your account has reached its limit of %d %s: %s, or ask the operator of sluice to raise the limit (%s)", l.Max, l.Limit, words.free, words.flag)
	e.Details = map[string]string{"limit": l.Limit, "max": strconv.Itoa(l.Max)}
	return e
}
