package kinesis

import (
	"errors"
	"fmt"
	"log/slog"
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
	// Auth says which credentials sign the calls.
	Auth sinks.AWSAuth
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

// Validate returns an error wrapping ErrConfig when cfg cannot work: a
// StreamARN that is not a Kinesis stream's, or credentials that cannot work
// (see sinks.AWSAuth.Validate).
func (cfg Config) Validate() error {
	if _, err := parseStreamARN(cfg.StreamARN); err != nil {
		return err
	}
	if err := cfg.Auth.Validate(cfg.ExternalID); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
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
