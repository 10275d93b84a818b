package kinesis

import (
	"context"
	"errors"

	"github.com/sluicehq/sluice/sinks"
)

// codeClasses maps Kinesis' own error codes (whole-call errors of
// PutRecords, and per-record codes) to their class; the codes every AWS
// service shares are sinks'.
//
// The KMS codes are those of a stream encrypted with a key the credentials
// may not use (KMSAccessDeniedException), or one that is disabled, pending
// deletion or not enabled for the account (KMSDisabledException,
// KMSInvalidStateException, KMSOptInRequired): access_denied, as an operator
// fixes them with the key's policy or state; a key that does not exist
// (KMSNotFoundException) is not_found. KMSThrottlingException is
// throttling.
var codeClasses = sinks.AWSErrorCodes{
	"KMSNotFoundException": sinks.ClassNotFound,

	"KMSAccessDeniedException": sinks.ClassAccessDenied,
	"KMSDisabledException":     sinks.ClassAccessDenied,
	"KMSInvalidStateException": sinks.ClassAccessDenied,
	"KMSOptInRequired":         sinks.ClassAccessDenied,

	"ProvisionedThroughputExceededException": sinks.ClassThrottled,
	"LimitExceededException":                 sinks.ClassThrottled,
	"KMSThrottlingException":                 sinks.ClassThrottled,

	// A stream being updated or deleted; the former passes.
	"ResourceInUseException": sinks.ClassUnavailable,

	"InvalidArgumentException": sinks.ClassInvalid,
}

// classify returns ctx's error when ctx ended, and otherwise err, an error
// of a whole PutRecords call, as a *sinks.DestinationError (see
// sinks.AWSErrorCodes.Classify).
func classify(ctx context.Context, err error) error {
	return codeClasses.Classify(ctx, err)
}

// destinationError returns a *sinks.DestinationError when every record of
// a batch failed with a code that is the destination's fault rather than
// the record's (a KMS key that may not be used, a missing stream): the
// batch failed as a whole, and the pipeline should treat it so. It returns
// nil when any record was accepted or failed for a passing reason.
func destinationError(results []sinks.Result) error {
	if len(results) == 0 {
		return nil
	}
	for _, r := range results {
		class, _ := codeClasses.Class(r.Code)
		if r.Status != sinks.Retryable || !destinationWide(class) {
			return nil
		}
	}
	first := results[0]
	class, _ := codeClasses.Class(first.Code)
	return &sinks.DestinationError{
		Class:   class,
		Code:    first.Code,
		Message: first.Message,
		Err:     errors.New("every record failed: " + first.Code),
	}
}

// destinationWide reports whether class is a failure of the destination
// that needs an operator, as opposed to one that passes.
func destinationWide(class sinks.Class) bool {
	switch class {
	case sinks.ClassAccessDenied, sinks.ClassNotFound, sinks.ClassBadCredentials:
		return true
	}
	return false
}
