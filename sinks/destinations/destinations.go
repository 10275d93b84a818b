// Package destinations builds the sink that writes to a stored event
// destination, choosing the sink package by the destination's target. It
// is the pipeline.SinkFactory of sluice serve and of the end-to-end tests.
package destinations

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/kinesis"
	"github.com/sluicehq/sluice/store"
)

// ErrUnsupported is returned for a target no sink writes yet.
var ErrUnsupported = errors.New("no sink writes to this target yet")

// New returns the sink of the destination. It does no network I/O. The
// role of a destination is assumed with the destination's account id as
// the external id.
func New(ctx context.Context, d store.Destination) (sinks.Sink, error) {
	switch t := d.Target; {
	case t.Kinesis != nil:
		return kinesis.New(ctx, kinesis.Config{
			StreamARN:  t.Kinesis.StreamARN,
			Auth:       awsAuth(t.Kinesis.Auth),
			ExternalID: d.AccountID,
		})
	case t.Firehose != nil:
		return nil, fmt.Errorf("destination %s, Firehose: %w", d.ID, ErrUnsupported)
	case t.CloudWatchLogs != nil:
		return nil, fmt.Errorf("destination %s, CloudWatch Logs: %w", d.ID, ErrUnsupported)
	}
	return nil, fmt.Errorf("destination %s has no target", d.ID)
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
