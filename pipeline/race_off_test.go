//go:build !race

package pipeline_test

// kinesisEvents is how many events TestDeliverToKinesis routes through
// kinesalite.
const kinesisEvents = 50_000
