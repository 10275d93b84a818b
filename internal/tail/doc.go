// Package tail reads back what sluice delivered to a destination, for log
// analysts and for checking a destination by hand (sluice tail): every
// shard of a Kinesis data stream, a CloudWatch Logs log group, or the
// records a Firehose delivery stream of sluice's AWS emulator received. It
// talks to AWS with the process's default credential chain and honours the
// SDK's AWS_ENDPOINT_URL* variables, so it reads real AWS and the emulator
// alike.
//
// It holds what is the same for every type of target: finding the type by
// the ARN (among those of package sinks/desttype), loading the AWS
// configuration and credentials, and waiting for a target of an emulator
// that does not exist yet (or, not following, reading it as empty). Each type's reader, which knows how its service keeps records,
// is its sink's package's (sinks.TargetType.Tail).
//
// It is not part of delivery (package pipeline, package sinks) and does not
// write anything.
package tail
