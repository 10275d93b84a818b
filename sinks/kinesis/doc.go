// Package kinesis is the sink of Amazon Kinesis Data Streams destinations: it
// writes a batch of records with one PutRecords call and says which were
// stored.
//
// Each record's partition key is its ID (the event's event_id), so the
// events of a stream spread evenly over its shards. The client takes its
// region from the stream's ARN, its credentials from Config.Auth (static
// keys, or a role assumed through STS with the sluice account id as external
// id, over the process's default credential chain), and its endpoint from
// the SDK's standard AWS_ENDPOINT_URL_KINESIS and AWS_ENDPOINT_URL
// variables, so an emulator (kinesalite, LocalStack) needs no
// sluice-specific setting: all as package sinks' LoadAWSConfig does for
// every AWS sink. New does no network I/O: a bad role or a missing stream
// shows on Write.
//
// The sink neither batches nor retries: the SDK's retryer is off (for STS
// too, and whatever AWS_MAX_ATTEMPTS says), so that package pipeline's
// backoff is the one retry policy.
//
// TargetType's Tail reads a stream back (sluice tail): every shard, with
// GetRecords, and the shards a resharding adds.
//
// # Errors
//
// A record Kinesis did not store is Retryable whatever its ErrorCode
// (ProvisionedThroughputExceededException, InternalFailure,
// KMSThrottlingException, or one not known yet): Kinesis reports no failure
// of a single record that a later call cannot fix. When every record of a
// batch failed with a code that is the destination's fault (a KMS key that
// may not be used), Write returns a *sinks.DestinationError instead, as for
// a failed call.
//
// A call that failed as a whole is a *sinks.DestinationError whose Class
// comes from the error code (package sinks for those every service shares),
// else the HTTP status:
//
//	not_found        ResourceNotFoundException, KMSNotFoundException; 404
//	access_denied    AccessDeniedException, KMSAccessDeniedException,
//	                 KMSDisabledException, KMSInvalidStateException,
//	                 KMSOptInRequired; 403
//	bad_credentials  UnrecognizedClientException, InvalidSignatureException,
//	                 ExpiredTokenException, MissingAuthenticationToken...;
//	                 credentials that cannot be had (AssumeRole refused, no
//	                 credentials in the default chain); 401
//	throttled        ProvisionedThroughputExceededException,
//	                 LimitExceededException, KMSThrottlingException, the
//	                 SDK's throttling codes, STS throttling; 429
//	unavailable      InternalFailure, ServiceUnavailable,
//	                 ResourceInUseException, STS failing or unreachable;
//	                 5xx; no answer at all (connection, DNS, timeout)
//	invalid          ValidationException, InvalidArgumentException; other 4xx
//
// # Limits
//
// The pipeline cuts batches to Limits and refuses a record over 1 MiB with
// its partition key before the sink; a batch beyond them (over 500 records
// or 5 MiB, or with such a record) fails whole with ClassInvalid, unsent. A
// record whose ID is no partition key, for which Kinesis would refuse the
// whole call, is Permanent and not sent.
//
// # StreamARN and kinesalite
//
// PutRecords is sent with both StreamARN and StreamName, which AWS allows:
// AWS uses the ARN, which names the stream's account exactly; kinesalite
// knows only StreamName (it requires it) and ignores the ARN.
package kinesis
