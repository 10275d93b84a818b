package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/sluicehq/sluice/internal/agent/localapi"
	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// startLabeled starts the labeled tunnel t on s. Unlike a bind, whose id
// the agent chooses, the edge answers with the tunnel's id: its Proxy
// streams for t carry it, and unbinding t names it.
func (a *Agent) startLabeled(ctx context.Context, s *session, t *tunnel) error {
	// ForwardsProto is left out: the SDKs send the upstream's
	// application protocol there, and the agent's is HTTP/1.1, what an
	// empty one means.
	done := s.startingLabeled()
	defer done()
	var resp tunnelwire.StartLabeledResponse
	err := s.call(ctx, tunnelwire.CallStartLabeled, tunnelwire.StartLabeled{
		Labels: t.cfg.Labels, ForwardsTo: t.cfg.Addr, Metadata: t.cfg.Metadata,
	}, &resp)
	switch {
	case err != nil:
		return err
	case resp.Error != "":
		return &localapi.EdgeError{Msg: resp.Error}
	case resp.ID == "":
		return errors.New("the edge started the labeled tunnel without giving its id")
	}
	b := &bind{id: resp.ID, proto: "labeled", tunnel: t}
	t.mu.Lock()
	if t.stopped {
		// StopTunnel ran while the edge started it: close it.
		t.mu.Unlock()
		var unbound tunnelwire.ErrorResponse
		_ = s.call(ctx, tunnelwire.CallUnbind, tunnelwire.Unbind{ID: b.id}, &unbound)
		return localapi.ErrNoTunnel
	}
	// Known to the session under t.mu, so that a StopTunnel that comes
	// next finds it there to forget.
	s.mu.Lock()
	s.binds[b.id] = b
	s.mu.Unlock()
	t.binds = append(t.binds, b)
	t.mu.Unlock()
	a.opts.Log.Info("started tunnel", "obj", "tunnels", "name", t.cfg.Name, "addr", t.cfg.Addr,
		"labels", strings.Join(t.cfg.LabelPairs(), ","), "id", b.id)
	if a.opts.OnTunnelStarted != nil {
		a.opts.OnTunnelStarted(localapi.Tunnel{Name: t.cfg.Name, ID: b.id, Proto: t.cfg.Proto, Config: t.cfg, Meter: t.meter})
	}
	return nil
}
