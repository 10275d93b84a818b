// Package producer is the Go API services use to publish events to sluice
// over NATS directly, without the HTTP ingest API. It validates each event
// against the catalogue, publishes it on its subject with Nats-Msg-Id set to
// its event_id (so a retried publish is stored once), keeps a bounded number
// of acknowledgements in flight, and reports the outcome of every event.
//
// sluice's own HTTP ingest publishes through it too, so both ways in share
// one path. It does not create the stream: a running sluice does that.
package producer
