// Package api is sluice's management API (the resource families given in
// Deps), and the conventions every endpoint of its listener shares
// (docs/architecture.md#the-management-api), POST /events of package
// ingest included: the Service-Version header, bearer API keys, the error
// body with its ERR_SLUICE_ codes (Error, WriteError), an operation id on
// every response, and the front door (FrontDoor), which checks keys and
// bounds the requests in flight and the body bytes they hold, for the
// process and for each account. It is not the ingest path, and does not
// import package ingest: ingest imports it, and cmd/sluice routes
// ingest's handler on the Server with Handle.
//
// Authorization has one form, checked before Config.Front (the traffic
// policy) and the key's check, so that both see the same key; KeyID gives
// the front the key's id, from the one lookup the key's check reuses.
//
// It holds no state of its own: keys are checked against package store and
// audit events are published through package producer. AuditRelay
// publishes the audit events a change left in the store's outbox; while
// JetStream's storage refuses writes (Storage), requests that write are
// refused at once.
package api
