package edge

import (
	"errors"
	"fmt"
	"time"

	"golang.ngrok.com/muxado/v2"

	"github.com/sluicehq/sluice/internal/tunnelwire"
)

// The edge acts on what changes in the store (cmd/sluice feeds it the
// store's watch): each method below ends what a change takes away, at
// once, on this edge.

// CredentialDeleted ends the sessions of a deleted credential.
func (e *Edge) CredentialDeleted(accountID, credentialID string) {
	e.endSessions(func(s *session) bool {
		return s.record.AccountID == accountID && s.credential.ID == credentialID
	}, fmt.Errorf("the session's credential %s was deleted", credentialID))
}

// BotUserInactive ends the sessions of the credentials a bot user owns,
// when it was deactivated or deleted.
func (e *Edge) BotUserInactive(accountID, botUserID string) {
	e.endSessions(func(s *session) bool {
		return s.record.AccountID == accountID && s.credential.OwnerID == botUserID
	}, fmt.Errorf("the owner of the session's credential, bot user %s, was deactivated or deleted", botUserID))
}

// StopSession ends a session on request (POST
// /tunnel_sessions/{id}/stop): the agent is asked to stop, if it can,
// and the session is closed either way.
func (e *Edge) StopSession(accountID, sessionID string) {
	e.mu.Lock()
	s := e.sessions[sessionID]
	e.mu.Unlock()
	if s == nil || s.record.AccountID != accountID {
		return
	}
	if s.canStop {
		s.call(tunnelwire.CallStop, tunnelwire.Stop{})
	}
	s.stop(errors.New("the session was stopped through the API"))
}

// ReservedDomainGone closes the endpoints bound under a reserved domain
// that was deleted or no longer covers them, telling each agent why.
func (e *Edge) ReservedDomainGone(accountID, domainID string) {
	e.mu.Lock()
	var sessions []*session
	for _, s := range e.sessions {
		if s.record.AccountID == accountID {
			sessions = append(sessions, s)
		}
	}
	e.mu.Unlock()
	for _, s := range sessions {
		s.mu.Lock()
		var gone []*endpoint
		for id, ep := range s.binds {
			if ep.record.Domain == domainID {
				gone = append(gone, ep)
				delete(s.binds, id)
			}
		}
		s.mu.Unlock()
		for _, ep := range gone {
			e.removeEndpoint(ep)
			s.call(tunnelwire.CallStopTunnel, tunnelwire.StopTunnel{
				ID:        ep.bindID,
				Message:   fmt.Sprintf("the reserved domain %s that let the account serve %s was deleted: reserve it again, then start the endpoint", domainID, ep.url),
				ErrorCode: "ERR_SLUICE_" + codeNotReserved,
			})
		}
	}
}

// endSessions ends every session match reports, with reason.
func (e *Edge) endSessions(match func(*session) bool, reason error) {
	e.mu.Lock()
	var ending []*session
	for _, s := range e.sessions {
		if match(s) {
			ending = append(ending, s)
		}
	}
	e.mu.Unlock()
	for _, s := range ending {
		s.stop(reason)
	}
}

// serverCallTimeout bounds a call the edge makes to an agent.
const serverCallTimeout = 5 * time.Second

// call makes a call to the agent and waits for its answer, at most
// serverCallTimeout; what the agent answers is not needed.
func (s *session) call(c tunnelwire.Call, req any) {
	st, err := s.mux.OpenTypedStream(muxado.StreamType(c))
	if err != nil {
		return
	}
	defer st.Close()
	_ = st.SetDeadline(time.Now().Add(serverCallTimeout))
	if tunnelwire.WriteMessage(st, req) != nil {
		return
	}
	var resp tunnelwire.ErrorResponse
	_ = tunnelwire.ReadMessage(st, &resp)
}
