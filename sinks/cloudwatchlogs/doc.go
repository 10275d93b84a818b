// Package cloudwatchlogs is the sink of Amazon CloudWatch Logs destinations:
// it writes a batch of records as log events of one log stream, with
// PutLogEvents, and says which were stored.
//
// Each record is one log event: its message the event's envelope, its
// timestamp the record's Timestamp (the event's event_timestamp) in
// milliseconds. The log group comes from the destination's ARN and must
// exist: sluice does not create groups. The log stream is named after the
// subscription whose events it holds (Config.LogStream, or
// Sink.ForSubscription) and is created by the first Write that finds it
// missing. No sequence tokens: CloudWatch Logs ignores them, and concurrent
// writers of one stream are fine.
//
// The client takes its region from the log group's ARN, its credentials
// from Config.Auth, and its endpoint from the SDK's standard
// AWS_ENDPOINT_URL_CLOUDWATCH_LOGS and AWS_ENDPOINT_URL variables, all as
// package sinks' LoadAWSConfig does for every AWS sink. New does no network
// I/O. The sink neither batches nor retries: package pipeline does.
//
// TargetType's Tail reads a log group back (sluice tail), every log stream
// of it, with FilterLogEvents.
//
// # Order and time span
//
// CloudWatch Logs takes a call's events only in timestamp order and
// spanning at most 24 hours. Write sorts the events, cuts them into runs
// spanning less than 24 hours, and makes one call per run; the results are
// in the caller's order whatever the calls were.
//
// # Errors
//
// An event CloudWatch Logs rejects (rejectedLogEventsInfo: older than 14
// days, older than the group's retention, more than 2 hours ahead) is
// Permanent with CodeTooOld, CodeExpired or CodeTooNew, so that the
// pipeline dead-letters it with the reason; no event is dropped silently.
//
// A call that failed as a whole is a *sinks.DestinationError whose Class
// comes from the error code (package sinks for those every service shares),
// else the HTTP status:
//
//	not_found        ResourceNotFoundException of the log group (a missing
//	                 stream is created); 404
//	access_denied    AccessDeniedException; 403
//	bad_credentials  UnrecognizedClientException, InvalidSignatureException,
//	                 ExpiredTokenException...; credentials that cannot be
//	                 had (AssumeRole refused, no credentials); 401
//	throttled        ThrottlingException, LimitExceededException, STS
//	                 throttling; 429
//	unavailable      ServiceUnavailableException, InternalFailure,
//	                 OperationAbortedException, STS failing or unreachable;
//	                 5xx; no answer at all
//	invalid          InvalidParameterException, ValidationException; other
//	                 4xx; a sink with no log stream
//
// # Limits
//
// An empty or non-UTF-8 message, or a timestamp before 1970, is Permanent
// and not sent, as CloudWatch Logs would refuse the whole call for it. The
// pipeline cuts batches to Limits and refuses a record of more than 1 MiB
// with the 26 bytes CloudWatch Logs counts per event before the sink; a
// batch beyond them (over 10,000 records or 1,048,576 bytes so counted, or
// with such a record) fails whole with ClassInvalid, unsent.
package cloudwatchlogs
