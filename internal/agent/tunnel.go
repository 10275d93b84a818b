package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
	"github.com/sluicehq/sluice/internal/agent/localapi"
	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// tunnel is a running tunnel: its binds on the current session (one per
// public scheme) and how it forwards.
type tunnel struct {
	cfg agentconfig.Tunnel
	// configured tunnels come from the configuration and are bound
	// again on every session; the others end with their session.
	configured bool
	meter      *localapi.Meter
	fwd        *forwarder

	mu    sync.Mutex
	binds []*bind // on the current session, in the order of cfg.Schemes
	// lastHost and lastAddr are the host (HTTP) or address (TCP) the
	// edge gave a tunnel that asked for none: the tunnel asks for them
	// again after a reconnect, to keep its URL.
	lastHost, lastAddr string
	// stopped is set by StopTunnel: a bind in flight as it stops is
	// closed as soon as it is made.
	stopped bool
}

// bind is one endpoint of a tunnel on a session.
type bind struct {
	id     string
	proto  string
	url    string
	tunnel *tunnel
}

// unbound forgets the tunnel's binds: their session ended.
func (t *tunnel) unbound() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.binds = nil
}

// info is the tunnel as the local API shows it: a labeled tunnel has
// its id, and no public URL (the routes that reach it have theirs).
func (t *tunnel) info() localapi.Tunnel {
	info := localapi.Tunnel{Name: t.cfg.Name, Proto: t.cfg.Proto, Config: t.cfg, Meter: t.meter}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.binds) > 0 {
		info.PublicURL = t.binds[0].url
		if t.cfg.Proto == "labeled" {
			info.ID = t.binds[0].id
		}
	}
	return info
}

// checkTunnel checks what the agent relies on in a tunnel it is given.
func checkTunnel(t agentconfig.Tunnel) error {
	switch t.Proto {
	case "http", "labeled":
		if u, err := url.Parse(t.Addr); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("addr %q is no http:// or https:// URL", t.Addr)
		}
		if t.Proto == "labeled" && len(t.Labels) == 0 {
			return errors.New("a labeled tunnel without labels")
		}
	case "tcp":
		if t.Addr == "" {
			return errors.New("no addr")
		}
	default:
		return fmt.Errorf("proto %q: give http or tcp, or labels", t.Proto)
	}
	if t.Name == "" {
		return errors.New("no name")
	}
	return nil
}

// schemes returns the public schemes a tunnel binds, in order.
func schemes(t agentconfig.Tunnel) []string {
	if t.Proto == "tcp" {
		return []string{"tcp"}
	}
	if len(t.Schemes) == 0 {
		return []string{"https", "http"}
	}
	return t.Schemes
}

// Tunnels returns the running tunnels, by name.
func (a *Agent) Tunnels() []localapi.Tunnel {
	a.mu.Lock()
	ts := make([]*tunnel, 0, len(a.tunnels))
	for _, t := range a.tunnels {
		ts = append(ts, t)
	}
	a.mu.Unlock()
	out := make([]localapi.Tunnel, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.info())
	}
	slices.SortFunc(out, func(x, y localapi.Tunnel) int {
		switch {
		case x.Name < y.Name:
			return -1
		case x.Name > y.Name:
			return 1
		}
		return 0
	})
	return out
}

// StartTunnel starts a tunnel on the current session, for as long as
// the session lasts. It returns localapi.ErrNotReady without a session,
// localapi.ErrTunnelExists for a name in use, and a *localapi.EdgeError
// when the edge refuses a bind.
func (a *Agent) StartTunnel(ctx context.Context, cfg agentconfig.Tunnel) (localapi.Tunnel, error) {
	if err := checkTunnel(cfg); err != nil {
		return localapi.Tunnel{}, err
	}
	a.mu.Lock()
	s := a.session
	if s == nil {
		a.mu.Unlock()
		return localapi.Tunnel{}, localapi.ErrNotReady
	}
	if _, ok := a.tunnels[cfg.Name]; ok {
		a.mu.Unlock()
		return localapi.Tunnel{}, localapi.ErrTunnelExists
	}
	t := a.newTunnel(cfg, false)
	a.tunnels[cfg.Name] = t
	a.mu.Unlock()
	err := a.bindTunnel(ctx, s, t)
	a.mu.Lock()
	switch {
	case err != nil:
	case a.session != s:
		// The session ended while the tunnel was bound: it ended too.
		err = localapi.ErrNotReady
	case a.tunnels[cfg.Name] != t:
		// StopTunnel ran as it was bound.
		err = localapi.ErrNoTunnel
	}
	if err != nil && a.tunnels[cfg.Name] == t {
		delete(a.tunnels, cfg.Name)
	}
	a.mu.Unlock()
	if err != nil {
		t.fwd.close()
		return localapi.Tunnel{}, err
	}
	return t.info(), nil
}

