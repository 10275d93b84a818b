// Package api is sluice's HTTP API: the ingest endpoint POST /events, and
// the conventions every endpoint shares (docs/architecture.md#the-management-api): the
// Service-Version header, bearer API keys, the error body with its
// ERR_SLUICE_ codes, and an operation id on every response.
//
// It holds no state of its own: keys are checked against package store and
// events are published through package producer. AuditRelay publishes the
// audit events a change left in the store's outbox; while JetStream's
// storage refuses writes (Storage), requests that write are refused at
// once.
package api
