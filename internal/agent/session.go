package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.ngrok.com/muxado/v2"

	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// Bounds of a session's calls.
const (
	// dialTimeout bounds the TCP connection, the TLS handshake and the
	// Auth call.
	dialTimeout = 15 * time.Second
	// callTimeout bounds a call to the edge (Bind, Unbind).
	callTimeout = 15 * time.Second
	// closeGrace is how long a closing session waits for its GoAway to
	// leave.
	closeGrace = 250 * time.Millisecond
	// acceptBacklog is how many streams the edge opened (public
	// connections) may wait for the agent's accept loop. muxado refuses
	// a stream whose backlog stays full for a millisecond, and the edge
	// answers its request 502: its default of 128 was outrun by bursts of
	// new connections on a loaded machine (bench tunnel, new-connection
	// mode). A waiting stream costs a few hundred bytes.
	acceptBacklog = 4096
)

// fatalAuthCodes are the edge's refusals of a session that a retry
// cannot change (edge/auth.go).
var fatalAuthCodes = []string{"ERR_SLUICE_601", "ERR_SLUICE_602", "ERR_SLUICE_605", "ERR_SLUICE_608"}

// refusedError is the edge's refusal of a session or a bind, in its
// words. fatal says retrying cannot help: the authtoken is refused.
type refusedError struct {
	msg   string
	fatal bool
}

func (e *refusedError) Error() string { return e.msg }

// session is one connection to an edge.
type session struct {
	addr string
	conn net.Conn
	mux  *muxado.Heartbeat
	// raw is the muxado session under mux, which can send a GoAway.
	raw muxado.Session
	id  string // the tunnel session's id, ts_...

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	binds map[string]*bind // by bind id
	// starting counts the labeled tunnels being started, whose ids
	// the edge chooses: it may open a stream for one before the agent
	// has read its answer. started is closed, and replaced, as each
	// start ends.
	starting int
	started  chan struct{}
}

// bindOf returns the bind of id. While labeled tunnels are being
// started, it waits for them before it gives up on an unknown id, or
// until ctx ends.
func (s *session) bindOf(ctx context.Context, id string) (*bind, bool) {
	for {
		s.mu.Lock()
		b, ok := s.binds[id]
		starting, started := s.starting, s.started
		s.mu.Unlock()
		if ok || starting == 0 {
			return b, ok
		}
		select {
		case <-started:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// startingLabeled counts a labeled tunnel's start on s, and returns what
// ends it.
func (s *session) startingLabeled() (done func()) {
	s.mu.Lock()
	s.starting++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.starting--
		close(s.started)
		s.started = make(chan struct{})
	}
}

// connect dials addr, authenticates and starts the heartbeat.
func (a *Agent) connect(ctx context.Context, addr string) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	raw, err := a.opts.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	conn := tls.Client(raw, &tls.Config{ServerName: host, RootCAs: a.opts.RootCAs, MinVersion: tls.VersionTLS12})
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, fmt.Errorf("TLS with %s: %w", addr, err)
	}
	s := &session{addr: addr, conn: conn, binds: map[string]*bind{}, started: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	s.raw = muxado.Client(tunnelwire.SessionConn(conn), &muxado.Config{AcceptBacklog: acceptBacklog})
	typed := muxado.NewTypedStreamSession(s.raw)
	s.mux = muxado.NewHeartbeat(typed, a.onHeartbeat(s), &muxado.HeartbeatConfig{
		Interval: a.opts.HeartbeatInterval, Tolerance: a.opts.HeartbeatTolerance, Type: tunnelwire.HeartbeatStream})
	resp, err := s.authenticate(ctx, a.auth())
	if err != nil {
		_ = s.mux.Close()
		return nil, err
	}
	s.id = resp.Extra.AgentSessionID
	s.mux.Start()
	return s, nil
}

// auth is the agent's Auth request.
func (a *Agent) auth() tunnelwire.Auth {
	host, _ := os.Hostname()
	can := ""
	cannot := "sluice-agent does not update itself: install the new version"
	interval, tolerance := a.opts.HeartbeatInterval, a.opts.HeartbeatTolerance
	return tunnelwire.Auth{
		Versions: []string{tunnelwire.Version},
		Extra: tunnelwire.AuthExtra{
			OS: runtime.GOOS, Arch: runtime.GOARCH, Authtoken: tunnelwire.Secret(a.opts.Authtoken),
			Version: a.opts.Version, Hostname: host, UserAgent: "sluice-agent/" + a.opts.Version,
			Metadata:          a.opts.Metadata,
			HeartbeatInterval: int64(interval), HeartbeatTolerance: int64(tolerance),
			StopUnsupportedError: &can, RestartUnsupportedError: &can, UpdateUnsupportedError: &cannot,
			ClientType: "sluice-agent",
		},
	}
}

// authenticate makes the Auth call.
func (s *session) authenticate(ctx context.Context, req tunnelwire.Auth) (tunnelwire.AuthResponse, error) {
	var resp tunnelwire.AuthResponse
	if err := s.call(ctx, tunnelwire.CallAuth, req, &resp); err != nil {
		return resp, fmt.Errorf("authenticating with %s: %w", s.addr, err)
	}
	if resp.Error != "" {
		// The edge refuses a session for good (a bad authtoken, an
		// inactive owner, a protocol it does not speak, an ingress
		// the credential may not use) or for now (too many sessions,
		// a store that could not answer): only the first is fatal.
		fatal := false
		for _, code := range fatalAuthCodes {
			fatal = fatal || strings.Contains(resp.Error, code)
		}
		return resp, &refusedError{msg: resp.Error, fatal: fatal}
	}
	return resp, nil
}

// call makes one call: it opens a stream of its type, writes req and
// reads the answer into resp.
func (s *session) call(ctx context.Context, call tunnelwire.Call, req, resp any) error {
	st, err := s.mux.OpenTypedStream(muxado.StreamType(call))
	if err != nil {
		return err
	}
	defer st.Close()
	deadline := time.Now().Add(callTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = st.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = st.SetDeadline(time.Now()) })
	defer stop()
	if err := tunnelwire.WriteMessage(st, req); err != nil {
		return err
	}
	return tunnelwire.ReadMessage(st, resp)
}

