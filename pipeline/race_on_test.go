//go:build race

package pipeline_test

// kinesisEvents is how many events TestDeliverToKinesis routes through
// kinesalite: a fifth of 50,000 under the race detector, which makes each
// several times slower (66 s for the whole).
const kinesisEvents = 10_000

// throttledEvents is how many events TestFaultsThrottled delivers into
// each destination: a quarter of 20,000 under the race detector, which
// makes each several times slower (45 s for the whole). 5,000 still take
// dozens of calls of each destination and thousands of throttled records.
const throttledEvents = 5_000