func (a *Agent) newTunnel(cfg agentconfig.Tunnel, configured bool) *tunnel {
	t := &tunnel{cfg: cfg, configured: configured, meter: localapi.NewMeter(nil)}
	t.fwd = newForwarder(t, a.opts.Captures, a.opts.Log)
	return t
}

// StopTunnel closes the tunnel's binds and forgets it; it returns
// localapi.ErrNoTunnel when no tunnel has the name.
func (a *Agent) StopTunnel(ctx context.Context, name string) error {
	a.mu.Lock()
	t, ok := a.tunnels[name]
	s := a.session
	delete(a.tunnels, name)
	a.mu.Unlock()
	if !ok {
		return localapi.ErrNoTunnel
	}
	t.mu.Lock()
	binds := t.binds
	t.binds, t.stopped = nil, true
	t.mu.Unlock()
	for _, b := range binds {
		if s == nil {
			continue
		}
		s.mu.Lock()
		delete(s.binds, b.id)
		s.mu.Unlock()
		var resp tunnelwire.ErrorResponse
		if err := s.call(ctx, tunnelwire.CallUnbind, tunnelwire.Unbind{ID: b.id}, &resp); err != nil {
			a.opts.Log.Warn("closing an endpoint", "name", name, "url", b.url, "err", err)
		}
	}
	t.fwd.close()
	a.opts.Log.Info("stopped tunnel", "name", name)
	return nil
}

// startConfigured binds the configuration's tunnels on a new session:
// the same addresses as before a reconnect, when the edge still has
// them free.
func (a *Agent) startConfigured(s *session) {
	for _, cfg := range a.opts.Tunnels {
		a.mu.Lock()
		t, ok := a.tunnels[cfg.Name]
		if !ok {
			t = a.newTunnel(cfg, true)
			a.tunnels[cfg.Name] = t
		}
		a.mu.Unlock()
		ctx, cancel := context.WithTimeout(s.ctx, callTimeout)
		err := a.bindTunnel(ctx, s, t)
		cancel()
		if err != nil {
			a.opts.Log.Error("failed to start tunnel", "name", cfg.Name, "err", err)
		}
	}
}

