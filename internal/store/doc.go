// Package store keeps sluice's configuration in a JetStream key-value
// bucket, SLUICE_STORE: accounts and their API keys, the index that finds an
// API key from its bearer token, and the event destinations, event
// subscriptions and bot users of each account. Every sluice process reads
// and writes the same bucket, so any of them can serve any request and any
// can die at any time; WatchConfig tells every process of every change of
// a destination or subscription.
//
// Changes are compare-and-swap writes on the revision of the key that was
// read (UpdateDestination, UpdateSubscription), retried from a fresh read
// when another writer came first, so two concurrent updates never silently
// lose one of them. A change made with WithAudit is written with its audit
// event, in one JetStream atomic batch, into an outbox the API publishes
// from (PendingAudits, AuditPublished; see outbox.go).
//
// API keys are stored as the SHA-256 hash of their token; the token itself
// is returned once, by CreateAPIKey or Bootstrap, and never stored or
// logged.
//
// The secret access key of a destination's static credentials is stored as
// given, in clear, because delivery signs its requests with it: access to
// the bucket (the NATS account and its permissions on $KV.SLUICE_STORE.>
// and the stream KV_SLUICE_STORE) must be restricted to sluice itself.
// The bucket keeps one revision per key, so a replaced or deleted secret is
// in no message a reader gets; its bytes stay in the stream's files until
// JetStream compacts them, which is why the files must be encrypted at rest
// (natsserver.Config.Key, or the external server's jetstream cipher). The
// secret is returned by the store's reads and its watch, and never by
// Destination.Redacted, nor shown by any LogValue or String.
//
// It is not the HTTP API: it checks the invariants of what it stores (ids,
// lengths, uniqueness, existence of the account and of the destinations a
// subscription names, the ARNs, filters and field selections of
// destinations and subscriptions) but knows nothing of requests, URIs or
// error codes. Its errors say which field is wrong (*ValidationError) so
// that the HTTP API can map them.
package store
