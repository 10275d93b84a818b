// Package producer is the Go API services use to publish events to sluice
// over NATS directly, without the HTTP ingest API. It validates each event
// against the catalogue, publishes it on its subject with Nats-Msg-Id set to
// its account_id and event_id (schemas.MsgID: a retried publish is stored
// once, and event ids are unique per account, so one account's id never
// makes another's event a duplicate), keeps a bounded number
// of acknowledgements in flight, and reports the outcome of every event.
//
// sluice's own HTTP ingest publishes through it too, so both ways in share
// one path. It does not create the stream: a running sluice does that.
//
// # Trust
//
// A service that publishes over NATS is trusted by sluice's operator: it
// sets account_id itself, and the account ids and principals it writes are
// believed. The producer still refuses the audit kinds sluice emits about its
// own resources (schemas.Kind.EmittedBySluice, schemas.ErrEmittedBySluice):
// those are sluice's alone, and sluice makes them with
// schemas.Catalogue.EncodeBySluice, which no request to its HTTP API
// reaches. That refusal keeps honest services from publishing them by
// mistake; it does not stop a NATS client that publishes raw bytes. What
// does is NATS authorization: the NATS identity "producer" publishes on
// sluice.events.> only, with a deny entry for each of sluice's own kinds K
// (sluice.events.*.K, such as sluice.events.*.api_key_created.v0;
// docs/events.md lists them), and has no permission on sluice's other
// subjects and KV buckets. The embedded server of sluice serve has that
// identity, and writes its NKey seed in DATA_DIR/nats/producer.nk; an
// external cluster is given it as docs/operations.md shows. Its replies
// come on inboxes of its own: connect with
// nats.CustomInboxPrefix("_INBOX_producer") as well as the seed. POST
// /events needs no such care: the account comes from the API key and
// sluice's own kinds are refused whatever the key.
package producer
