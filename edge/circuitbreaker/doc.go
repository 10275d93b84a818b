// Package circuitbreaker is the circuit breaker route module of HTTPS
// edges (spec 2.5): per route and per edge process, it counts the
// route's requests and failures over a rolling window of buckets, opens
// when enough of them failed, blocks while open, then lets one probe
// through at a time and closes when a probe succeeds.
//
// It is a pure state machine: the caller passes the time (Unix
// nanoseconds) to each call, and does the I/O. It knows nothing of HTTP:
// the edge says which requests failed (an upstream 5xx or a connection
// that failed).
package circuitbreaker
