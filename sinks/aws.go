package sinks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// AWSSessionName names the STS sessions of assumed roles, in the
// destination account's CloudTrail.
const AWSSessionName = "sluice-delivery"

// AWSAuth is how a sink gets its credentials: at most one of a role and a
// pair of static keys. With neither, the process's default credential chain
// (environment, shared files, the instance's or task's role) signs the
// calls.
type AWSAuth struct {
	// RoleARN is a role to assume with STS AssumeRole, using the default
	// credential chain's credentials and AWSAccess.ExternalID.
	RoleARN string
	// AccessKeyID and SecretAccessKey are static credentials, both or
	// neither.
	AccessKeyID, SecretAccessKey string
}

// String describes the credentials without their secret.
func (a AWSAuth) String() string {
	switch {
	case a.RoleARN != "":
		return "role " + a.RoleARN
	case a.AccessKeyID != "":
		return "access key " + a.AccessKeyID
	}
	return "default credential chain"
}

// LogValue is String, so that logging an AWSAuth never shows the secret.
func (a AWSAuth) LogValue() slog.Value { return slog.StringValue(a.String()) }

// MarshalJSON writes String as a JSON string, so that encoding an AWSAuth,
// or a value holding one such as a sink's Config (JSON logs of
// slog.JSONHandler included), never shows the secret.
func (a AWSAuth) MarshalJSON() ([]byte, error) { return json.Marshal(a.String()) }

// Validate returns an error saying what is wrong when the credentials
// cannot work: both a role and keys, half a key pair, a role ARN that is not
// an IAM role's, or a role without an external id. The error is plain: each
// sink wraps it in its own ErrConfig.
func (a AWSAuth) Validate(externalID string) error {
	switch {
	case a.RoleARN != "" && (a.AccessKeyID != "" || a.SecretAccessKey != ""):
		return errors.New("give a role or static keys, not both")
	case (a.AccessKeyID == "") != (a.SecretAccessKey == ""):
		return errors.New("give both the access key id and the secret access key")
	case a.RoleARN != "" && externalID == "":
		return errors.New("a role needs an external id")
	}
	if a.RoleARN != "" {
		role, err := arn.Parse(a.RoleARN)
		if err != nil || role.Service != "iam" || !strings.HasPrefix(role.Resource, "role/") {
			return fmt.Errorf("%q is not the ARN of an IAM role", a.RoleARN)
		}
	}
	return nil
}

// AWSAccess is what the client of a sink needs to reach AWS, whatever the
// service.
type AWSAccess struct {
	// Region is the target's region, from its ARN.
	Region string
	// Auth says which credentials sign the calls.
	Auth AWSAuth
	// ExternalID is the external id given to STS when assuming
	// Auth.RoleARN: the sluice account id the destination belongs to.
	ExternalID string
	// HTTPClient, when set, makes the HTTP calls (of the service and of
	// STS); otherwise the SDK's default client does. With AWS_CA_BUNDLE
	// set it must be an *awshttp.BuildableClient (aws/transport/http),
	// which the SDK can give the bundle to.
	HTTPClient aws.HTTPClient
}

// LoadAWSConfig returns the configuration a sink builds its service client
// from, with NewFromConfig. It does no network I/O. The configuration has:
//
//   - the region a.Region;
//   - the credentials of a.Auth: static keys, the role assumed through STS
//     with a.ExternalID and AWSSessionName on top of the default chain, or
//     the default chain; their failures are *CredentialsError, which
//     AWSErrorCodes.Classify tells from the service's refusals;
//   - no retries: aws.NopRetryer and RetryMaxAttempts 0, for STS and the
//     service alike, whatever AWS_MAX_ATTEMPTS says, so that package
//     pipeline's backoff is the one retry policy;
//   - an HTTP client that sends each request from a copy of its body (see
//     BodyCopyingHTTPClient), so that a call the service answered does not
//     fail, and get sent again, for a connection closed too early;
//   - the endpoints the SDK resolves, honouring AWS_ENDPOINT_URL and the
//     service's AWS_ENDPOINT_URL_<SERVICE>. A sink given an endpoint of its
//     own sets it as its client's BaseEndpoint option, which applies to its
//     service and not to STS.
//
// It returns the SDK's error when the process's AWS configuration
// (environment, shared files) cannot be loaded.
func LoadAWSConfig(ctx context.Context, a AWSAccess) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(a.Region),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
	}
	if a.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(a.HTTPClient))
	}
	if a.Auth.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(a.Auth.AccessKeyID, a.Auth.SecretAccessKey, "")))
	}
	awsConfig, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	// AWS_MAX_ATTEMPTS would wrap the retryer of every client made from
	// this configuration, STS's included.
	awsConfig.RetryMaxAttempts = 0
	awsConfig.HTTPClient = BodyCopyingHTTPClient(awsConfig.HTTPClient)
	if a.Auth.RoleARN != "" {
		role := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(awsConfig), a.Auth.RoleARN,
			func(o *stscreds.AssumeRoleOptions) {
				o.ExternalID = aws.String(a.ExternalID)
				o.RoleSessionName = AWSSessionName
			})
		awsConfig.Credentials = aws.NewCredentialsCache(role)
	}
	if awsConfig.Credentials != nil {
		awsConfig.Credentials = markedCredentials{awsConfig.Credentials}
	}
	return awsConfig, nil
}

// markedCredentials marks the errors of getting credentials, which the SDK
// returns untyped inside the call's error, so that classification tells a
// role that cannot be assumed from a call the service refused.
type markedCredentials struct {
	aws.CredentialsProvider
}

// Retrieve returns the credentials, or a *CredentialsError.
func (m markedCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	creds, err := m.CredentialsProvider.Retrieve(ctx)
	if err != nil {
		return creds, &CredentialsError{Err: err}
	}
	return creds, nil
}

// CredentialsError is a failure to get the credentials of a call: a role
// that cannot be assumed, STS unreachable, a default chain with no
// credentials. The clients of LoadAWSConfig return it inside the call's
// error.
type CredentialsError struct {
	// Err is the credential provider's error.
	Err error
}

// Error says that getting credentials failed, and why.
func (e *CredentialsError) Error() string { return "getting credentials: " + e.Err.Error() }

// Unwrap returns Err.
func (e *CredentialsError) Unwrap() error { return e.Err }

// ParseTargetARN parses the ARN of a sink's target, which must be one of
// service ("kinesis", "firehose", "logs") and name a region: the region of
// the sink's client. Checking the resource is the sink's. The error is
// plain, for the sink to wrap in its ErrConfig.
func ParseTargetARN(s, service string) (arn.ARN, error) {
	parsed, err := arn.Parse(s)
	if err != nil {
		return arn.ARN{}, fmt.Errorf("ARN %q: %w", s, err)
	}
	if parsed.Service != service {
		return arn.ARN{}, fmt.Errorf("ARN %q is of service %q, not %q", s, parsed.Service, service)
	}
	if parsed.Region == "" {
		return arn.ARN{}, fmt.Errorf("ARN %q has no region", s)
	}
	return parsed, nil
}
