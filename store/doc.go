// Package store keeps sluice's configuration in a JetStream key-value
// bucket, SLUICE_STORE: accounts and their API keys, and the index that
// finds an API key from its bearer token. Every sluice process reads and
// writes the same bucket, so any of them can serve any request and any can
// die at any time.
//
// API keys are stored as the SHA-256 hash of their token; the token itself
// is returned once, by CreateAPIKey or Bootstrap, and never stored or
// logged.
//
// It is not the HTTP API: it checks the invariants of what it stores (ids,
// lengths, uniqueness, existence of the account) but knows nothing of
// requests, URIs or error codes.
package store
