//go:build race

package ingest_test

// ingestOnceEvents is how many events TestIngestStoresEveryEventOnce sends,
// twice: a fifth of 100,000 under the race detector, which makes each
// request several times slower (160 s for the whole).
const ingestOnceEvents = 20_000
