package sinks

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"

	"github.com/sluicehq/sluice/sinks/awsjson"
)

// AWSClient is how a sink's package makes the client of its AWS service,
// declared once in the package: C is the service's client, O its options.
type AWSClient[C, O any] struct {
	// Sink names the sink in errors: "kinesis".
	Sink string
	// New is the service's NewFromConfig.
	New func(cfg aws.Config, optFns ...func(*O)) C
	// BaseEndpoint returns the options' base endpoint: &o.BaseEndpoint.
	BaseEndpoint func(o *O) **string
	// APIOptions returns the options' per-call stack functions:
	// &o.APIOptions.
	APIOptions func(o *O) *[]func(*middleware.Stack) error
}

// WithBody returns the option of one call of the client that sends body,
// encoded by the sink, in place of the SDK's serialization of the call's
// input: an awsJson 1.1 call to target (see awsjson.Serializer). body must
// stay unchanged until the call returns, and may be reused then.
func (c AWSClient[C, O]) WithBody(target string, body []byte) func(*O) {
	serializer := &awsjson.Serializer{Target: target, Body: body}
	return func(o *O) {
		apiOptions := c.APIOptions(o)
		*apiOptions = append(*apiOptions, serializer.Swap)
	}
}

// WithAnswer returns the option of one call of the client that reads the
// call's successful answer with answer in place of the SDK's deserializer,
// which still reads every other answer (see awsjson.Deserializer).
func (c AWSClient[C, O]) WithAnswer(answer *awsjson.Deserializer) func(*O) {
	return func(o *O) {
		apiOptions := c.APIOptions(o)
		*apiOptions = append(*apiOptions, answer.Swap)
	}
}

// Make returns the client of a sink of the target arn: New given the
// configuration LoadAWSConfig loads for access and, when endpoint is not
// "", that endpoint as the client's BaseEndpoint option, which applies to
// the service and not to STS. It does no network I/O. Its error, the SDK's
// when the process's AWS configuration (environment, shared files) cannot
// be loaded, names the sink and arn.
func (c AWSClient[C, O]) Make(ctx context.Context, arn string, access AWSAccess, endpoint string) (C, error) {
	awsConfig, err := LoadAWSConfig(ctx, access)
	if err != nil {
		var none C
		return none, fmt.Errorf("%s sink of %s: %w", c.Sink, arn, err)
	}
	return c.New(awsConfig, func(o *O) {
		if endpoint != "" {
			*c.BaseEndpoint(o) = aws.String(endpoint)
		}
	}), nil
}
