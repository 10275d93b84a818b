package sinks

import (
	"context"

	"github.com/sluicehq/sluice/sinks/targets"
)

// TargetType is one type of destination target (a Kinesis data stream, a
// Firehose delivery stream, a CloudWatch Logs log group): what the rest of
// sluice needs to know of it to accept, show and deliver to a target of the
// type, and to read back what a target of the type holds (sluice tail).
// Its data (targets.Kind) links no AWS SDK, for the configuration store;
// each sink's package adds its behaviour (kinesis.TargetType, ...), and
// package sinks/desttype lists them.
type TargetType struct {
	targets.Kind
	// NewSink returns the sink of a target of the type. It does no network
	// I/O, and returns an error wrapping the sink's ErrConfig when the
	// target or its credentials cannot work.
	NewSink func(ctx context.Context, target Target) (Sink, error)
	// Tail returns the reader of a target of the type, for sluice tail.
	// It does no network I/O: a missing target shows on Read.
	Tail func(cfg TailConfig) (TailReader, error)
}

// Target is what a sink of any type is built from.
type Target struct {
	// ARN is the target's ARN.
	ARN string
	// Auth says which credentials sign the calls.
	Auth AWSAuth
	// ExternalID is the external id given to STS when assuming
	// Auth.RoleARN: the sluice account id the destination belongs to.
	ExternalID string
	// Endpoint, when set, is the service endpoint to call (an emulator's
	// URL); otherwise the SDK resolves it.
	Endpoint string
}

// SinkOf returns the sink and error of a sink package's New as a
// TargetType.NewSink returns them: no sink, rather than a nil pointer in a
// non-nil Sink, with an error.
func SinkOf[S Sink](sink S, err error) (Sink, error) {
	if err != nil {
		return nil, err
	}
	return sink, nil
}
