package cloudwatchlogs

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/targets"
)

// ErrConfig is the error, wrapped, of a Config that cannot work.
var ErrConfig = errors.New("invalid cloudwatchlogs sink config")

// Config is one CloudWatch Logs destination. It is comparable, so that a
// cache of sinks can be keyed by it.
type Config struct {
	// LogGroupARN is the log group's ARN,
	// arn:aws:logs:REGION:ACCOUNT:log-group:NAME, optionally followed by
	// ":*". The client's region is the ARN's. The sink never creates the
	// group.
	LogGroupARN string
	// LogStream is the log stream of the group the sink writes to, created
	// when missing: sluice names it after the subscription whose events it
	// holds. Empty, the sink is the log group's alone, and writes only
	// through the sinks of WithLogStream or ForSubscription.
	LogStream string
	// Auth and ExternalID, required with a role, are the credentials
	// that sign the calls (see sinks.AWSAccess).
	Auth       sinks.AWSAuth
	ExternalID string
	// Endpoint, when set, is the CloudWatch Logs endpoint to call (an
	// emulator's URL); otherwise the SDK resolves it, honouring
	// AWS_ENDPOINT_URL_CLOUDWATCH_LOGS and AWS_ENDPOINT_URL. It applies to
	// CloudWatch Logs only, not to STS.
	Endpoint string
	// HTTPClient, when set, makes the HTTP calls, of CloudWatch Logs and
	// STS (see sinks.AWSAccess).
	HTTPClient aws.HTTPClient
}

// check returns what the sink needs of cfg, or an error wrapping ErrConfig
// when cfg cannot work.
func (cfg Config) check() (logGroup, error) {
	target, err := parseLogGroupARN(cfg.LogGroupARN)
	if err != nil {
		return logGroup{}, err
	}
	if cfg.LogStream != "" {
		if err := checkLogStream(cfg.LogStream); err != nil {
			return logGroup{}, err
		}
	}
	if err := cfg.Auth.Validate(cfg.ExternalID); err != nil {
		return logGroup{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return target, nil
}

// logGroup is what the sink needs of the log group's ARN.
type logGroup struct {
	name, region string
}

// parseLogGroupARN returns the log group an ARN names, or an error wrapping
// ErrConfig.
func parseLogGroupARN(s string) (logGroup, error) {
	parsed, err := sinks.ParseTargetARN(s, "logs")
	if err != nil {
		return logGroup{}, fmt.Errorf("%w: log group %w", ErrConfig, err)
	}
	name, ok := strings.CutPrefix(parsed.Resource, "log-group:")
	if !ok || targets.CloudWatchLogs.ARN.CheckName(name) != "" {
		return logGroup{}, fmt.Errorf("%w: %q is not the ARN of a CloudWatch Logs log group (arn:aws:logs:REGION:ACCOUNT:log-group:NAME, NAME of 1 to %d letters, digits, '_', '-', '/', '.' and '#')", ErrConfig, s, targets.MaxLogGroupName)
	}
	return logGroup{name: strings.TrimSuffix(name, ":*"), region: parsed.Region}, nil
}

// checkLogStream returns an error wrapping ErrConfig when name is no log
// stream's name: 1 to 512 characters, neither ':' nor '*'.
func checkLogStream(name string) error {
	if name == "" || utf8.RuneCountInString(name) > targets.MaxLogGroupName || strings.ContainsAny(name, ":*") {
		return fmt.Errorf("%w: log stream %.40q is not a name of 1 to %d characters without ':' or '*'", ErrConfig, name, targets.MaxLogGroupName)
	}
	return nil
}