// bindTunnel binds each public scheme of t on s, or starts t when it is
// a labeled tunnel.
func (a *Agent) bindTunnel(ctx context.Context, s *session, t *tunnel) error {
	if t.cfg.Proto == "labeled" {
		return a.startLabeled(ctx, s, t)
	}
	t.mu.Lock()
	host, addr := t.cfg.Domain, t.cfg.RemoteAddr
	if host == "" {
		host = t.lastHost
	}
	if addr == "" {
		addr = t.lastAddr
	}
	t.mu.Unlock()
	for _, scheme := range schemes(t.cfg) {
		opts := tunnelwire.BindOptions{Hostname: host, TrafficPolicy: t.cfg.TrafficPolicy}
		if scheme == "tcp" {
			opts = tunnelwire.BindOptions{Addr: addr, TrafficPolicy: t.cfg.TrafficPolicy}
		}
		raw, _ := json.Marshal(opts)
		b := &bind{id: newBindID(), proto: scheme, tunnel: t}
		s.mu.Lock()
		s.binds[b.id] = b
		s.mu.Unlock()
		var resp tunnelwire.BindResponse
		err := s.call(ctx, tunnelwire.CallBind, tunnelwire.Bind{
			ID: b.id, Proto: scheme, ForwardsTo: t.cfg.Addr, ForwardsProto: t.cfg.Proto, Options: raw,
			Extra: tunnelwire.BindExtra{Name: t.cfg.Name, Metadata: t.cfg.Metadata, Description: t.cfg.Description},
		}, &resp)
		if err == nil && resp.Error != "" {
			err = &localapi.EdgeError{Msg: resp.Error}
		}
		if err != nil {
			s.mu.Lock()
			delete(s.binds, b.id)
			s.mu.Unlock()
			a.unbindAll(s, t)
			return err
		}
		b.url = resp.URL
		t.mu.Lock()
		if t.stopped {
			// StopTunnel ran while the edge bound it: close it.
			t.mu.Unlock()
			s.mu.Lock()
			delete(s.binds, b.id)
			s.mu.Unlock()
			var unbound tunnelwire.ErrorResponse
			_ = s.call(ctx, tunnelwire.CallUnbind, tunnelwire.Unbind{ID: b.id}, &unbound)
			a.unbindAll(s, t)
			return localapi.ErrNoTunnel
		}
		if u, err := url.Parse(resp.URL); err == nil {
			// The other schemes serve the host the edge chose, and a
			// reconnect asks for it again.
			if scheme == "tcp" {
				t.lastAddr, addr = u.Host, u.Host
			} else if host == "" || host == t.lastHost {
				t.lastHost, host = u.Hostname(), u.Hostname()
			}
		}
		t.binds = append(t.binds, b)
		t.mu.Unlock()
		a.opts.Log.Info("started tunnel", "obj", "tunnels", "name", t.cfg.Name, "addr", t.cfg.Addr, "url", resp.URL)
		if a.opts.OnTunnelStarted != nil {
			a.opts.OnTunnelStarted(localapi.Tunnel{Name: t.cfg.Name, PublicURL: resp.URL, Proto: t.cfg.Proto, Config: t.cfg, Meter: t.meter})
		}
	}
	return nil
}

// unbindAll closes the binds t has on s, after one of them failed.
func (a *Agent) unbindAll(s *session, t *tunnel) {
	t.mu.Lock()
	binds := t.binds
	t.binds = nil
	t.mu.Unlock()
	for _, b := range binds {
		s.mu.Lock()
		delete(s.binds, b.id)
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(s.ctx, callTimeout)
		var resp tunnelwire.ErrorResponse
		_ = s.call(ctx, tunnelwire.CallUnbind, tunnelwire.Unbind{ID: b.id}, &resp)
		cancel()
	}
}

// edgeStoppedBind forgets a bind the edge closed, and says why.
func (a *Agent) edgeStoppedBind(s *session, req tunnelwire.StopTunnel) {
	s.mu.Lock()
	b, ok := s.binds[req.ID]
	delete(s.binds, req.ID)
	s.mu.Unlock()
	if !ok {
		return
	}
	t := b.tunnel
	t.mu.Lock()
	t.binds = slices.DeleteFunc(t.binds, func(x *bind) bool { return x == b })
	left := len(t.binds)
	t.mu.Unlock()
	a.opts.Log.Warn("the edge closed an endpoint", "name", t.cfg.Name, "url", b.url, "err", req.Message, "code", req.ErrorCode)
	if left > 0 || t.configured {
		// A configured tunnel is bound again at the next session.
		return
	}
	a.mu.Lock()
	if a.tunnels[t.cfg.Name] == t {
		delete(a.tunnels, t.cfg.Name)
	}
	a.mu.Unlock()
	go t.fwd.close() // not on the accept loop: close waits for the server
}

// Replay sends req through the tunnel's forwarding, as if the edge had
// handed it over: the tunnel's capture records it again. It returns
// localapi.ErrNoTunnel when no tunnel has the name.
func (a *Agent) Replay(ctx context.Context, tunnelName string, req *http.Request) error {
	a.mu.Lock()
	t, ok := a.tunnels[tunnelName]
	a.mu.Unlock()
	if !ok || t.cfg.Proto == "tcp" {
		return localapi.ErrNoTunnel
	}
	return t.fwd.replay(ctx, req)
}

func newBindID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
