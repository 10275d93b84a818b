package tail

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"

	"github.com/sluicehq/sluice/internal/defaults"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/desttype"
)

// ErrTarget is the error, wrapped, of an ARN tail cannot read.
var ErrTarget = errors.New("not a Kinesis stream, CloudWatch Logs log group or Firehose delivery stream ARN")

// ErrNoCredentials is the error, wrapped, of a reader that found no AWS
// credentials in the default chain: nothing named any, and there is no
// instance role. A failure to get credentials that something names (a
// profile's SSO, role or process) is not it.
var ErrNoCredentials = errors.New("no AWS credentials found")

// DefaultPoll is how often a reader that caught up asks for more.
const DefaultPoll = time.Second

// Record is one delivered record as the destination holds it.
type Record = sinks.TailRecord

// Config says what to read.
type Config struct {
	// ARN is the stream's, log group's or delivery stream's ARN.
	ARN string
	// Since is where to start: the records stored from then on. The zero
	// time starts at the end: only what arrives from now on.
	Since time.Time
	// Follow keeps reading as records arrive until ctx ends; otherwise Read
	// returns once it has read what is there.
	Follow bool
	// Poll is how often a reader that caught up asks again; default
	// DefaultPoll.
	Poll time.Duration
	// AWS, when set, is the AWS configuration to use, with its region
	// replaced by the ARN's; otherwise the default chain's is loaded.
	AWS *aws.Config
	// WaitForTarget makes a following reader whose stream, log group or
	// delivery stream does not exist wait for it to appear, as sluice's
	// emulator makes one with the first records delivered to it; without
	// Follow, such a target is read as empty: Read returns nil, having
	// emitted nothing, as it is a destination that has received nothing
	// yet. Set it only to read an emulator: against AWS, a missing target
	// is a typo that nothing will create, and without WaitForTarget Read
	// returns the error naming it.
	WaitForTarget bool
	// Waiting, when set, is called once when a reader with WaitForTarget
	// starts waiting for its target, with what it waits for.
	Waiting func(what string)

	// absent records that a reader with WaitForTarget, not following,
	// found its target missing: its error then means an empty target.
	absent bool
}

// missing is sinks.TailConfig.Missing: a reader waits for a target that
// does not exist yet when following with WaitForTarget, and tells Waiting
// once. Not following, it does not wait, and records that the target is
// absent, for emptyWhenAbsent.
func (c *Config) missing(what string) bool {
	if !c.WaitForTarget {
		return false
	}
	if !c.Follow {
		c.absent = true
		return false
	}
	if c.Waiting != nil {
		c.Waiting(what)
		c.Waiting = nil
	}
	return true
}

func (c *Config) setDefaults() {
	defaults.Positive(&c.Poll, DefaultPoll)
}

// Reader reads the records of one destination: its type's TailReader.
type Reader = sinks.TailReader

// New returns the reader of cfg.ARN. It returns an error wrapping
// ErrTarget for an ARN of anything else, and one wrapping ErrNoCredentials
// when cfg.AWS is nil and the default chain finds no credentials.
func New(ctx context.Context, cfg Config) (Reader, error) {
	cfg.setDefaults()
	parsed, err := arn.Parse(cfg.ARN)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrTarget, cfg.ARN, err)
	}
	if parsed.Region == "" {
		return nil, fmt.Errorf("%w: %q has no region", ErrTarget, cfg.ARN)
	}
	awsConfig, err := loadAWS(ctx, cfg, parsed.Region)
	if err != nil {
		return nil, err
	}
	for _, typ := range desttype.All() {
		if name, ok := strings.CutPrefix(parsed.Resource, typ.ARN.ResourcePrefix); ok && parsed.Service == typ.ARN.Service {
			r, err := typ.Tail(sinks.TailConfig{
				AWS: awsConfig, AWSFromEnvironment: cfg.AWS == nil, Name: name,
				Since: cfg.Since, Follow: cfg.Follow, Poll: cfg.Poll, Missing: cfg.missing,
			})
			if err != nil || cfg.Follow || !cfg.WaitForTarget {
				return r, err
			}
			return emptyWhenAbsent{Reader: r, cfg: &cfg}, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrTarget, cfg.ARN)
}

// emptyWhenAbsent reads, without following, a target of an emulator
// (WaitForTarget) that does not exist as an empty one: the emulator makes
// it with the first records delivered to it, so none have been.
type emptyWhenAbsent struct {
	Reader
	cfg *Config // whose missing the reader calls
}

// Read is the reader's Read, but returns nil when the error it returns is
// that of the target missing.
func (r emptyWhenAbsent) Read(ctx context.Context, emit func(Record) error) error {
	err := r.Reader.Read(ctx, emit)
	if err != nil && r.cfg.absent {
		return nil
	}
	return err
}

// loadAWS returns the AWS configuration to read with, in region.
func loadAWS(ctx context.Context, cfg Config, region string) (aws.Config, error) {
	if cfg.AWS != nil {
		c := cfg.AWS.Copy()
		c.Region = region
		return c, nil
	}
	c, err := config.LoadDefaultConfig(ctx, config.WithRegion(region))
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	// Find them now, so that their absence is one clear error rather than
	// the first call's (such as "no EC2 IMDS role found"). The chain falls
	// back to the instance's role when nothing else names credentials
	// (environment, profile, container, web identity), so its failure there
	// is the chain finding none; any other failure, such as an expired SSO
	// token or a refused AssumeRole, is told as it is.
	if _, err := c.Credentials.Retrieve(ctx); err != nil {
		if aws.IsCredentialsProvider(c.Credentials, (*ec2rolecreds.Provider)(nil)) {
			return aws.Config{}, fmt.Errorf("%w (environment, shared files, SSO, instance role): %w", ErrNoCredentials, err)
		}
		return aws.Config{}, fmt.Errorf("loading AWS credentials: %w", err)
	}
	return c, nil
}
