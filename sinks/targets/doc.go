// Package targets describes each type of destination target (a Kinesis
// data stream, a Firehose delivery stream, a CloudWatch Logs log group) as
// data: its key in a destination's JSON, the member that holds its ARN,
// what the ARN looks like, and the CLI flag that gives it. It links no AWS
// SDK, so that the configuration store checks destinations with it, and
// each sink's package adds the behaviour of its type (sinks.TargetType:
// its sink, its tail reader).
//
// Adding a type is a Kind here, a line in All, and its sink's package.
package targets
