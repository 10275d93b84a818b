// Package schemas is sluice's event catalogue: every event kind of the
// specification (section 6) with its typed fields, the envelope every event
// travels in, validation of producers' events against the catalogue, JSON
// Schema export, and a seedable sample generator for tests and benchmarks.
// It also reads its JSON back: Cursor is the one JSON reader of validation,
// of delivery's field selection and of the AWS sinks' answers, ReadHeader
// reads a stored envelope's header, and ParseEventTime is the one parser of
// events' timestamps.
//
// It is the single source of truth for event kinds and fields: the CEL
// environments of package filters, the events reference in docs/events.md and
// the exported JSON Schemas are all built from it.
//
// It is not for transport: it knows the JetStream subject an event belongs on,
// but publishing is package producer's job and storage package pipeline's.
package schemas
