// Package appsession is the Go API the edge uses to record, refresh and
// end application sessions (specification section 2.7) in sluice, over
// NATS request/reply: the sessions the management API then lists, shows
// and revokes at /app/sessions. A running sluice serve (with the api role)
// answers the requests; several processes share them as one queue group.
// It is not for reading sessions: that is the API's.
//
// Each call is one request on its subject (SubjectRecord, SubjectRefresh,
// SubjectEnd) with a JSON body, answered with the session as recorded
// (Session) or with an error in the headers Nats-Service-Error-Code (400,
// 404, 409, 429, 500 or 503) and Nats-Service-Error, as the nats.go micro
// package writes them. docs/app-sessions.md documents the subjects and
// bodies for clients in other languages.
//
// # Rules
//
// sluice checks every field (see Record) and answers 400 naming the
// first that breaks a rule (*InvalidError). A session ends at its
// ExpiresAt, when it is revoked through the API, ended with End, or
// evicted: an account holds at most serve --max-app-sessions sessions
// (1000 by default), and a new session takes the place of the least
// recently active one, so that an end user logging in over and over
// cannot lock the account's other users out. A refresh of an ended
// session fails with ErrEnded: the edge should log the user out.
//
// # Trust
//
// The edge is trusted as a producer of events is (package producer): it
// names the account of each request, and a request only ever reads or
// changes sessions of the account it names. Give only the edge permission
// to publish on sluice.app_sessions.>.
package appsession
