package emulator

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors of the Go API.
var (
	// ErrNotFound is returned for a stream, delivery stream, log group or
	// log stream that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists is returned when creating a resource that exists.
	ErrExists = errors.New("already exists")
	// ErrInvalidFault is returned for a fault that cannot be injected: an
	// unknown service, a fraction outside [0, 1], a per-record fault on
	// CloudWatch Logs.
	ErrInvalidFault = errors.New("invalid fault")
)

// apiError is the answer to a call that failed: Code goes in the body's
// __type, Status is the HTTP status.
type apiError struct {
	Code    string
	Message string
	Status  int
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// Is lets the Go API's callers match the sentinel an AWS error stands for.
func (e *apiError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Code == "ResourceNotFoundException"
	case ErrExists:
		return e.Code == "ResourceInUseException" || e.Code == "ResourceAlreadyExistsException"
	}
	return false
}

// clientError is a 400 answer, the status AWS's JSON services give every
// client error, throttling included.
func clientError(code, format string, args ...any) *apiError {
	return &apiError{Code: code, Message: fmt.Sprintf(format, args...), Status: http.StatusBadRequest}
}

// invalidParameter is the error of a request breaking a constraint of the
// API model: ValidationException for Kinesis and Firehose,
// InvalidParameterException for CloudWatch Logs.
func invalidParameter(svc Service, format string, args ...any) *apiError {
	code := "ValidationException"
	if svc == ServiceLogs {
		code = "InvalidParameterException"
	}
	return clientError(code, format, args...)
}

// constraintError is the message AWS gives a value breaking a constraint of
// the model: "1 validation error detected: Value 'x' at 'records.1.member.
// partitionKey' failed to satisfy constraint: Member must have length ...".
func constraintError(svc Service, value, path, constraint string) *apiError {
	return invalidParameter(svc, "1 validation error detected: Value %s at '%s' failed to satisfy constraint: Member %s", value, path, constraint)
}

// serializationError is the answer to a body that is not the JSON of the
// operation's input.
func serializationError(format string, args ...any) *apiError {
	return clientError("SerializationException", format, args...)
}

// unreadableBody is the 400 answer to a request whose body could not be
// read to its end (a malformed chunked encoding, a client that stopped
// sending).
func unreadableBody(err error) *apiError {
	return clientError("SerializationException", "The request body could not be read: %v. Send the whole body, of the length Content-Length gives.", err)
}

// serverError is a 5xx answer.
func serverError(code string, status int, message string) *apiError {
	return &apiError{Code: code, Message: message, Status: status}
}

// internalFailure is the 500 AWS answers when it failed inside.
func internalFailure() *apiError {
	return serverError("InternalFailure", http.StatusInternalServerError, "Internal service failure.")
}

// withMessage returns a copy of e saying message.
func (e *apiError) withMessage(message string) *apiError {
	out := *e
	out.Message = message
	return &out
}
