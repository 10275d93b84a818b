package destinations

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/cloudwatchlogs"
	"github.com/sluicehq/sluice/sinks/firehose"
	"github.com/sluicehq/sluice/sinks/kinesis"
	"github.com/sluicehq/sluice/store"
)

// ErrUnsupported is returned for a target no sink writes yet.
var ErrUnsupported = errors.New("no sink writes to this target yet")

// New returns the sink of the destination: the pipeline.SinkFactory. It
// does no network I/O. The role of a destination is assumed with the
// destination's account id as the external id.
//
// For a CloudWatch Logs destination it returns the log group's sink, a
// sinks.SubscriptionSink: each subscription's events go to a log stream of
// their own, through ForSubscription(the subscription's id). The group's
// sink itself has no log stream, and its Writes fail with a
// *sinks.DestinationError of ClassInvalid.
//
// It returns an error wrapping the sink's ErrConfig when the destination's
// target or credentials cannot work, and ErrUnsupported for a target it
// does not know.
func New(ctx context.Context, d store.Destination) (sinks.Sink, error) {
	return newSink(ctx, d, "")
}

// NewForSubscription returns the sink writing the events of one
// subscription to the destination: for CloudWatch Logs, into the log stream
// named subscriptionID; for the other targets, the sink New returns. Its
// errors are New's.
func NewForSubscription(ctx context.Context, d store.Destination, subscriptionID string) (sinks.Sink, error) {
	if subscriptionID == "" {
		return nil, fmt.Errorf("destination %s: no subscription id", d.ID)
	}
	return newSink(ctx, d, subscriptionID)
}

// newSink returns the sink of the destination, writing to the log stream
// logStream for CloudWatch Logs.
func newSink(ctx context.Context, d store.Destination, logStream string) (sinks.Sink, error) {
	var (
		sink sinks.Sink
		err  error
	)
	switch t := d.Target; {
	case t.Kinesis != nil:
		sink, err = kinesis.New(ctx, kinesis.Config{
			StreamARN:  t.Kinesis.StreamARN,
			Auth:       awsAuth(t.Kinesis.Auth),
			ExternalID: d.AccountID,
		})
	case t.Firehose != nil:
		sink, err = firehose.New(ctx, firehose.Config{
			DeliveryStreamARN: t.Firehose.DeliveryStreamARN,
			Auth:              awsAuth(t.Firehose.Auth),
			ExternalID:        d.AccountID,
		})
	case t.CloudWatchLogs != nil:
		sink, err = cloudwatchlogs.New(ctx, cloudwatchlogs.Config{
			LogGroupARN: t.CloudWatchLogs.LogGroupARN,
			LogStream:   logStream,
			Auth:        awsAuth(t.CloudWatchLogs.Auth),
			ExternalID:  d.AccountID,
		})
	default:
		return nil, fmt.Errorf("destination %s has no target: %w", d.ID, ErrUnsupported)
	}
	if err != nil {
		return nil, fmt.Errorf("destination %s: %w", d.ID, err)
	}
	return sink, nil
}

// awsAuth returns the sinks' form of a destination's credentials.
func awsAuth(a store.AWSAuth) sinks.AWSAuth {
	switch {
	case a.Role != nil:
		return sinks.AWSAuth{RoleARN: a.Role.RoleARN}
	case a.Creds != nil:
		return sinks.AWSAuth{AccessKeyID: a.Creds.AccessKeyID, SecretAccessKey: a.Creds.SecretAccessKey}
	}
	return sinks.AWSAuth{}
}
