package desttype

import (
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/cloudwatchlogs"
	"github.com/sluicehq/sluice/sinks/firehose"
	"github.com/sluicehq/sluice/sinks/kinesis"
)

// All returns the types of destination target, in the order the CLI lists
// their flags.
func All() []sinks.TargetType {
	return []sinks.TargetType{
		kinesis.TargetType(),
		firehose.TargetType(),
		cloudwatchlogs.TargetType(),
	}
}

// Named returns the type whose Name is name, and whether there is one.
func Named(name string) (sinks.TargetType, bool) {
	for _, t := range All() {
		if t.Name == name {
			return t, true
		}
	}
	return sinks.TargetType{}, false
}
