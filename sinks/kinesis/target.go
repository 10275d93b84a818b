package kinesis

import (
	"context"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/targets"
)

// TargetType returns the Kinesis data stream type of destination target:
// {"kinesis": {"stream_arn": ..., "auth": ...}}.
func TargetType() sinks.TargetType {
	return sinks.TargetType{
		Kind: targets.Kinesis,
		NewSink: func(ctx context.Context, t sinks.Target) (sinks.Sink, error) {
			return sinks.SinkOf(New(ctx, Config{StreamARN: t.ARN, Auth: t.Auth, ExternalID: t.ExternalID, Endpoint: t.Endpoint}))
		},
		Tail: newTailReader,
	}
}
