//go:build !race

package pipeline_test

// kinesisEvents is how many events TestDeliverToKinesis routes through
// kinesalite.
const kinesisEvents = 50_000

// throttledEvents is how many events TestFaultsThrottled delivers into
// each destination.
const throttledEvents = 20_000
