package sinks

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluicehq/sluice/internal/retry"
)

// TailRecord is one delivered record as a target holds it, read back by a
// TailReader.
type TailRecord struct {
	// Data is the record: the event's envelope (Firehose's newline
	// removed).
	Data []byte
	// Where says where it was read: the shard, or the log stream.
	Where string
	// Time is when the destination stored it (Kinesis' approximate
	// arrival, CloudWatch's ingestion time), or the zero time.
	Time time.Time
}

// TailReader reads back the records of one target (sluice tail).
type TailReader interface {
	// Read calls emit with each record, in order within each shard or log
	// stream, until it has read everything (without Follow), ctx ends
	// (then it returns nil) or emit returns an error (then Read returns
	// it).
	Read(ctx context.Context, emit func(TailRecord) error) error
}

// TailConfig is what a type's TargetType.Tail makes the reader of a target
// from: package internal/tail finds the type by the ARN, loads the AWS
// configuration and fills in the rest from what sluice tail was asked.
type TailConfig struct {
	// AWS is the configuration to read with, in the ARN's region.
	AWS aws.Config
	// AWSFromEnvironment says AWS is the default chain's, loaded from the
	// environment, whose AWS_ENDPOINT_URL_<SERVICE> variables then apply;
	// false, it was given as it is (an emulator's).
	AWSFromEnvironment bool
	// Name is what follows ARN.ResourcePrefix in the target's ARN.
	Name string
	// Since is where to start: the records stored from then on. The zero
	// time starts at the end: only what arrives from now on.
	Since time.Time
	// Follow keeps reading as records arrive until ctx ends; otherwise Read
	// returns once it has read what is there.
	Follow bool
	// Poll is how often a reader that caught up asks again.
	Poll time.Duration
	// Missing, when set, is told that the target does not exist, what
	// naming it ("Kinesis stream edge"), and says whether the reader waits
	// for it to appear rather than return the error.
	Missing func(what string) bool
}

// WaitsFor reports whether the reader of a target that does not exist,
// what naming it, waits for it to appear (see Missing).
func (c TailConfig) WaitsFor(what string) bool {
	return c.Missing != nil && c.Missing(what)
}

// Wait waits Poll or until ctx ends, and reports whether ctx is still
// live.
func (c TailConfig) Wait(ctx context.Context) bool {
	return retry.Sleep(ctx, c.Poll) == nil
}

// IgnoreEnd returns err, or nil once ctx has ended: a TailReader's Read
// returns nil when ctx ends, whatever its last call failed with.
func IgnoreEnd(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
