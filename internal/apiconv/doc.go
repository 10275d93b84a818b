// Package apiconv holds the conventions every route of sluice's API
// listener shares: error codes and bodies, the front door, the operation
// id. The management API (package api) and POST /events (package ingest)
// both follow them, and neither owns them: each imports this package, and
// it imports neither.
//
// The conventions are the Service-Version header (SupportedVersion),
// bearer API keys of one form (CanonicalAuthorization, KeyID), the error
// body with its ERR_SLUICE_ codes (Error, WriteError), an operation id on
// every response (WithOperation, OperationID), the front door (FrontDoor),
// which checks keys and bounds the requests in flight and the body bytes
// they hold, for the process and for each account, and the storage guard
// (GuardStorage), which refuses writes while JetStream's store does.
//
// It is not a router and serves no route of its own: package api's Server
// puts these pieces in front of its routes, and cmd/sluice routes ingest's
// handler on that Server.
package apiconv
