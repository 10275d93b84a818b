package firehose

import "github.com/sluicehq/sluice/sinks"

// codeClasses maps Firehose's own error codes of a whole PutRecordBatch
// call to their class; the codes every AWS service shares are sinks'.
var codeClasses = sinks.AWSErrorCodes{
	// Firehose answers ServiceUnavailableException when the delivery
	// stream's throughput limits are exceeded: its throttling.
	"ServiceUnavailableException": sinks.ClassThrottled,
	"LimitExceededException":      sinks.ClassThrottled,

	// The delivery stream's KMS key may not be used, is disabled, pending
	// deletion or gone: an operator fixes the key or its policy.
	"InvalidKMSResourceException": sinks.ClassAccessDenied,
	// The delivery stream takes only CloudWatch Logs' records (CloudWatch
	// Logs decompression is on): an operator fixes the delivery stream.
	"InvalidSourceException": sinks.ClassAccessDenied,

	// A delivery stream being created or updated; it passes.
	"ResourceInUseException":          sinks.ClassUnavailable,
	"ConcurrentModificationException": sinks.ClassUnavailable,

	"InvalidArgumentException": sinks.ClassInvalid,
}
