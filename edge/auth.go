package edge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"golang.ngrok.com/muxado/v2"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// Error codes the edge gives agents, in the messages their SDKs show.
const (
	codeBadToken      = "601"
	codeInactiveOwner = "602"
	codeSessionLimit  = "603"
	codeAuthUnknown   = "604"
	codeProtocol      = "605"
	codeLabeled       = "606"
	codePatch         = "607"
	codeWrongIngress  = "608"
)

// spokenVersions are the protocol versions the edge speaks, preferred
// first.
var spokenVersions = []string{tunnelwire.Version, "2"}

// authenticate serves the Auth call: it checks the authtoken and the
// credential's owner, records the session and answers. It returns false,
// having answered with the refusal, when the session is refused.
func (s *session) authenticate(st muxado.TypedStream) bool {
	e := s.edge
	_ = st.SetDeadline(time.Now().Add(callTimeout))
	var req tunnelwire.Auth
	if err := tunnelwire.ReadMessage(st, &req); err != nil {
		_ = tunnelwire.WriteMessage(st, tunnelwire.AuthResponse{Error: "the authentication request could not be read: " + err.Error()})
		return false
	}
	started := e.now()
	s.record = store.TunnelSession{
		AgentVersion: clip(req.Extra.Version, 255),
		IP:           hostOf(s.conn.RemoteAddr()),
		Metadata:     clip(req.Extra.Metadata, 4096),
		OS:           clip(req.Extra.OS, 64),
		Arch:         clip(req.Extra.Arch, 64),
		Region:       e.cfg.Region,
		Transport:    "muxado",
		UserAgent:    clip(req.Extra.UserAgent, 1024),
		StartedAt:    started,
		EdgeID:       e.cfg.EdgeID,
	}
	refuse := func(msg string) bool {
		e.Metrics.agentRefused.Add(1)
		_ = tunnelwire.WriteMessage(st, tunnelwire.AuthResponse{Error: msg})
		if s.credential.AccountID != "" {
			e.publishSession("agent_session_start.v0", s.record, s.credential, s.ingressHost, msg, started)
		}
		return false
	}
	version := ""
	for _, v := range req.Versions {
		if slices.Contains(spokenVersions, v) {
			version = v
			break
		}
	}
	if version == "" {
		return refuse(fmt.Sprintf("the agent speaks protocol versions %q, and the edge speaks %q: update the agent (ERR_SLUICE_%s)", req.Versions, spokenVersions, codeProtocol))
	}
	ctx, cancel := context.WithTimeout(e.ctx, callTimeout)
	defer cancel()
	cred, err := e.cfg.Store.AuthenticateCredential(ctx, req.Extra.Authtoken.Plain())
	switch {
	case errors.Is(err, store.ErrUnauthenticated):
		return refuse("the authtoken is not valid: it is no tunnel credential's token, or its credential was deleted. " +
			"Create a credential (POST /credentials) and give the agent the token of its answer (ERR_SLUICE_" + codeBadToken + ")")
	case err != nil:
		e.cfg.Log.Warn("checking an agent's authtoken", "error", err)
		return refuse("the edge could not check the authtoken just now: the agent tries again (ERR_SLUICE_" + codeAuthUnknown + ")")
	}
	s.credential = cred
	s.record.CredentialID = cred.ID
	if msg := e.checkOwner(ctx, cred); msg != "" {
		return refuse(msg)
	}
	if msg := e.checkIngress(ctx, cred, s.ingressHost); msg != "" {
		return refuse(msg)
	}
	record, err := e.cfg.Store.CreateTunnelSession(ctx, cred.AccountID, s.record)
	switch {
	case errors.Is(err, store.ErrLimit):
		return refuse(fmt.Sprintf("the account has as many agent sessions as it may: %v. Stop an agent, or end a session (POST /tunnel_sessions/{id}/stop) (ERR_SLUICE_%s)", err, codeSessionLimit))
	case err != nil:
		e.cfg.Log.Warn("recording an agent's session", "error", err)
		return refuse("the edge could not record the session just now: the agent tries again (ERR_SLUICE_" + codeAuthUnknown + ")")
	}
	s.record = record
	s.canStop = req.Extra.StopUnsupportedError != nil && *req.Extra.StopUnsupportedError == ""
	s.ctx, s.cancel = context.WithCancelCause(e.ctx)
	e.mu.Lock()
	e.sessions[record.ID] = s
	e.mu.Unlock()
	e.Metrics.sessions.Add(1)

	interval := clampDuration(time.Duration(req.Extra.HeartbeatInterval), 10*time.Second)
	tolerance := clampDuration(time.Duration(req.Extra.HeartbeatTolerance), 15*time.Second)
	s.beatLimit = interval + tolerance
	s.lastBeat.CompareAndSwap(0, time.Now().UnixNano())
	e.startHeartbeatCheck()

	_ = tunnelwire.WriteMessage(st, tunnelwire.AuthResponse{
		Version:  version,
		ClientID: record.ID,
		Extra: tunnelwire.AuthResponseExtra{
			Version: e.cfg.Version, Region: e.cfg.Region, AgentSessionID: record.ID,
		},
	})
	e.publishSession("agent_session_start.v0", record, cred, s.ingressHost, "", started)
	return true
}

// checkOwner returns why the credential may not start a session, or "":
// its bot user is inactive or gone.
func (e *Edge) checkOwner(ctx context.Context, cred store.Credential) string {
	if cred.OwnerID == "" {
		return ""
	}
	bot, err := e.cfg.Store.GetBotUser(ctx, cred.AccountID, cred.OwnerID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Sprintf("the credential's bot user %s was deleted: create a credential for an active owner (ERR_SLUICE_%s)", cred.OwnerID, codeInactiveOwner)
	case err != nil:
		e.cfg.Log.Warn("reading a credential's bot user", "error", err)
		return "the edge could not check the credential's owner just now: the agent tries again (ERR_SLUICE_" + codeAuthUnknown + ")"
	case !bot.Active:
		return fmt.Sprintf("the credential's bot user %s is inactive: activate it (PATCH /bot_users/%s with \"active\": true), or use another credential (ERR_SLUICE_%s)", bot.ID, bot.ID, codeInactiveOwner)
	}
	return ""
}

// checkIngress returns why the credential may not connect through the
// name the agent connected to, or "". The agent ingresses are checked
// by the edge's IngressOwner, when configured.
func (e *Edge) checkIngress(ctx context.Context, cred store.Credential, host string) string {
	if e.cfg.IngressOwner == nil || host == "" {
		return ""
	}
	owner, ok, err := e.cfg.IngressOwner(ctx, host)
	switch {
	case err != nil:
		e.cfg.Log.Warn("finding the agent ingress of a connection", "host", host, "error", err)
		return "the edge could not check the ingress the agent connected to just now: the agent tries again (ERR_SLUICE_" + codeAuthUnknown + ")"
	case ok && owner != cred.AccountID:
		return fmt.Sprintf("%s is another account's agent ingress: connect with a credential of that account, or through the service's own address (ERR_SLUICE_%s)", host, codeWrongIngress)
	}
	return ""
}

// clampDuration returns d within the heartbeat bounds, or def for 0.
func clampDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return min(max(d, minHeartbeat), maxHeartbeat)
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// hostOf returns the IP of an address, or its string.
func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
