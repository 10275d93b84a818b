package kinesis

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sluicehq/sluice/sinks"
)

// connectionRefused is the SDK's error of a request that reached no server.
var connectionRefused = &smithyhttp.RequestSendError{Err: &net.OpError{
	Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED),
}}

// generic returns an API error with a code the SDK has no type for.
func generic(code string) error {
	return &smithy.GenericAPIError{Code: code, Message: code + " happened"}
}

// credentialsFailure returns the SDK's error of a call whose credentials
// could not be had because of err, as markedCredentials marks it.
func credentialsFailure(err error) error {
	return &smithy.OperationError{ServiceID: "Kinesis", OperationName: "PutRecords",
		Err: errors.Join(errors.New("get identity"), &sinks.CredentialsError{Err: err})}
}

// stsError returns the error of an AssumeRole call.
func stsError(status int, err error) error {
	op := apiError(status, err).(*smithy.OperationError)
	op.ServiceID, op.OperationName = "STS", "AssumeRole"
	return op
}

// TestWriteWholeCallErrors checks the class of each failure of a whole
// PutRecords call, and that the sink makes exactly one call.
func TestWriteWholeCallErrors(t *testing.T) {
	msg := aws.String("the message")
	tests := []struct {
		name      string
		err       error
		wantClass sinks.Class
		wantCode  string
	}{
		{"stream not found", apiError(400, &types.ResourceNotFoundException{Message: msg}), sinks.ClassNotFound, "ResourceNotFoundException"},
		{"access denied", apiError(400, &types.AccessDeniedException{Message: msg}), sinks.ClassAccessDenied, "AccessDeniedException"},
		{"KMS access denied", apiError(400, &types.KMSAccessDeniedException{Message: msg}), sinks.ClassAccessDenied, "KMSAccessDeniedException"},
		{"KMS key disabled", apiError(400, &types.KMSDisabledException{Message: msg}), sinks.ClassAccessDenied, "KMSDisabledException"},
		{"KMS key pending deletion", apiError(400, &types.KMSInvalidStateException{Message: msg}), sinks.ClassAccessDenied, "KMSInvalidStateException"},
		{"KMS opt-in required", apiError(400, &types.KMSOptInRequired{Message: msg}), sinks.ClassAccessDenied, "KMSOptInRequired"},
		{"KMS key not found", apiError(400, &types.KMSNotFoundException{Message: msg}), sinks.ClassNotFound, "KMSNotFoundException"},
		{"unknown access key", apiError(400, generic("UnrecognizedClientException")), sinks.ClassBadCredentials, "UnrecognizedClientException"},
		{"wrong secret", apiError(400, generic("InvalidSignatureException")), sinks.ClassBadCredentials, "InvalidSignatureException"},
		{"expired session", apiError(400, generic("ExpiredTokenException")), sinks.ClassBadCredentials, "ExpiredTokenException"},
		{"no signature", apiError(400, generic("MissingAuthenticationTokenException")), sinks.ClassBadCredentials, "MissingAuthenticationTokenException"},
		{"stream throttled", apiError(400, &types.ProvisionedThroughputExceededException{Message: msg}), sinks.ClassThrottled, "ProvisionedThroughputExceededException"},
		{"KMS throttled", apiError(400, &types.KMSThrottlingException{Message: msg}), sinks.ClassThrottled, "KMSThrottlingException"},
		{"limit exceeded", apiError(400, &types.LimitExceededException{Message: msg}), sinks.ClassThrottled, "LimitExceededException"},
		{"front end throttled", apiError(400, generic("ThrottlingException")), sinks.ClassThrottled, "ThrottlingException"},
		{"internal failure", apiError(500, &types.InternalFailureException{Message: msg}), sinks.ClassUnavailable, "InternalFailureException"},
		{"service unavailable", apiError(503, generic("ServiceUnavailable")), sinks.ClassUnavailable, "ServiceUnavailable"},
		{"stream being updated", apiError(400, &types.ResourceInUseException{Message: msg}), sinks.ClassUnavailable, "ResourceInUseException"},
		{"validation", apiError(400, &types.ValidationException{Message: msg}), sinks.ClassInvalid, "ValidationException"},
		{"invalid argument", apiError(400, &types.InvalidArgumentException{Message: msg}), sinks.ClassInvalid, "InvalidArgumentException"},
		{"unknown code, 502", apiError(502, generic("BadGateway")), sinks.ClassUnavailable, "BadGateway"},
		{"unknown code, 429", apiError(429, generic("Slow")), sinks.ClassThrottled, "Slow"},
		{"unknown code, 401", apiError(401, generic("Who")), sinks.ClassBadCredentials, "Who"},
		{"unknown code, 403", apiError(403, generic("Nope")), sinks.ClassAccessDenied, "Nope"},
		{"unknown code, 404", apiError(404, generic("Where")), sinks.ClassNotFound, "Where"},
		{"unknown code, 413", apiError(413, generic("TooBig")), sinks.ClassInvalid, "TooBig"},
		{"connection refused", &smithy.OperationError{ServiceID: "Kinesis", OperationName: "PutRecords", Err: connectionRefused}, sinks.ClassUnavailable, ""},
		{"a response that does not parse", &smithy.OperationError{ServiceID: "Kinesis", OperationName: "PutRecords", Err: &smithy.DeserializationError{Err: errors.New("EOF")}}, sinks.ClassUnavailable, ""},

		{"role may not be assumed", credentialsFailure(stsError(403, generic("AccessDenied"))), sinks.ClassBadCredentials, "AccessDenied"},
		{"role's base session expired", credentialsFailure(stsError(400, &ststypes.ExpiredTokenException{Message: msg})), sinks.ClassBadCredentials, "ExpiredTokenException"},
		{"STS disabled in the region", credentialsFailure(stsError(403, &ststypes.RegionDisabledException{Message: msg})), sinks.ClassBadCredentials, "RegionDisabledException"},
		{"STS throttled", credentialsFailure(stsError(400, generic("Throttling"))), sinks.ClassThrottled, "Throttling"},
		{"STS failed", credentialsFailure(stsError(500, generic("InternalFailure"))), sinks.ClassUnavailable, "InternalFailure"},
		{"STS unreachable", credentialsFailure(&smithy.OperationError{ServiceID: "STS", OperationName: "AssumeRole", Err: connectionRefused}), sinks.ClassUnavailable, ""},
		{"no credentials in the chain", credentialsFailure(errors.New("no EC2 IMDS role found")), sinks.ClassBadCredentials, ""},
		{"instance metadata unreachable", credentialsFailure(&smithy.OperationError{ServiceID: "ec2imds", OperationName: "GetMetadata", Err: connectionRefused}), sinks.ClassBadCredentials, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeKinesis{putRecords: func(ctx context.Context, in *kinesis.PutRecordsInput) (*kinesis.PutRecordsOutput, error) {
				return nil, tt.err
			}}
			results, err := newFakeSink(t, fake).Write(context.Background(), records(3))
			if calls := fake.calls.Load(); calls != 1 {
				t.Errorf("PutRecords called %d times, want exactly 1", calls)
			}
			var de *sinks.DestinationError
			if !errors.As(err, &de) {
				t.Fatalf("Write = %v, %v; want a *sinks.DestinationError", results, err)
			}
			if results != nil {
				t.Errorf("Write returned results %v with its error", results)
			}
			if de.Class != tt.wantClass || de.Code != tt.wantCode {
				t.Errorf("class %s, code %q; want %s, %q (%v)", de.Class, de.Code, tt.wantClass, tt.wantCode, err)
			}
			if tt.wantCode != "" && de.Message == "" {
				t.Errorf("no message: %v", err)
			}
			if !errors.Is(err, tt.err) && !errors.Is(de.Err, tt.err) {
				t.Errorf("the error does not wrap the SDK's: %v", err)
			}
			wantTransient := tt.wantClass == sinks.ClassThrottled || tt.wantClass == sinks.ClassUnavailable
			if de.Transient() != wantTransient {
				t.Errorf("Transient() = %v, want %v", de.Transient(), wantTransient)
			}
		})
	}
}
