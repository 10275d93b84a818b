package kinesis

import (
	"context"
	"errors"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"github.com/sluicehq/sluice/sinks"
)

// codeClasses maps the error codes of a failed call to its class. The codes
// are Kinesis' (whole-call errors of PutRecords) and those of the AWS
// front end every service shares (signatures, tokens, throttling).
//
// The KMS codes are those of a stream encrypted with a key the credentials
// may not use (KMSAccessDeniedException), or one that is disabled, pending
// deletion or not enabled for the account (KMSDisabledException,
// KMSInvalidStateException, KMSOptInRequired): access_denied, as an operator
// fixes them with the key's policy or state; a key that does not exist
// (KMSNotFoundException) is not_found. KMSThrottlingException is
// throttling.
var codeClasses = map[string]sinks.Class{
	"ResourceNotFoundException": sinks.ClassNotFound,
	"KMSNotFoundException":      sinks.ClassNotFound,

	"AccessDeniedException":    sinks.ClassAccessDenied,
	"AccessDenied":             sinks.ClassAccessDenied,
	"KMSAccessDeniedException": sinks.ClassAccessDenied,
	"KMSDisabledException":     sinks.ClassAccessDenied,
	"KMSInvalidStateException": sinks.ClassAccessDenied,
	"KMSOptInRequired":         sinks.ClassAccessDenied,

	"UnrecognizedClientException":         sinks.ClassBadCredentials,
	"InvalidClientTokenId":                sinks.ClassBadCredentials,
	"InvalidSignatureException":           sinks.ClassBadCredentials,
	"SignatureDoesNotMatch":               sinks.ClassBadCredentials,
	"IncompleteSignatureException":        sinks.ClassBadCredentials,
	"MissingAuthenticationTokenException": sinks.ClassBadCredentials,
	"ExpiredTokenException":               sinks.ClassBadCredentials,
	"ExpiredToken":                        sinks.ClassBadCredentials,

	"ProvisionedThroughputExceededException": sinks.ClassThrottled,
	"LimitExceededException":                 sinks.ClassThrottled,
	"KMSThrottlingException":                 sinks.ClassThrottled,

	"InternalFailure":             sinks.ClassUnavailable,
	"InternalFailureException":    sinks.ClassUnavailable,
	"ServiceUnavailable":          sinks.ClassUnavailable,
	"ServiceUnavailableException": sinks.ClassUnavailable,
	// A stream being updated or deleted; the former passes.
	"ResourceInUseException": sinks.ClassUnavailable,

	"ValidationException":      sinks.ClassInvalid,
	"InvalidArgumentException": sinks.ClassInvalid,
	"SerializationException":   sinks.ClassInvalid,
}

// classify returns ctx's error when ctx ended, and otherwise err, an error
// of a whole PutRecords call, as a *sinks.DestinationError:
//
//   - the class of its error code (codeClasses, and the SDK's list of
//     throttling codes), or else of its HTTP status: 429 throttled, 5xx
//     unavailable, 401 bad_credentials, 403 access_denied, 404 not_found,
//     another 4xx invalid;
//   - unavailable when no answer came (connection refused or reset, DNS,
//     timeouts);
//   - for a failure to get credentials: throttled or unavailable when STS
//     throttled, failed or could not be reached while assuming the role, and
//     bad_credentials otherwise (the role may not be assumed, the external
//     id is wrong, the default chain has no credentials).
func classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	de := &sinks.DestinationError{Err: err}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		de.Code, de.Message = apiErr.ErrorCode(), apiErr.ErrorMessage()
	}
	var credErr *credentialsError
	if errors.As(err, &credErr) {
		de.Class = credentialsClass(credErr.err)
		return de
	}
	de.Class = callClass(err)
	return de
}

// callClass returns the class of the error of a call that reached, or tried
// to reach, its service.
func callClass(err error) sinks.Class {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if class, ok := codeClasses[apiErr.ErrorCode()]; ok {
			return class
		}
		if _, ok := retry.DefaultThrottleErrorCodes[apiErr.ErrorCode()]; ok {
			return sinks.ClassThrottled
		}
	}
	var statusErr interface{ HTTPStatusCode() int }
	if !errors.As(err, &statusErr) {
		return sinks.ClassUnavailable
	}
	switch status := statusErr.HTTPStatusCode(); {
	case status == http.StatusTooManyRequests:
		return sinks.ClassThrottled
	case status >= 500:
		return sinks.ClassUnavailable
	case status == http.StatusUnauthorized:
		return sinks.ClassBadCredentials
	case status == http.StatusForbidden:
		return sinks.ClassAccessDenied
	case status == http.StatusNotFound:
		return sinks.ClassNotFound
	case status >= 400:
		return sinks.ClassInvalid
	}
	return sinks.ClassUnavailable
}

// credentialsClass returns the class of a failure to get credentials: that
// of STS's answer when it throttled or failed, bad_credentials otherwise.
func credentialsClass(err error) sinks.Class {
	var op *smithy.OperationError
	if errors.As(err, &op) && op.Service() == "STS" {
		if class := callClass(err); class == sinks.ClassThrottled || class == sinks.ClassUnavailable {
			return class
		}
	}
	return sinks.ClassBadCredentials
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
		if r.Status != sinks.Retryable || !destinationWide(codeClasses[r.Code]) {
			return nil
		}
	}
	first := results[0]
	return &sinks.DestinationError{
		Class:   codeClasses[first.Code],
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

// markedCredentials marks the errors of getting credentials, which the SDK
// returns untyped inside the call's error, so that classify tells a role
// that cannot be assumed from a call the stream refused.
type markedCredentials struct {
	aws.CredentialsProvider
}

// Retrieve returns the credentials, or a *credentialsError.
func (m markedCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	creds, err := m.CredentialsProvider.Retrieve(ctx)
	if err != nil {
		return creds, &credentialsError{err: err}
	}
	return creds, nil
}

// credentialsError is a failure to get credentials.
type credentialsError struct {
	err error
}

func (e *credentialsError) Error() string { return "getting credentials: " + e.err.Error() }

func (e *credentialsError) Unwrap() error { return e.err }
