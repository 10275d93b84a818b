package firehose

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// limits are PutRecordBatch's: 500 records and 4 MiB a call, 1,000 KiB a
// record, each record counting the newline the sink ends it with.
var limits = sinks.Limits{
	MaxRecords:     500,
	MaxBatchBytes:  4 << 20,
	MaxRecordBytes: 1000 << 10,
	RecordOverhead: 1,
}

// awsClient makes the sink's Firehose client.
var awsClient = sinks.AWSClient[*firehose.Client, firehose.Options]{
	Sink:         "firehose",
	New:          firehose.NewFromConfig,
	BaseEndpoint: func(o *firehose.Options) **string { return &o.BaseEndpoint },
	APIOptions:   func(o *firehose.Options) *[]func(*middleware.Stack) error { return &o.APIOptions },
}

// putRecordBatchAPI is the call the sink makes of the Firehose client.
type putRecordBatchAPI interface {
	PutRecordBatch(ctx context.Context, in *firehose.PutRecordBatchInput, optFns ...func(*firehose.Options)) (*firehose.PutRecordBatchOutput, error)
}

// Sink writes to one Firehose delivery stream. It is safe for concurrent
// use.
type Sink struct {
	stream  deliveryStream
	client  putRecordBatchAPI
	bodies  *awsjson.Buffers
	answers *awsjson.Buffers
}

var _ sinks.Sink = (*Sink)(nil)

// New returns a sink writing to cfg.DeliveryStreamARN. It does no network
// I/O: bad credentials, a role that cannot be assumed or a missing delivery
// stream surface as the *sinks.DestinationError of Write. It returns an
// error wrapping ErrConfig when cfg does not validate, and the SDK's when
// the process's AWS configuration (environment, shared files) cannot be
// loaded.
func New(ctx context.Context, cfg Config) (*Sink, error) {
	target, err := cfg.check()
	if err != nil {
		return nil, err
	}
	access := sinks.AWSAccess{Region: target.region, Auth: cfg.Auth, ExternalID: cfg.ExternalID, HTTPClient: cfg.HTTPClient}
	client, err := awsClient.Make(ctx, cfg.DeliveryStreamARN, access, cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	return &Sink{stream: target, client: client, bodies: new(awsjson.Buffers), answers: new(awsjson.Buffers)}, nil
}

// Limits returns PutRecordBatch's limits: 500 records and 4 MiB a call,
// 1,000 KiB a record, counting each record's newline.
func (s *Sink) Limits() sinks.Limits { return limits }

// Write puts the records with one PutRecordBatch call, each record's Data
// followed by a newline, and returns one result per record, in order. A
// record Firehose could not store this time is Retryable, whatever its
// ErrorCode (ServiceUnavailableException, InternalFailure, or one not known
// yet), so that only those are sent again.
//
// Write returns a *sinks.DestinationError when the call failed as a whole,
// and ctx's error when ctx ended. A batch beyond Limits fails whole,
// unsent, with ClassInvalid.
func (s *Sink) Write(ctx context.Context, records []sinks.Record) ([]sinks.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return []sinks.Result{}, nil
	}
	body := s.bodies.Get()
	defer s.bodies.Put(body)
	if err := s.encode(body, records); err != nil {
		return nil, err
	}
	results := make([]sinks.Result, len(records))
	answer := sinks.NewAnswer(results, nil, "PutRecordBatch")
	reader := s.answerReader(&answer)
	out, err := s.client.PutRecordBatch(ctx, &firehose.PutRecordBatchInput{
		DeliveryStreamName: aws.String(s.stream.name),
		Records:            []types.Record{}, // in the body
	}, awsClient.WithBody(putRecordBatchTarget, *body), awsClient.WithAnswer(reader))
	if err != nil {
		return nil, codeClasses.Classify(ctx, err)
	}
	if reader.Read {
		answer.End()
	} else {
		recordResults(results, out.RequestResponses)
	}
	return results, nil
}

// recordResults fills in the results of the records from PutRecordBatch's
// answer as the SDK read it, entry i of which is that of record i: a
// record with an ErrorCode is Retryable, one without is Accepted (whatever
// FailedPutCount says), and a record the answer leaves out is Retryable.
func recordResults(results []sinks.Result, answer []types.PutRecordBatchResponseEntry) {
	sinks.SentResults(results, nil, answer, "PutRecordBatch", func(e types.PutRecordBatchResponseEntry) sinks.EntryError {
		code := aws.ToString(e.ErrorCode)
		return sinks.EntryError{Failed: code != "", Code: code, Message: aws.ToString(e.ErrorMessage)}
	})
}
