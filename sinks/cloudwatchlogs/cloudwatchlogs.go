package cloudwatchlogs

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// limits are PutLogEvents': 10,000 events and 1,048,576 bytes a call, each
// event counting its message and 26 bytes; an event of at most 1 MiB so
// counted.
var limits = sinks.Limits{
	MaxRecords:     10000,
	MaxBatchBytes:  1 << 20,
	MaxRecordBytes: 1 << 20,
	RecordOverhead: 26,
}

// awsClient makes the sink's CloudWatch Logs client.
var awsClient = sinks.AWSClient[*cloudwatchlogs.Client, cloudwatchlogs.Options]{
	Sink:         "cloudwatchlogs",
	New:          cloudwatchlogs.NewFromConfig,
	BaseEndpoint: func(o *cloudwatchlogs.Options) **string { return &o.BaseEndpoint },
	APIOptions:   func(o *cloudwatchlogs.Options) *[]func(*middleware.Stack) error { return &o.APIOptions },
}

// logsAPI is the calls the sink makes of the CloudWatch Logs client.
type logsAPI interface {
	PutLogEvents(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error)
	CreateLogStream(ctx context.Context, in *cloudwatchlogs.CreateLogStreamInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogStreamOutput, error)
}

// Sink writes to one log stream of a CloudWatch Logs log group. It is safe
// for concurrent use, and so are several sinks of one stream.
type Sink struct {
	group  logGroup
	stream string
	// streamErr is why stream cannot be written to, if it cannot.
	streamErr error
	client    logsAPI
	// bodies are the buffers of the bodies of PutLogEvents calls, shared
	// by the sinks of the group's streams.
	bodies *awsjson.Buffers
}

var _ sinks.SubscriptionSink = (*Sink)(nil)

// New returns a sink writing to the log stream cfg.LogStream of the group
// cfg.LogGroupARN. It does no network I/O: bad credentials, a role that
// cannot be assumed or a missing log group surface as the
// *sinks.DestinationError of Write, and the log stream is created by the
// first Write that finds it missing. It returns an error wrapping ErrConfig
// when cfg does not validate, and the SDK's when the process's AWS
// configuration (environment, shared files) cannot be loaded.
func New(ctx context.Context, cfg Config) (*Sink, error) {
	target, err := cfg.check()
	if err != nil {
		return nil, err
	}
	access := sinks.AWSAccess{Region: target.region, Auth: cfg.Auth, ExternalID: cfg.ExternalID, HTTPClient: cfg.HTTPClient}
	client, err := awsClient.Make(ctx, cfg.LogGroupARN, access, cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	s := &Sink{group: target, client: client, bodies: new(awsjson.Buffers)}
	return s.WithLogStream(cfg.LogStream), nil
}

// WithLogStream returns a sink writing to the log stream name of the same
// group, with the same client and credentials. It does no I/O. When name is
// no log stream's name, or empty, the sink's Writes fail with a
// *sinks.DestinationError of ClassInvalid.
func (s *Sink) WithLogStream(name string) *Sink {
	other := &Sink{group: s.group, stream: name, client: s.client, bodies: s.bodies}
	if name == "" {
		other.streamErr = errors.New("the sink has no log stream: write through WithLogStream or ForSubscription")
	} else if err := checkLogStream(name); err != nil {
		other.streamErr = err
	}
	return other
}

// ForSubscription is WithLogStream(subscriptionID): the sink of the events
// of one subscription, in the log stream named after it. It makes *Sink a
// sinks.SubscriptionSink.
func (s *Sink) ForSubscription(subscriptionID string) sinks.Sink {
	return s.WithLogStream(subscriptionID)
}

// Limits returns PutLogEvents' limits: 10,000 events and 1,048,576 bytes a
// call, each event counting 26 bytes more than its message.
func (s *Sink) Limits() sinks.Limits { return limits }

// putLogEvents puts the events of body (encode), sorted and spanning less
// than 24 hours, to the sink's stream, creating the stream when it is
// missing. It returns PutLogEvents' rejections, or a
// *sinks.DestinationError, or ctx's error.
func (s *Sink) putLogEvents(ctx context.Context, body []byte) (*types.RejectedLogEventsInfo, error) {
	in := &cloudwatchlogs.PutLogEventsInput{
		LogGroupName:  aws.String(s.group.name),
		LogStreamName: aws.String(s.stream),
		LogEvents:     []types.InputLogEvent{}, // in the body
	}
	withBody := awsClient.WithBody(putLogEventsTarget, body)
	out, err := s.client.PutLogEvents(ctx, in, withBody)
	if isCode(err, codeNotFound) && ctx.Err() == nil {
		if err := s.createLogStream(ctx); err != nil {
			return nil, err
		}
		out, err = s.client.PutLogEvents(ctx, in, withBody)
	}
	if err != nil {
		return nil, codeClasses.Classify(ctx, err)
	}
	return out.RejectedLogEventsInfo, nil
}

// createLogStream creates the sink's log stream, which a writer of the same
// stream may have just created too. A missing log group is a
// *sinks.DestinationError of ClassNotFound: sluice does not create groups.
func (s *Sink) createLogStream(ctx context.Context) error {
	_, err := s.client.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{
		LogGroupName:  aws.String(s.group.name),
		LogStreamName: aws.String(s.stream),
	})
	if err == nil || isCode(err, codeAlreadyExists) {
		return nil
	}
	return codeClasses.Classify(ctx, fmt.Errorf("creating log stream %s of log group %s: %w", s.stream, s.group.name, err))
}

// isCode reports whether err is an AWS error of that code.
func isCode(err error, code string) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == code
}
