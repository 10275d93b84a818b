package edge

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"golang.ngrok.com/muxado/v2"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// Bounds of an agent's session.
const (
	// handshakeTimeout bounds the TLS handshake and the Auth call: a
	// connection that has not authenticated by then is closed.
	handshakeTimeout = 10 * time.Second
	// callTimeout bounds reading a call's request and writing its answer.
	callTimeout = 10 * time.Second
	// maxCallsInFlight bounds the calls of one session served at once.
	maxCallsInFlight = 16
	// minHeartbeat and maxHeartbeat bound the heartbeat interval and
	// tolerance an agent asks for.
	minHeartbeat = time.Second
	maxHeartbeat = 2 * time.Minute
)

// session is an authenticated agent's session.
type session struct {
	edge *Edge
	mux  muxado.TypedStreamSession
	conn net.Conn
	// lastBeat is when the agent's last heartbeat came, in Unix
	// nanoseconds (0: none yet); beatLimit how long it may go without one
	// before the session ends (its interval and tolerance).
	lastBeat  atomic.Int64
	beatLimit time.Duration
	// beating is set once the agent has its heartbeat stream.
	beating atomic.Bool

	record     store.TunnelSession
	credential store.Credential
	// ingressHost is the name the agent connected to (its TLS server
	// name).
	ingressHost string
	// canStop says the agent serves the Stop call.
	canStop bool

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	binds map[string]*endpoint // by bind id
}

// errStopped ends a session the edge closes itself; the cause says why.
var errStopped = errors.New("the edge is stopping")

// serveAgent runs an agent's connection: TLS, authentication, then its
// calls until it goes away or the edge ends it.
func (e *Edge) serveAgent(conn net.Conn) {
	defer conn.Close()
	handshaking := true
	doneHandshaking := func() {
		if handshaking {
			handshaking = false
			<-e.handshakes
		}
	}
	defer doneHandshaking()
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	serverName := ""
	if tc, ok := conn.(*tls.Conn); ok {
		ctx, cancel := context.WithTimeout(e.ctx, handshakeTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			e.Metrics.agentHandshakeFailed.Add(1)
			return
		}
		serverName = tc.ConnectionState().ServerName
	}
	_ = conn.SetDeadline(time.Time{})

	// Whole frames: a small frame is one TLS record, not two.
	mux := muxado.Server(tunnelwire.SessionConn(conn), &muxado.Config{})
	s := &session{edge: e, conn: conn, ingressHost: serverName, binds: make(map[string]*endpoint),
		mux: muxado.NewTypedStreamSession(mux)}
	defer s.mux.Close()

	// The first call must be Auth, within handshakeTimeout.
	authTimer := time.AfterFunc(handshakeTimeout, func() { _ = s.mux.Close() })
	first, err := s.accept()
	if err != nil {
		authTimer.Stop()
		return
	}
	if tunnelwire.Call(first.StreamType()) != tunnelwire.CallAuth {
		authTimer.Stop()
		_ = first.Close()
		return
	}
	ok := s.authenticate(first)
	authTimer.Stop()
	doneHandshaking()
	// Each call's stream ends with its answer, Auth's too: agents that
	// read the answer to the end of the stream (the Rust SDK's) wait for
	// it, and answer no heartbeat until then.
	_ = first.Close()
	if !ok {
		// Let the agent read the refusal before the connection goes.
		e.waitClosing(s)
		return
	}
	defer s.end()
	s.serveCalls()
}

// accept returns the agent's next call, answering its heartbeats on the
// way: a heartbeat stream gets a goroutine that echoes each beat and
// notes when it came (see Edge.checkHeartbeats).
func (s *session) accept() (muxado.TypedStream, error) {
	for {
		st, err := s.mux.AcceptTypedStream()
		if err != nil {
			return nil, err
		}
		if st.StreamType() != tunnelwire.HeartbeatStream {
			return st, nil
		}
		if !s.beating.CompareAndSwap(false, true) {
			// One heartbeat stream a session: more would each hold a
			// goroutine of the edge.
			_ = st.Close()
			continue
		}
		go s.echoHeartbeats(st)
	}
}

// echoHeartbeats answers the agent's heartbeats: 4 bytes, echoed.
func (s *session) echoHeartbeats(st muxado.Stream) {
	defer st.Close()
	var beat [4]byte
	for {
		if _, err := io.ReadFull(st, beat[:]); err != nil {
			return
		}
		s.lastBeat.Store(time.Now().UnixNano())
		if _, err := st.Write(beat[:]); err != nil {
			return
		}
	}
}

// waitClosing gives the agent up to a second to read a refusal and go
// away by itself before the connection is closed.
func (e *Edge) waitClosing(s *session) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			st, err := s.accept()
			if err != nil {
				return
			}
			_ = st.Close()
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	case <-e.ctx.Done():
	}
}

