package cloudwatchlogs

import (
	"context"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/targets"
)

// TargetType returns the CloudWatch Logs log group type of destination
// target: {"cloudwatch_logs": {"log_group_arn": ..., "auth": ...}}. Its
// sink is a sinks.SubscriptionSink (see New).
func TargetType() sinks.TargetType {
	return sinks.TargetType{
		Kind: targets.CloudWatchLogs,
		NewSink: func(ctx context.Context, t sinks.Target) (sinks.Sink, error) {
			return sinks.SinkOf(New(ctx, Config{LogGroupARN: t.ARN, Auth: t.Auth, ExternalID: t.ExternalID, Endpoint: t.Endpoint}))
		},
		Tail: newTailReader,
	}
}
