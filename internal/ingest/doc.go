// Package ingest serves POST /events, the hot path of sluice's HTTP API:
// services post batches of events, which it admits through the front door
// (per-account shares of requests and body bytes in flight), validates
// whole against the catalogue, and stores in JetStream through a
// publisher, answering 202 with their ids.
//
// It is not the management API, and it owns none of the conventions it
// shares with it: the check of Service-Version and of the bearer key, the
// front door's admission, the error body with its ERR_SLUICE_ codes and
// the operation id come from package apiconv (apiconv.FrontDoor,
// apiconv.WriteError), a leaf that both import. It does not import package
// api, whose Server routes Handler on the listener both share, nor does
// api import it; cmd/sluice wires the two.
package ingest
