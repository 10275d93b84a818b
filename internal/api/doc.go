// Package api is sluice's management API (the resource families given in
// Deps), and the Server every route of its listener goes through
// (docs/architecture.md#the-management-api), POST /events of package
// ingest included. The conventions those routes share, the
// Service-Version header, bearer API keys, the error body with its
// ERR_SLUICE_ codes, an operation id on every response and the front door
// that checks keys and bounds the requests in flight and their body
// bytes, are package apiconv's: the Server puts them in front of its
// routes. It is not the ingest path, and does not import package ingest,
// nor does ingest import it: both import apiconv, and cmd/sluice routes
// ingest's handler on the Server with Handle.
//
// Authorization has one form, checked before Config.Front (the traffic
// policy) and the key's check, so that both see the same key;
// apiconv.KeyID gives the front the key's id, from the one lookup the
// key's check reuses.
//
// It holds no state of its own: keys are checked against package store and
// audit events are published through package producer. AuditRelay
// publishes the audit events a change left in the store's outbox; while
// JetStream's storage refuses writes (Deps.Storage), requests that write
// are refused at once.
package api