// serveCalls serves the agent's calls until the session ends.
func (s *session) serveCalls() {
	stop := context.AfterFunc(s.ctx, func() { _ = s.mux.Close() })
	defer stop()
	var calls sync.WaitGroup
	defer calls.Wait()
	// At most maxCallsInFlight calls of the session are served at once;
	// past them the loop stops accepting, and muxado's backlog, then its
	// refusals, hold the agent back.
	slots := make(chan struct{}, maxCallsInFlight)
	for {
		st, err := s.accept()
		if err != nil {
			reason := "the agent closed its session"
			if why := s.goAwayReason(); why != "" {
				reason += ": " + why
			}
			s.cancel(errors.New(reason))
			return
		}
		select {
		case slots <- struct{}{}:
		case <-s.ctx.Done():
			_ = st.Close()
			continue
		}
		calls.Go(func() {
			defer func() { <-slots }()
			defer st.Close()
			_ = st.SetDeadline(time.Now().Add(callTimeout))
			s.serveCall(tunnelwire.Call(st.StreamType()), st)
		})
	}
}

// maxGoAwayReason bounds the reason an agent gives for closing its
// session, as the session's stop event carries it.
const maxGoAwayReason = 256

// goAwayReason returns why the agent said it closed its session: the
// debug data of its GoAway, when it sent one other than muxado's own
// "no error" (sluice-agent says why it stops; SDKs do not).
func (s *session) goAwayReason() string {
	got := make(chan []byte, 1)
	go func() {
		_, _, debug := s.mux.Wait()
		got <- debug
	}()
	var debug []byte
	select {
	case debug = <-got:
	case <-time.After(time.Second):
		return ""
	}
	why := strings.ToValidUTF8(string(debug), "")
	why = strings.Map(func(r rune) rune {
		// Control and format characters (bidi overrides among them)
		// and line separators would change how the event reads.
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Zl, unicode.Zp) {
			return -1
		}
		return r
	}, why)
	if why == "no error" {
		return ""
	}
	return clip(why, maxGoAwayReason)
}

// serveCall answers one call of the agent.
func (s *session) serveCall(call tunnelwire.Call, st muxado.TypedStream) {
	switch call {
	case tunnelwire.CallBind:
		var req tunnelwire.Bind
		if err := tunnelwire.ReadMessage(st, &req); err != nil {
			_ = tunnelwire.WriteMessage(st, tunnelwire.BindResponse{Error: "the bind request could not be read: " + err.Error()})
			return
		}
		_ = tunnelwire.WriteMessage(st, s.bind(req))
	case tunnelwire.CallUnbind:
		var req tunnelwire.Unbind
		if err := tunnelwire.ReadMessage(st, &req); err != nil {
			_ = tunnelwire.WriteMessage(st, tunnelwire.ErrorResponse{Error: "the unbind request could not be read: " + err.Error()})
			return
		}
		_ = tunnelwire.WriteMessage(st, s.unbind(req.ID))
	case tunnelwire.CallServerInfo:
		_ = tunnelwire.WriteMessage(st, tunnelwire.ServerInfoResponse{Region: s.edge.cfg.Region})
	case tunnelwire.CallStartLabeled:
		var req tunnelwire.StartLabeled
		if err := tunnelwire.ReadMessage(st, &req); err != nil {
			_ = tunnelwire.WriteMessage(st, tunnelwire.StartLabeledResponse{Error: "the labeled tunnel's request could not be read: " + err.Error()})
			return
		}
		_ = tunnelwire.WriteMessage(st, s.startLabeled(req))
	case tunnelwire.CallPatchTunnelState:
		_ = tunnelwire.WriteMessage(st, tunnelwire.ErrorResponse{
			Error: "changing an endpoint's name, description, metadata or policy while it runs is not served: close the endpoint and bind it again (ERR_SLUICE_" + codePatch + ")"})
	case tunnelwire.CallAuth:
		_ = tunnelwire.WriteMessage(st, tunnelwire.AuthResponse{Error: "the session is authenticated already"})
	default:
		// An agent metrics stream or a call of a newer agent: the edge
		// offered neither, and closes the stream.
	}
}

// end unbinds every endpoint of the session, removes its record and
// reports its stop.
func (s *session) end() {
	cause := context.Cause(s.ctx)
	s.cancel(errStopped)
	s.mu.Lock()
	binds := make([]*endpoint, 0, len(s.binds))
	for _, ep := range s.binds {
		binds = append(binds, ep)
	}
	s.binds = map[string]*endpoint{}
	s.mu.Unlock()
	for _, ep := range binds {
		s.edge.removeEndpoint(ep)
	}
	e := s.edge
	e.mu.Lock()
	delete(e.sessions, s.record.ID)
	e.mu.Unlock()
	e.Metrics.sessions.Add(-1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.cfg.Store.DeleteTunnelSession(ctx, s.record.AccountID, s.record.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		e.cfg.Log.Warn("removing a tunnel session's record", "session", s.record.ID, "error", err)
	}
	reason := "the agent closed its session"
	if cause != nil {
		reason = cause.Error()
	}
	e.publishSession("agent_session_stop.v0", s.record, s.credential, s.ingressHost, reason, e.now())
}

// stop ends the session, telling why in its stop event.
func (s *session) stop(reason error) {
	s.cancel(reason)
	_ = s.mux.Close()
}
