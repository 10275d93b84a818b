package sinks

import (
	"context"
	"regexp"
	"strconv"
)

// TargetType is one type of destination target (a Kinesis data stream, a
// Firehose delivery stream, a CloudWatch Logs log group): what the rest of
// sluice needs to know of it to accept, show and deliver to a target of the
// type, and to read back what a target of the type holds (sluice tail).
// Each sink's package declares its own (kinesis.TargetType, ...), and
// package sinks/desttype lists them: adding a type is a package and a line
// there.
type TargetType struct {
	// Name is the key of the target in a destination's JSON, "kinesis",
	// as in {"target": {"kinesis": {...}}}.
	Name string
	// ARNField is the member of the target that holds its ARN, such as
	// "stream_arn".
	ARNField string
	// ARN is what the target's ARN looks like.
	ARN ARNRule
	// Flag is the CLI flag that chooses the type and gives the target's
	// ARN, such as "kinesis-stream-arn", and FlagUsage its help.
	Flag, FlagUsage string
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

// ARNRule is what the ARN of one kind of AWS resource looks like, for
// checking an ARN a user gives and saying what is wrong with it.
type ARNRule struct {
	// What names the resource in messages: "Kinesis data stream".
	What string
	// Service is the ARN's service namespace: "kinesis".
	Service string
	// ResourcePrefix starts the resource part, before the name: "stream/".
	ResourcePrefix string
	// CheckName checks what follows ResourcePrefix and returns what is
	// wrong with it, or "".
	CheckName func(name string) string
	// Example is a valid ARN of the kind, for messages.
	Example string
}

// NameRule returns an ARNRule.CheckName of a resource name of at most
// maxLen characters matching pattern, whose characters allowed describes.
func NameRule(maxLen int, pattern *regexp.Regexp, allowed string) func(string) string {
	return func(name string) string {
		switch {
		case name == "":
			return "the name is missing"
		case len(name) > maxLen:
			return "the name is longer than " + strconv.Itoa(maxLen) + " characters"
		case !pattern.MatchString(name):
			return "the name " + strconv.Quote(name) + " may hold only " + allowed
		}
		return ""
	}
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
