package firehose

import (
	"context"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/targets"
)

// TargetType returns the Firehose delivery stream type of destination
// target: {"firehose": {"delivery_stream_arn": ..., "auth": ...}}.
func TargetType() sinks.TargetType {
	return sinks.TargetType{
		Kind: targets.Firehose,
		NewSink: func(ctx context.Context, t sinks.Target) (sinks.Sink, error) {
			return sinks.SinkOf(New(ctx, Config{DeliveryStreamARN: t.ARN, Auth: t.Auth, ExternalID: t.ExternalID, Endpoint: t.Endpoint}))
		},
		Tail: newTailReader,
	}
}
