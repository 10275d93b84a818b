// Package emulator is an in-memory AWS endpoint speaking the JSON 1.1
// protocol of the calls sluice and its users make to Amazon Kinesis Data
// Streams, Amazon Data Firehose and Amazon CloudWatch Logs, and STS's
// AssumeRole and GetCallerIdentity in the query protocol (so that roles
// work against it), with fault injection, so that sinks can be tested, and sluice tried, without an AWS
// account.
//
// It is for: the sink tests and the failing-destination tests (start one
// with package emulatortest, point the real AWS SDK at it with
// BaseEndpoint, inject throttling, 5xx, latency, AccessDenied or
// ResourceNotFound per stream, delivery stream or log group, and count the
// calls that reached it); `sluice emulator`, which runs one alone; and
// `sluice serve --dev`, which runs one inside serve with Config.AutoCreate.
//
// It is not for: production, or anything but loopback (its admin endpoints
// have no authentication and it checks only the form of a request's SigV4
// Authorization header, never its signature); performance figures of AWS
// (it has no shard or account quotas, only the faults it is told to
// inject); durable storage (everything lives in memory and is bounded:
// each stream, delivery stream and log group keeps its records for their
// retention, and of those its newest Config.MaxStoredRecords records and
// Config.MaxStoredBytes bytes; with
// Config.DataDir, a snapshot of it is saved to a file after changes and
// loaded at the next start, so that `sluice serve --dev` keeps it across
// restarts).
//
// # Faithful to AWS
//
// The per-call and per-record limits, error codes (__type), HTTP statuses,
// partial-failure shapes (FailedRecordCount, FailedPutCount,
// rejectedLogEventsInfo) and the chronological-order and 24-hour checks of
// PutLogEvents follow the AWS API reference; docs/emulator.md lists them and
// what differs. Resources are one namespace per service, whatever the
// region: a stream named orders is the same stream in every region, and the
// ARNs the emulator returns carry the region of the request's credential
// scope and Config.AccountID.
//
// # Lifecycle
//
// New starts nothing, but with Config.DataDir it locks the directory, one
// process at a time. Serve serves a listener until its context ends, then
// shuts down gracefully and releases the directory; Handler serves in a
// server of the caller's, who calls Close when done with it. The Go
// methods (SetFault, Counters, FirehoseRecords, ...) are safe for
// concurrent use with serving.
package emulator
