package cloudwatchlogs

import "github.com/sluicehq/sluice/sinks"

// codeClasses maps CloudWatch Logs' own error codes of a whole call to
// their class; the codes every AWS service shares are sinks'.
// ResourceNotFoundException (shared: not_found) is a missing log stream,
// which the sink creates, or a missing log group, which it does not.
var codeClasses = sinks.AWSErrorCodes{
	"LimitExceededException": sinks.ClassThrottled,
	// Another change of the same resource at the same time; it passes.
	"OperationAbortedException": sinks.ClassUnavailable,

	"InvalidParameterException": sinks.ClassInvalid,
}

// Codes of the errors the sink acts on rather than classifies.
const (
	codeNotFound      = "ResourceNotFoundException"
	codeAlreadyExists = "ResourceAlreadyExistsException"
)