// onHeartbeat returns the heartbeat's callback for s: a late beat ends
// the session, an answered one is its latency.
func (a *Agent) onHeartbeat(s *session) func(time.Duration, bool) {
	return func(d time.Duration, timeout bool) {
		if timeout {
			a.opts.Log.Warn("heartbeat timeout, closing session", "addr", s.addr, "tolerance", a.opts.HeartbeatTolerance.String())
			s.cancel(fmt.Errorf("no heartbeat answered within %s", a.opts.HeartbeatTolerance))
			_ = s.conn.Close()
			return
		}
		a.mu.Lock()
		if a.session == s {
			a.status.Latency = d
		}
		a.mu.Unlock()
	}
}

// runSession serves s until it ends or ctx does: it binds the
// configuration's tunnels, then serves the edge's calls.
func (a *Agent) runSession(ctx context.Context, s *session) {
	log := a.opts.Log
	a.mu.Lock()
	a.session = s
	a.status.State, a.status.Edge, a.status.SessionID, a.status.ConnectedAt = "online", s.addr, s.id, time.Now()
	a.mu.Unlock()
	log.Info("client session established", "obj", "csess", "addr", s.addr, "session", s.id)
	if a.sessions++; a.sessions > 1 && len(a.opts.Tunnels) > 0 {
		log.Info("reconnected: starting the configuration's tunnels again", "obj", "tunnels", "count", len(a.opts.Tunnels))
	}

	var calls sync.WaitGroup
	calls.Go(func() { a.acceptCalls(s) })
	stop := context.AfterFunc(ctx, func() { a.closeSession(s) })
	defer stop()
	a.startConfigured(s)
	<-s.ctx.Done()
	_ = s.mux.Close()
	calls.Wait()

	a.mu.Lock()
	if a.session == s {
		a.session = nil
	}
	// Tunnels started through the local API end with the session; the
	// configuration's are bound again on the next.
	var ended []*tunnel
	for name, t := range a.tunnels {
		if !t.configured {
			delete(a.tunnels, name)
			ended = append(ended, t)
		}
		t.unbound()
	}
	a.mu.Unlock()
	for _, t := range ended {
		t.fwd.close()
	}
	a.setState("reconnecting", "")
}

// closeSession ends s, telling the edge why: a GoAway whose debug data is
// the reason, then the connection's end, so that the reason is the last
// word the edge reads.
func (a *Agent) closeSession(s *session) {
	a.mu.Lock()
	reason := a.stopReason
	a.mu.Unlock()
	if reason == "" {
		reason = "the agent was stopped"
	}
	if g, ok := s.raw.(goAwayer); ok {
		_ = g.GoAway(muxado.NoError, []byte(reason), time.Now().Add(closeGrace))
	}
	s.cancel(errors.New(reason))
	_ = s.conn.Close()
}

// goAwayer is the muxado session's GoAway, which its interface leaves
// out.
type goAwayer interface {
	GoAway(code muxado.ErrorCode, debug []byte, deadline time.Time) error
}

// acceptCalls serves the streams the edge opens: proxied connections
// and its calls, until the session ends.
func (a *Agent) acceptCalls(s *session) {
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		st, err := s.mux.AcceptTypedStream()
		if err != nil {
			if s.ctx.Err() == nil {
				s.cancel(fmt.Errorf("the connection to %s was lost: %w", s.addr, err))
			}
			return
		}
		switch tunnelwire.Call(st.StreamType()) {
		case tunnelwire.CallProxy:
			conns.Go(func() { a.proxy(s, st) })
		case tunnelwire.CallStop:
			a.answer(st, tunnelwire.ErrorResponse{})
			a.opts.Log.Info("the edge stopped the agent", "addr", s.addr)
			s.cancel(ErrEdgeStopped)
			_ = s.conn.Close()
		case tunnelwire.CallRestart:
			a.answer(st, tunnelwire.ErrorResponse{})
			a.opts.Log.Info("the edge asked the agent to restart: reconnecting", "addr", s.addr)
			s.cancel(errors.New("the edge asked the agent to restart"))
			_ = s.conn.Close()
		case tunnelwire.CallUpdate:
			a.answer(st, tunnelwire.ErrorResponse{Error: "sluice-agent does not update itself: install the new version"})
		case tunnelwire.CallStopTunnel:
			var req tunnelwire.StopTunnel
			_ = st.SetReadDeadline(time.Now().Add(callTimeout))
			if err := tunnelwire.ReadMessage(st, &req); err == nil {
				a.edgeStoppedBind(s, req)
			}
			a.answer(st, tunnelwire.ErrorResponse{})
		default:
			_ = st.Close()
		}
	}
}

// ErrEdgeStopped is Run's error when the edge asks the agent to stop.
var ErrEdgeStopped = errors.New("the edge stopped the agent")

// answer writes the agent's answer to a call of the edge and closes its
// stream.
func (a *Agent) answer(st muxado.TypedStream, resp any) {
	_ = st.SetDeadline(time.Now().Add(callTimeout))
	_ = tunnelwire.WriteMessage(st, resp)
	_ = st.Close()
}
