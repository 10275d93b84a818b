//go:build !race

package ingest_test

// ingestOnceEvents is how many events TestIngestStoresEveryEventOnce sends,
// twice.
const ingestOnceEvents = 100_000
