package edge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/edge/circuitbreaker"
	"github.com/sluicehq/sluice/trafficpolicy"
)

// Error codes of requests at HTTPS edges.
const (
	codeNoRoute      = "640"
	codeNoBackend    = "641"
	codeNoTunnel     = "642"
	codeCircuitOpen  = "643"
	codeRoutePolicy  = "644"
	codeNotWebSocket = "645"
)

// errConnectRules is a route's policy with on_tcp_connect rules, which
// no route runs (the store refuses it at write).
var errConnectRules = errors.New("the policy has on_tcp_connect rules, which routes do not run")

// serveRoute serves a request at a hostport of an HTTPS edge: its route's
// traffic policy runs around the route's circuit breaker and its
// backend's tunnels, or its websocket TCP converter.
func (h *publicHandler) serveRoute(w http.ResponseWriter, r *http.Request, host string, er *edgeRoutes, rt *route, started time.Time) {
	e := h.edge
	ex := exchange{edge: e, account: er.edge.AccountID, serverName: host, scheme: h.scheme, req: r, start: started, connStart: started, forwarded: h.forwarded}
	if len(er.logins) > 0 && (r.URL.Path == LoginCallbackPath || r.URL.Path == LogoutPath) {
		h.serveEdgeLogin(w, &ex, er)
		return
	}
	if rt != nil && !h.forwarded && e.forwarder != nil {
		// No tunnel of the route's group is connected here: the edge
		// that has one serves the request, its modules and all.
		if b := rt.rec.Backend; b != nil && b.Enabled {
			if group := e.routing.backend(b.BackendID); group != nil && group.AccountID == ex.account && e.groupTunnel(ex.account, group) == nil {
				if peer, ok := e.cfg.Peers.FindLabeled(ex.account, group.Selects); ok {
					e.forwardCounted(w, r, peer, ex.account, started)
					return
				}
			}
		}
	}
	pc, bc, ok := ex.admit(w)
	if !ok {
		return
	}
	if rt == nil || rt.policyErr != nil {
		if bc != nil {
			bc.close()
		}
	}
	serve := func(w http.ResponseWriter, bc *backendConn) *backendConn { return ex.routeProxy(w, rt, bc) }
	switch {
	case rt == nil:
		ex.status = http.StatusNotFound
		publicError(w, http.StatusNotFound, codeNoRoute, fmt.Sprintf("No route of the HTTPS edge at %s takes the path %s. Add a route that matches it.", host, r.URL.Path))
		ex.publish(w)
		return
	case rt.policyErr != nil:
		if !rt.warned.Swap(true) {
			e.cfg.Log.Warn("a route's traffic policy cannot be loaded; the route answers 503", "route", rt.rec.ID, "error", rt.policyErr)
		}
		ex.status = http.StatusServiceUnavailable
		publicError(w, http.StatusServiceUnavailable, codeRoutePolicy, "The route's traffic policy cannot be loaded, and the route is closed until it is fixed.")
		ex.publish(w)
		return
	case rt.policy != nil:
		bc = ex.runPolicy(w, rt.policy, h.routeRecord(host, er, rt), serve, bc)
	default:
		bc = serve(w, bc)
		ex.publish(w)
	}
	pc.keep(bc, &ex)
}

