//go:build race

package pipeline_test

// kinesisEvents is how many events TestDeliverToKinesis routes through
// kinesalite: a fifth of 50,000 under the race detector, which makes each
// several times slower (66 s for the whole).
const kinesisEvents = 10_000
