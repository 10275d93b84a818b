package edge

import (
	"context"
	"errors"
	"slices"
	"sort"

	"github.com/sluicehq/sluice/internal/acl"
	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// codeLabelACL refuses a labeled tunnel whose labels the credential's ACL
// does not allow.
const codeLabelACL = "623"

// startLabeled serves a StartLabeled call: the tunnel is recorded as an
// endpoint of protocol labeled, and the routes whose tunnel group
// backends select its labels send it requests from then on.
func (s *session) startLabeled(req tunnelwire.StartLabeled) tunnelwire.StartLabeledResponse {
	ep, err := s.bindLabeled(req)
	if err != nil {
		var be *bindError
		if !errors.As(err, &be) {
			s.edge.cfg.Log.Warn("starting a labeled tunnel", "session", s.record.ID, "error", err)
			err = refuseBind(codeAuthUnknown, "the edge could not start the labeled tunnel just now: try again")
		}
		return tunnelwire.StartLabeledResponse{Error: err.Error()}
	}
	return tunnelwire.StartLabeledResponse{ID: ep.bindID}
}

// bindLabeled checks, records and starts serving a labeled tunnel.
func (s *session) bindLabeled(req tunnelwire.StartLabeled) (*endpoint, error) {
	e := s.edge
	if len(req.Labels) == 0 {
		return nil, refuseBind(codeLabeled, "a labeled tunnel needs at least one label, such as edge=web")
	}
	// The labels' rules first, where they enter: the ACL's loop below
	// then runs over at most resource.MaxLabels of them.
	if err := resource.CheckLabels(req.Labels); err != nil {
		return nil, refuseBind(codeLabeled, "the tunnel's labels: %v", err)
	}
	names := make([]string, 0, len(req.Labels))
	for name := range req.Labels {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !acl.AllowsLabel(s.credential.ACL, name, req.Labels[name]) {
			return nil, refuseBind(codeLabelACL, "the credential's ACL does not let it start a tunnel labeled %s=%s: add a rule bind:%s=%s to credential %s, or use another credential",
				name, req.Labels[name], name, req.Labels[name], s.credential.ID)
		}
	}
	s.mu.Lock()
	count := len(s.binds)
	s.mu.Unlock()
	if count >= e.cfg.Limits.BindsPerSession {
		return nil, refuseBind(codeBindLimit, "the session has %d endpoints and tunnels, as many as one agent session may: close one, or start another agent", count)
	}
	ctx, cancel := context.WithTimeout(s.ctx, callTimeout)
	defer cancel()
	record, err := e.cfg.Store.CreateEndpoint(ctx, s.record.AccountID, store.Endpoint{
		TunnelSessionID: s.record.ID, Proto: store.ProtoLabeled, Labels: req.Labels,
		UpstreamURL: clip(req.ForwardsTo, 1024), Metadata: clip(req.Metadata, 4096), EdgeID: e.cfg.EdgeID,
	})
	if err != nil {
		var invalid *store.ValidationError
		switch {
		case errors.As(err, &invalid):
			return nil, refuseBind(codeLabeled, "the tunnel's %v", invalid)
		case errors.Is(err, store.ErrLimit):
			return nil, refuseBind(codeEndpointLimit, "the account has as many endpoints and tunnels as it may: %v. Close one first", err)
		}
		return nil, err
	}
	// The tunnel's id is its bind id: the agent unbinds it by that id,
	// and the edge's Proxy streams for it carry it.
	ep := &endpoint{session: s, bindID: record.ID, record: record, proto: store.ProtoLabeled, labels: record.Labels}
	// The tunnel joins the session's binds and the edge's table in one
	// step under the session's lock, which its end takes first: a
	// session ending meanwhile either sees it and removes it, or is seen
	// here ended, and it never outlives the session.
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		e.removeEndpoint(ep)
		return nil, refuseBind(codeAuthUnknown, "the session ended")
	}
	s.binds[ep.bindID] = ep
	e.mu.Lock()
	e.labeled[record.AccountID] = append(slices.Clip(e.labeled[record.AccountID]), ep)
	e.mu.Unlock()
	s.mu.Unlock()
	e.Metrics.endpoints.Add(1)
	return ep, nil
}

// releaseLabeled stops a labeled tunnel taking requests: the next request
// of its group goes to another. Called with e.mu held.
func (e *Edge) releaseLabeled(ep *endpoint) {
	account := ep.record.AccountID
	tunnels := slices.DeleteFunc(slices.Clone(e.labeled[account]), func(t *endpoint) bool { return t == ep })
	if len(tunnels) == 0 {
		delete(e.labeled, account)
	} else {
		e.labeled[account] = tunnels
	}
}

// groupTunnel returns the first labeled tunnel of the account here that
// the backend selects, nil when there is none; it takes no turn.
func (e *Edge) groupTunnel(account string, b *store.TunnelGroupBackend) *endpoint {
	e.mu.Lock()
	tunnels := e.labeled[account]
	e.mu.Unlock()
	if i := slices.IndexFunc(tunnels, func(t *endpoint) bool { return b.Selects(t.labels) }); i >= 0 {
		return tunnels[i]
	}
	return nil
}

// pickTunnel returns a labeled tunnel of the account that the backend
// selects, nil when none is here. It keeps prefer, the tunnel the public
// connection used last, while it is in the group; otherwise it takes the
// group's tunnels in turn.
func (e *Edge) pickTunnel(account string, b *store.TunnelGroupBackend, prefer *endpoint) *endpoint {
	e.mu.Lock()
	tunnels := e.labeled[account] // never changed in place (releaseLabeled)
	e.mu.Unlock()
	n := 0
	for _, t := range tunnels {
		if b.Selects(t.labels) {
			if t == prefer {
				return t
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	k := int(e.turn.Add(1) % uint64(n))
	for _, t := range tunnels {
		if b.Selects(t.labels) {
			if k == 0 {
				return t
			}
			k--
		}
	}
	return nil
}
