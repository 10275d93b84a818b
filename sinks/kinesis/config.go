package kinesis

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluicehq/sluice/sinks"
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
	// Auth and ExternalID, required with a role, are the credentials
	// that sign the calls (see sinks.AWSAccess).
	Auth       sinks.AWSAuth
	ExternalID string
	// Endpoint, when set, is the Kinesis endpoint to call (an emulator's
	// URL); otherwise the SDK resolves it, honouring AWS_ENDPOINT_URL_KINESIS
	// and AWS_ENDPOINT_URL. It applies to Kinesis only, not to STS.
	Endpoint string
	// HTTPClient, when set, makes the HTTP calls, of Kinesis and STS (see
	// sinks.AWSAccess).
	HTTPClient aws.HTTPClient
}

// check returns what the sink needs of cfg, or an error wrapping ErrConfig
// when cfg cannot work.
func (cfg Config) check() (stream, error) {
	target, err := parseStreamARN(cfg.StreamARN)
	if err != nil {
		return stream{}, err
	}
	if err := cfg.Auth.Validate(cfg.ExternalID); err != nil {
		return stream{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return target, nil
}

// stream is what the sink needs of the stream's ARN.
type stream struct {
	arn, name, region string
}

// parseStreamARN returns the stream an ARN names, or an error wrapping
// ErrConfig.
func parseStreamARN(s string) (stream, error) {
	parsed, err := sinks.ParseTargetARN(s, "kinesis")
	if err != nil {
		return stream{}, fmt.Errorf("%w: stream %w", ErrConfig, err)
	}
	name, ok := strings.CutPrefix(parsed.Resource, "stream/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return stream{}, fmt.Errorf("%w: %q is not the ARN of a Kinesis stream (arn:aws:kinesis:REGION:ACCOUNT:stream/NAME)", ErrConfig, s)
	}
	return stream{arn: s, name: name, region: parsed.Region}, nil
}
