package firehose

import (
	"context"
	"regexp"

	"github.com/sluicehq/sluice/sinks"
)

// TargetType returns the Firehose delivery stream type of destination
// target: {"firehose": {"delivery_stream_arn": ..., "auth": ...}}.
func TargetType() sinks.TargetType {
	return sinks.TargetType{
		Name:     "firehose",
		ARNField: "delivery_stream_arn",
		ARN: sinks.ARNRule{
			What:           "Firehose delivery stream",
			Service:        "firehose",
			ResourcePrefix: "deliverystream/",
			CheckName:      checkName,
			Example:        "arn:aws:firehose:us-east-1:123456789012:deliverystream/sluice-events",
		},
		Flag:      "firehose-delivery-stream-arn",
		FlagUsage: "deliver to this Data Firehose delivery stream, such as arn:aws:firehose:us-east-1:123456789012:deliverystream/events",
		NewSink: func(ctx context.Context, t sinks.Target) (sinks.Sink, error) {
			return sinks.SinkOf(New(ctx, Config{DeliveryStreamARN: t.ARN, Auth: t.Auth, ExternalID: t.ExternalID, Endpoint: t.Endpoint}))
		},
		Tail: newTailReader,
	}
}

// deliveryStreamName is what a delivery stream's name may hold.
var deliveryStreamName = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

// checkName returns what is wrong with a delivery stream's name, or "".
func checkName(name string) string {
	return sinks.NameRule(maxNameLength, deliveryStreamName, "letters, digits, '_', '.' and '-'")(name)
}
