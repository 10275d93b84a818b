package sinks

import (
	"context"
	"errors"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
)

// AWSErrorCodes maps the error codes of one AWS service to their class,
// beyond the codes every AWS service shares, which it may override.
type AWSErrorCodes map[string]Class

// awsSharedCodes are the error codes of the AWS front end every service
// shares (signatures, tokens, throttling, failures) and those all of
// sluice's services use alike.
var awsSharedCodes = AWSErrorCodes{
	"ResourceNotFoundException": ClassNotFound,

	"AccessDeniedException": ClassAccessDenied,
	"AccessDenied":          ClassAccessDenied,

	"UnrecognizedClientException":         ClassBadCredentials,
	"InvalidClientTokenId":                ClassBadCredentials,
	"InvalidSignatureException":           ClassBadCredentials,
	"SignatureDoesNotMatch":               ClassBadCredentials,
	"IncompleteSignature":                 ClassBadCredentials,
	"IncompleteSignatureException":        ClassBadCredentials,
	"MissingAuthenticationToken":          ClassBadCredentials,
	"MissingAuthenticationTokenException": ClassBadCredentials,
	"ExpiredTokenException":               ClassBadCredentials,
	"ExpiredToken":                        ClassBadCredentials,

	"ThrottlingException": ClassThrottled,

	"InternalFailure":             ClassUnavailable,
	"InternalFailureException":    ClassUnavailable,
	"InternalServerError":         ClassUnavailable,
	"ServiceUnavailable":          ClassUnavailable,
	"ServiceUnavailableException": ClassUnavailable,

	"ValidationException":    ClassInvalid,
	"SerializationException": ClassInvalid,
}

// Class returns the class of an error code: the service's own, else that of
// the codes every service shares, else throttled for the SDK's list of
// throttling codes. It returns false for a code it does not know.
func (c AWSErrorCodes) Class(code string) (Class, bool) {
	if class, ok := c[code]; ok {
		return class, true
	}
	if class, ok := awsSharedCodes[code]; ok {
		return class, true
	}
	if _, ok := retry.DefaultThrottleErrorCodes[code]; ok {
		return ClassThrottled, true
	}
	return "", false
}

// Classify returns ctx's error when ctx ended, and otherwise err, the error
// of a whole call to the service by a client of LoadAWSConfig, as a
// *DestinationError with the service's error code and message:
//
//   - the class of its error code (see Class), or else of its HTTP status:
//     429 throttled, 5xx unavailable, 401 bad_credentials, 403
//     access_denied, 404 not_found, another 4xx invalid;
//   - unavailable when no answer came (connection refused or reset, DNS,
//     timeouts) or the answer did not parse;
//   - for a *CredentialsError: throttled or unavailable when STS throttled,
//     failed or could not be reached while assuming the role, and
//     bad_credentials otherwise (the role may not be assumed, the external
//     id is wrong, the default chain has no credentials).
func (c AWSErrorCodes) Classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	de := &DestinationError{Err: err}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		de.Code, de.Message = apiErr.ErrorCode(), apiErr.ErrorMessage()
	}
	var credErr *CredentialsError
	if errors.As(err, &credErr) {
		de.Class = credentialsClass(credErr.Err)
		return de
	}
	de.Class = c.callClass(err)
	return de
}

// callClass returns the class of the error of a call that reached, or tried
// to reach, its service.
func (c AWSErrorCodes) callClass(err error) Class {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if class, ok := c.Class(apiErr.ErrorCode()); ok {
			return class
		}
	}
	var statusErr interface{ HTTPStatusCode() int }
	if !errors.As(err, &statusErr) {
		return ClassUnavailable
	}
	switch status := statusErr.HTTPStatusCode(); {
	case status == http.StatusTooManyRequests:
		return ClassThrottled
	case status >= 500:
		return ClassUnavailable
	case status == http.StatusUnauthorized:
		return ClassBadCredentials
	case status == http.StatusForbidden:
		return ClassAccessDenied
	case status == http.StatusNotFound:
		return ClassNotFound
	case status >= 400:
		return ClassInvalid
	}
	return ClassUnavailable
}

// credentialsClass returns the class of a failure to get credentials: that
// of STS's answer when it throttled or failed, bad_credentials otherwise.
func credentialsClass(err error) Class {
	var op *smithy.OperationError
	if errors.As(err, &op) && op.Service() == "STS" {
		if class := awsSharedCodes.callClass(err); class == ClassThrottled || class == ClassUnavailable {
			return class
		}
	}
	return ClassBadCredentials
}
