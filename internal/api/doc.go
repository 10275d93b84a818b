// Package api is sluice's HTTP API: the ingest endpoint POST /events, and
// the conventions every endpoint shares (docs/architecture.md#the-management-api): the
// Service-Version header, bearer API keys, the error body with its
// ERR_SLUICE_ codes, and an operation id on every response.
//
// Authorization has one form, checked before Config.Front (the traffic
// policy) and the key's check, so that both see the same key; KeyID gives
// the front the key's id, from the one lookup the key's check reuses.
//
// It holds no state of its own: keys are checked against package store and
// events are published through package producer. AuditRelay publishes the
// audit events a change left in the store's outbox; while JetStream's
// storage refuses writes (Storage), requests that write are refused at
// once.
package api
