package sinks

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// callError returns the SDK's error of a call of service whose HTTP answer
// had that status and error code.
func callError(service string, status int, code string) error {
	return &smithy.OperationError{
		ServiceID:     service,
		OperationName: "Put",
		Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{
				Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
				Err:      &smithy.GenericAPIError{Code: code, Message: code + " happened"},
			},
		},
	}
}

// noAnswer is the SDK's error of a call that reached no server.
var noAnswer = &smithy.OperationError{ServiceID: "Firehose", OperationName: "Put", Err: &smithyhttp.RequestSendError{Err: &net.OpError{
	Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED),
}}}

// TestClassify checks the class of whole-call errors: the service's own
// codes first, then the shared ones, the SDK's throttling codes, the HTTP
// status, and failures to get credentials.
func TestClassify(t *testing.T) {
	service := AWSErrorCodes{
		"ServiceUnavailableException": ClassThrottled, // overrides the shared class
		"InvalidParameterException":   ClassInvalid,
	}
	credentials := func(err error) error {
		return &smithy.OperationError{ServiceID: "Firehose", OperationName: "Put", Err: errors.Join(errors.New("get identity"), &CredentialsError{Err: err})}
	}
	sts := func(status int, code string) error {
		err := callError("STS", status, code).(*smithy.OperationError)
		err.OperationName = "AssumeRole"
		return err
	}
	tests := []struct {
		name string
		err  error
		want Class
		code string
	}{
		{"service's own code", callError("Firehose", 400, "InvalidParameterException"), ClassInvalid, "InvalidParameterException"},
		{"service overrides a shared code", callError("Firehose", 503, "ServiceUnavailableException"), ClassThrottled, "ServiceUnavailableException"},
		{"not found", callError("Firehose", 400, "ResourceNotFoundException"), ClassNotFound, "ResourceNotFoundException"},
		{"access denied", callError("Firehose", 400, "AccessDeniedException"), ClassAccessDenied, "AccessDeniedException"},
		{"unknown key", callError("Firehose", 400, "UnrecognizedClientException"), ClassBadCredentials, "UnrecognizedClientException"},
		{"wrong signature", callError("Firehose", 403, "InvalidSignatureException"), ClassBadCredentials, "InvalidSignatureException"},
		{"expired token", callError("Firehose", 400, "ExpiredTokenException"), ClassBadCredentials, "ExpiredTokenException"},
		{"throttled", callError("Firehose", 400, "ThrottlingException"), ClassThrottled, "ThrottlingException"},
		{"an SDK throttling code", callError("Firehose", 400, "RequestLimitExceeded"), ClassThrottled, "RequestLimitExceeded"},
		{"internal failure", callError("Firehose", 500, "InternalFailure"), ClassUnavailable, "InternalFailure"},
		{"validation", callError("Firehose", 400, "ValidationException"), ClassInvalid, "ValidationException"},
		{"unknown code, 429", callError("Firehose", 429, "Slow"), ClassThrottled, "Slow"},
		{"unknown code, 503", callError("Firehose", 503, "Later"), ClassUnavailable, "Later"},
		{"unknown code, 401", callError("Firehose", 401, "Who"), ClassBadCredentials, "Who"},
		{"unknown code, 403", callError("Firehose", 403, "Nope"), ClassAccessDenied, "Nope"},
		{"unknown code, 404", callError("Firehose", 404, "Where"), ClassNotFound, "Where"},
		{"unknown code, 400", callError("Firehose", 400, "Odd"), ClassInvalid, "Odd"},
		{"no answer", noAnswer, ClassUnavailable, ""},
		{"role may not be assumed", credentials(sts(403, "AccessDenied")), ClassBadCredentials, "AccessDenied"},
		{"STS throttled", credentials(sts(400, "Throttling")), ClassThrottled, "Throttling"},
		{"STS failed", credentials(sts(500, "InternalFailure")), ClassUnavailable, "InternalFailure"},
		{"STS unreachable", credentials(&smithy.OperationError{ServiceID: "STS", OperationName: "AssumeRole", Err: noAnswer.Err}), ClassUnavailable, ""},
		{"no credentials in the chain", credentials(errors.New("no EC2 IMDS role found")), ClassBadCredentials, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := service.Classify(t.Context(), tt.err)
			var de *DestinationError
			if !errors.As(err, &de) {
				t.Fatalf("Classify = %v, want a *DestinationError", err)
			}
			if de.Class != tt.want || de.Code != tt.code {
				t.Errorf("class %s, code %q; want %s, %q", de.Class, de.Code, tt.want, tt.code)
			}
			if tt.code != "" && de.Message == "" {
				t.Errorf("no message: %v", err)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("%v does not wrap the SDK's error", err)
			}
		})
	}
}

// TestClassifyEndedContext checks that the error of a call whose context
// ended is the context's, not a DestinationError.
func TestClassifyEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := AWSErrorCodes{}.Classify(ctx, noAnswer)
	var de *DestinationError
	if !errors.Is(err, context.Canceled) || errors.As(err, &de) {
		t.Fatalf("Classify = %v, want context.Canceled", err)
	}
}

// TestCodeClass checks Class for known and unknown codes.
func TestCodeClass(t *testing.T) {
	codes := AWSErrorCodes{"KMSThrottlingException": ClassThrottled}
	for code, want := range map[string]Class{
		"KMSThrottlingException":    ClassThrottled,
		"ResourceNotFoundException": ClassNotFound,
		"Throttling":                ClassThrottled,
		"SomethingNew":              "",
	} {
		got, ok := codes.Class(code)
		if got != want || ok != (want != "") {
			t.Errorf("Class(%q) = %s, %v; want %s", code, got, ok, want)
		}
	}
}
