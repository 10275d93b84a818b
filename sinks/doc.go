// Package sinks defines what sluice asks of a destination service: write one
// batch of records and say, for each, whether it was accepted, failed and
// may be sent again, or can never be written. The sinks themselves are its
// subpackages (sinks/kinesis, sinks/firehose, sinks/cloudwatchlogs);
// sinks/sinktest is the conformance suite every sink passes.
//
// Each sink's package also declares its TargetType: the names of its
// target in a destination's JSON, the rules of its ARN, its CLI flag, how
// to build its sink, and its TailReader, which reads back what a target
// holds (sluice tail, package internal/tail). Package sinks/desttype lists
// the types, so that the rest of sluice names none of them.
//
// A sink does not batch, retry, wait or acknowledge: package pipeline does
// all of that, the same way for every sink. A sink's Limits tell the
// pipeline's batcher how to cut batches the service accepts.
//
// # AWS
//
// The AWS sinks share how they reach AWS and how they read its errors, so
// that every destination behaves alike:
//
//   - AWSAuth and AWSAccess say which credentials sign the calls (static
//     keys, a role assumed through STS with the sluice account id as
//     external id, or the default chain) and in which region (the target
//     ARN's, see ParseTargetARN);
//   - LoadAWSConfig builds the aws.Config a sink makes its client from: no
//     retries of the SDK's own, endpoints from the SDK's AWS_ENDPOINT_URL
//     variables, failures to get credentials marked as *CredentialsError;
//     AWSClient.Make makes the client from it, with the sink's own
//     endpoint when its Config gives one;
//   - AWSClient.WithBody sends a call's body as the sink encoded it
//     (package sinks/awsjson: straight from the records' bytes into a
//     pooled buffer), in place of the SDK's serialization of the input,
//     and AWSClient.WithAnswer reads a successful per-record answer
//     straight into the results (awsjson.Deserializer); the SDK still
//     signs, resolves the endpoint, and reads every error and every
//     answer the sink's reader leaves to it;
//   - Limits.Tally counts a batch as the sink encodes it, so that a batch
//     beyond Limits, which the pipeline does not make, fails whole,
//     unsent, with no pass of its own over the records;
//   - AWSErrorCodes.Classify turns the error of a whole call into a
//     *DestinationError of the right Class, from the service's own error
//     codes, those every AWS service shares, and the HTTP status.
//   - SentResults and Answer turn a per-record answer (PutRecords',
//     PutRecordBatch's), whole or entry by entry, into the results of the
//     records sent, a record the answer leaves out being Retryable.
//
// It is not the place for anything of one service only: PutRecords'
// partition keys, Firehose's framing and CloudWatch Logs' log streams are
// their sinks'.
package sinks
