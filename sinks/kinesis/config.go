package kinesis

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
)

// ErrConfig is the error, wrapped, of a Config that cannot work.
var ErrConfig = errors.New("invalid kinesis sink config")

// Config is one Kinesis destination. It is comparable, so that a cache of
// sinks can be keyed by it.
type Config struct {
	// StreamARN is the stream's ARN,
	// arn:aws:kinesis:REGION:ACCOUNT:stream/NAME. The client's region is
	// the ARN's.
	StreamARN string
	// Auth says which credentials sign the calls.
	Auth Auth
	// ExternalID is the external id given to STS when assuming
	// Auth.RoleARN: the sluice account id the destination belongs to.
	// Required with a role.
	ExternalID string
	// Endpoint, when set, is the Kinesis endpoint to call (an emulator's
	// URL); otherwise the SDK resolves it, honouring AWS_ENDPOINT_URL_KINESIS
	// and AWS_ENDPOINT_URL. It applies to Kinesis only, not to STS.
	Endpoint string
	// HTTPClient, when set, makes the HTTP calls (of Kinesis and STS);
	// otherwise the SDK's default client does. With AWS_CA_BUNDLE set it
	// must be an *awshttp.BuildableClient (aws/transport/http), which the
	// SDK can give the bundle to.
	HTTPClient aws.HTTPClient
}

// LogValue shows the stream, the credentials without their secret and the
// endpoint.
func (cfg Config) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("stream_arn", cfg.StreamARN), slog.String("auth", cfg.Auth.String())}
	if cfg.Endpoint != "" {
		attrs = append(attrs, slog.String("endpoint", cfg.Endpoint))
	}
	return slog.GroupValue(attrs...)
}

// Auth is how the sink gets its credentials: at most one of a role and a
// pair of static keys. With neither, the process's default credential chain
// (environment, shared files, the instance's or task's role) signs the
// calls.
type Auth struct {
	// RoleARN is a role to assume with STS AssumeRole, using the default
	// credential chain's credentials and Config.ExternalID.
	RoleARN string
	// AccessKeyID and SecretAccessKey are static credentials, both or
	// neither.
	AccessKeyID, SecretAccessKey string
}

// String describes the credentials without their secret.
func (a Auth) String() string {
	switch {
	case a.RoleARN != "":
		return "role " + a.RoleARN
	case a.AccessKeyID != "":
		return "access key " + a.AccessKeyID
	}
	return "default credential chain"
}

// LogValue is String, so that logging an Auth never shows the secret.
func (a Auth) LogValue() slog.Value { return slog.StringValue(a.String()) }

// Validate returns an error wrapping ErrConfig when cfg cannot work: a
// StreamARN that is not a Kinesis stream's, both a role and keys, half a key
// pair, or a role without an external id.
func (cfg Config) Validate() error {
	if _, err := parseStreamARN(cfg.StreamARN); err != nil {
		return err
	}
	auth := cfg.Auth
	switch {
	case auth.RoleARN != "" && (auth.AccessKeyID != "" || auth.SecretAccessKey != ""):
		return fmt.Errorf("%w: give a role or static keys, not both", ErrConfig)
	case (auth.AccessKeyID == "") != (auth.SecretAccessKey == ""):
		return fmt.Errorf("%w: give both the access key id and the secret access key", ErrConfig)
	case auth.RoleARN != "" && cfg.ExternalID == "":
		return fmt.Errorf("%w: a role needs an external id", ErrConfig)
	}
	if auth.RoleARN != "" {
		role, err := arn.Parse(auth.RoleARN)
		if err != nil || role.Service != "iam" || !strings.HasPrefix(role.Resource, "role/") {
			return fmt.Errorf("%w: %q is not the ARN of an IAM role", ErrConfig, auth.RoleARN)
		}
	}
	return nil
}

// stream is what the sink needs of the stream's ARN.
type stream struct {
	arn, name, region string
}

// parseStreamARN returns the stream an ARN names, or an error wrapping
// ErrConfig.
func parseStreamARN(s string) (stream, error) {
	parsed, err := arn.Parse(s)
	if err != nil {
		return stream{}, fmt.Errorf("%w: stream ARN %q: %v", ErrConfig, s, err)
	}
	name, ok := strings.CutPrefix(parsed.Resource, "stream/")
	if parsed.Service != "kinesis" || !ok || name == "" || strings.Contains(name, "/") {
		return stream{}, fmt.Errorf("%w: %q is not the ARN of a Kinesis stream (arn:aws:kinesis:REGION:ACCOUNT:stream/NAME)", ErrConfig, s)
	}
	if parsed.Region == "" {
		return stream{}, fmt.Errorf("%w: stream ARN %q has no region", ErrConfig, s)
	}
	return stream{arn: s, name: name, region: parsed.Region}, nil
}
