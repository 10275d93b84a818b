package firehose

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/targets"
)

// ErrConfig is the error, wrapped, of a Config that cannot work.
var ErrConfig = errors.New("invalid firehose sink config")

// Config is one Firehose destination. It is comparable, so that a cache of
// sinks can be keyed by it.
type Config struct {
	// DeliveryStreamARN is the delivery stream's ARN,
	// arn:aws:firehose:REGION:ACCOUNT:deliverystream/NAME. The client's
	// region is the ARN's.
	DeliveryStreamARN string
	// Auth and ExternalID, required with a role, are the credentials
	// that sign the calls (see sinks.AWSAccess).
	Auth       sinks.AWSAuth
	ExternalID string
	// Endpoint, when set, is the Firehose endpoint to call (an emulator's
	// URL); otherwise the SDK resolves it, honouring
	// AWS_ENDPOINT_URL_FIREHOSE and AWS_ENDPOINT_URL. It applies to
	// Firehose only, not to STS.
	Endpoint string
	// HTTPClient, when set, makes the HTTP calls, of Firehose and STS (see
	// sinks.AWSAccess).
	HTTPClient aws.HTTPClient
}

// check returns what the sink needs of cfg, or an error wrapping ErrConfig
// when cfg cannot work.
func (cfg Config) check() (deliveryStream, error) {
	target, err := parseDeliveryStreamARN(cfg.DeliveryStreamARN)
	if err != nil {
		return deliveryStream{}, err
	}
	if err := cfg.Auth.Validate(cfg.ExternalID); err != nil {
		return deliveryStream{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return target, nil
}

// deliveryStream is what the sink needs of the delivery stream's ARN.
type deliveryStream struct {
	name, region string
}

// parseDeliveryStreamARN returns the delivery stream an ARN names, or an
// error wrapping ErrConfig.
func parseDeliveryStreamARN(s string) (deliveryStream, error) {
	parsed, err := sinks.ParseTargetARN(s, "firehose")
	if err != nil {
		return deliveryStream{}, fmt.Errorf("%w: delivery stream %w", ErrConfig, err)
	}
	name, ok := strings.CutPrefix(parsed.Resource, "deliverystream/")
	if !ok || targets.Firehose.ARN.CheckName(name) != "" {
		return deliveryStream{}, fmt.Errorf("%w: %q is not the ARN of a Firehose delivery stream (arn:aws:firehose:REGION:ACCOUNT:deliverystream/NAME, NAME of 1 to %d letters, digits, '_', '.' and '-')", ErrConfig, s, targets.MaxDeliveryStreamName)
	}
	return deliveryStream{name: name, region: parsed.Region}, nil
}
