// Package firehose is the sink of Amazon Data Firehose destinations: it
// writes a batch of records to a delivery stream with one PutRecordBatch
// call and says which were stored.
//
// Each record is the event's envelope followed by a newline, so that the
// objects Firehose writes to S3 (or elsewhere) hold one event per line. The
// client takes its region from the delivery stream's ARN, its credentials
// from Config.Auth, and its endpoint from the SDK's standard
// AWS_ENDPOINT_URL_FIREHOSE and AWS_ENDPOINT_URL variables, all as package
// sinks' LoadAWSConfig does for every AWS sink. New does no network I/O: a
// bad role or a missing delivery stream shows on Write.
//
// The sink neither batches nor retries: the SDK's retryer is off, so that
// package pipeline's backoff is the one retry policy.
//
// # Reading back
//
// Firehose keeps no records to read back: TargetType's Tail (sluice tail)
// reads the records a delivery stream of sluice's AWS emulator received,
// through the emulator's admin endpoint, and returns ErrTailNeedsEmulator
// when no emulator's endpoint is set.
//
// # Errors
//
// A record Firehose did not store is Retryable whatever its ErrorCode
// (ServiceUnavailableException, InternalFailure, or one not known yet), and
// only those are sent again; FailedPutCount is not trusted over the
// per-record answers.
//
// A call that failed as a whole is a *sinks.DestinationError whose Class
// comes from the error code (package sinks for those every service shares),
// else the HTTP status:
//
//	not_found        ResourceNotFoundException; 404
//	access_denied    AccessDeniedException, InvalidKMSResourceException (the
//	                 stream's KMS key), InvalidSourceException (a stream
//	                 taking only CloudWatch Logs' records); 403
//	bad_credentials  UnrecognizedClientException, InvalidSignatureException,
//	                 ExpiredTokenException...; credentials that cannot be
//	                 had (AssumeRole refused, no credentials); 401
//	throttled        ServiceUnavailableException (Firehose's answer to a
//	                 stream over its throughput), LimitExceededException,
//	                 ThrottlingException, STS throttling; 429
//	unavailable      InternalFailure, ResourceInUseException,
//	                 ConcurrentModificationException, STS failing or
//	                 unreachable; 5xx; no answer at all
//	invalid          InvalidArgumentException, ValidationException; other 4xx
//
// # Limits
//
// The pipeline cuts batches to Limits and refuses a record larger than
// 1,000 KiB with its newline before the sink; a batch beyond them (over 500
// records or 4 MiB, or with such a record, newlines counted) fails whole
// with ClassInvalid, unsent.
package firehose
