package kinesis

import (
	"context"
	"regexp"

	"github.com/sluicehq/sluice/sinks"
)

// streamName is what a stream's name may hold.
var streamName = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

// TargetType returns the Kinesis data stream type of destination target:
// {"kinesis": {"stream_arn": ..., "auth": ...}}.
func TargetType() sinks.TargetType {
	return sinks.TargetType{
		Name:     "kinesis",
		ARNField: "stream_arn",
		ARN: sinks.ARNRule{
			What:           "Kinesis data stream",
			Service:        "kinesis",
			ResourcePrefix: "stream/",
			CheckName:      sinks.NameRule(128, streamName, "letters, digits, '_', '.' and '-'"),
			Example:        "arn:aws:kinesis:us-east-1:123456789012:stream/sluice-events",
		},
		Flag:      "kinesis-stream-arn",
		FlagUsage: "deliver to this Kinesis data stream, such as arn:aws:kinesis:us-east-1:123456789012:stream/events",
		NewSink: func(ctx context.Context, t sinks.Target) (sinks.Sink, error) {
			return sinks.SinkOf(New(ctx, Config{StreamARN: t.ARN, Auth: t.Auth, ExternalID: t.ExternalID, Endpoint: t.Endpoint}))
		},
		Tail: newTailReader,
	}
}