// routeProxy sends the exchange's request through the route: its circuit
// breaker decides, a tunnel of its backend's group takes it (bc's, the
// public connection's last, while it is in the group), and the outcome
// counts in the breaker. It returns the stream for the connection's next
// request.
func (x *exchange) routeProxy(w http.ResponseWriter, rt *route, bc *backendConn) *backendConn {
	e := x.edge
	release := func() *backendConn {
		if bc != nil {
			bc.close()
		}
		return nil
	}
	var prefer *endpoint
	if bc != nil {
		prefer = bc.ep
	}
	b := rt.rec.Backend
	if b == nil || !b.Enabled {
		x.status = http.StatusServiceUnavailable
		publicError(w, http.StatusServiceUnavailable, codeNoBackend, "The route has no backend: give it a tunnel group backend (PUT its backend module).")
		return release()
	}
	group := e.routing.backend(b.BackendID)
	if group == nil || group.AccountID != x.account {
		x.status = http.StatusServiceUnavailable
		publicError(w, http.StatusServiceUnavailable, codeNoBackend, "The route's backend "+b.BackendID+" does not exist: give the route another one.")
		return release()
	}
	ep := e.pickTunnel(x.account, group, prefer)
	if ep == nil {
		x.status = http.StatusBadGateway
		publicError(w, http.StatusBadGateway, codeNoTunnel, "No tunnel of the route's backend is online. An agent must start a labeled tunnel with the backend's labels.")
		return release()
	}
	if bc != nil && bc.ep != ep {
		bc = release()
	}
	x.ep = ep
	decision := circuitbreaker.Invalid
	if rt.breaker != nil {
		decision = rt.breaker.Allow(e.now().UnixNano())
		x.breaker = decision
		if decision == circuitbreaker.Block {
			x.status = http.StatusServiceUnavailable
			w.Header().Set("Retry-After", strconv.Itoa(int(rt.rec.CircuitBreaker.TrippedDuration)))
			publicError(w, http.StatusServiceUnavailable, codeCircuitOpen, "The route's upstream is failing, and its circuit breaker holds requests back for now. Try again after Retry-After.")
			return release()
		}
	}
	if rt.rec.WebsocketTCPConverter != nil && rt.rec.WebsocketTCPConverter.Enabled {
		release()
		x.convertWebSocket(w)
	} else {
		bc = x.proxy(w, bc)
	}
	if decision != circuitbreaker.Invalid {
		rt.breaker.Done(e.now().UnixNano(), decision, x.upstreamFailed)
	}
	return bc
}

// routeRecord returns the policy record of a request of a route, with
// where its logins happen: the HTTPS edge and route, and as the
// application session's endpoint a tunnel of the route's group.
func (h *publicHandler) routeRecord(host string, er *edgeRoutes, rt *route) *policyRecord {
	e := h.edge
	return &policyRecord{login: &loginTarget{
		accountID: er.edge.AccountID, edgeID: er.edge.ID, routeID: rt.rec.ID, endpointID: e.routeTunnelID(er.edge.AccountID, rt),
		publicURL: e.httpURL(h.scheme, host), configs: rt.policy.OpenIDConnects(), secure: h.scheme == "https",
	}}
}

// routeTunnelID returns the id of a tunnel of the route's group here, ""
// when none is (a login then fails with a page that says so): the
// endpoint the application sessions of the route's logins name.
func (e *Edge) routeTunnelID(account string, rt *route) string {
	if b := rt.rec.Backend; b != nil && b.Enabled {
		if group := e.routing.backend(b.BackendID); group != nil && group.AccountID == account {
			if ep := e.groupTunnel(account, group); ep != nil {
				return ep.record.ID
			}
		}
	}
	return ""
}

// serveEdgeLogin answers the login callback and logout paths of an
// HTTPS edge with routes that log users in, whatever route those paths
// match: the edge's logins are one, as its cookies are its host's. The
// callback finishes a login of any of its routes (the session names
// that route), and the logout ends the browser's sessions of all.
func (h *publicHandler) serveEdgeLogin(w http.ResponseWriter, ex *exchange, er *edgeRoutes) {
	e, r := h.edge, ex.req
	// The connection keeps no stream: this answer is the edge's own.
	_, bc, ok := ex.admit(w)
	if !ok {
		return
	}
	if bc != nil {
		bc.close()
	}
	var configs []*trafficpolicy.OpenIDConnect
	owner := make(map[*trafficpolicy.OpenIDConnect]*route)
	for _, rt := range er.logins {
		for _, cfg := range rt.policy.OpenIDConnects() {
			configs = append(configs, cfg)
			owner[cfg] = rt
		}
	}
	t := &loginTarget{
		accountID: er.edge.AccountID, edgeID: er.edge.ID, publicURL: e.httpURL(h.scheme, ex.serverName),
		configs: configs, secure: h.scheme == "https",
		forConfig: func(cfg *trafficpolicy.OpenIDConnect) (string, string) {
			rt := owner[cfg]
			return rt.rec.ID, e.routeTunnelID(er.edge.AccountID, rt)
		},
	}
	record := &policyRecord{login: t}
	pw := &policyWriter{ResponseWriter: w}
	e.logins.ownPath(configs, r)(pw, r.WithContext(context.WithValue(r.Context(), policyRecordKey{}, record)), nil)
	ex.status, ex.respBytes, ex.policy = pw.status, pw.written, record
	ex.publish(pw)
}
