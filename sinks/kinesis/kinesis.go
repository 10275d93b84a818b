package kinesis

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// limits are PutRecords': 500 records and 5 MiB a call (10 MiB in some
// regions, but not all), 1 MiB a record counting its partition key.
var limits = sinks.Limits{
	MaxRecords:     500,
	MaxBatchBytes:  5 << 20,
	MaxRecordBytes: 1 << 20,
	CountID:        true,
}

// maxPartitionKey is the most Unicode characters of a partition key.
const maxPartitionKey = 256

// CodeBadPartitionKey is the Code of the Permanent result of a record the
// sink refuses without sending it: its ID is empty or longer than 256
// characters, which Kinesis does not take as a partition key, and Kinesis
// would refuse the whole call for it.
const CodeBadPartitionKey = "BadPartitionKey"

// awsClient makes the sink's Kinesis client.
var awsClient = sinks.AWSClient[*kinesis.Client, kinesis.Options]{
	Sink:         "kinesis",
	New:          kinesis.NewFromConfig,
	BaseEndpoint: func(o *kinesis.Options) **string { return &o.BaseEndpoint },
	APIOptions:   func(o *kinesis.Options) *[]func(*middleware.Stack) error { return &o.APIOptions },
}

// putRecordsAPI is the call the sink makes of the Kinesis client.
type putRecordsAPI interface {
	PutRecords(ctx context.Context, in *kinesis.PutRecordsInput, optFns ...func(*kinesis.Options)) (*kinesis.PutRecordsOutput, error)
}

// Sink writes to one Kinesis data stream. It is safe for concurrent use.
type Sink struct {
	stream  stream
	client  putRecordsAPI
	bodies  *awsjson.Buffers
	answers *awsjson.Buffers
}

var _ sinks.Sink = (*Sink)(nil)

// New returns a sink writing to cfg.StreamARN. It does no network I/O: bad
// credentials, a role that cannot be assumed or a missing stream surface as
// the *sinks.DestinationError of Write. It returns an error wrapping
// ErrConfig when cfg does not validate, and the SDK's when the process's AWS
// configuration (environment, shared files) cannot be loaded.
func New(ctx context.Context, cfg Config) (*Sink, error) {
	target, err := cfg.check()
	if err != nil {
		return nil, err
	}
	access := sinks.AWSAccess{Region: target.region, Auth: cfg.Auth, ExternalID: cfg.ExternalID, HTTPClient: cfg.HTTPClient}
	client, err := awsClient.Make(ctx, cfg.StreamARN, access, cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	return &Sink{stream: target, client: client, bodies: new(awsjson.Buffers), answers: new(awsjson.Buffers)}, nil
}

// Limits returns PutRecords' limits: 500 records and 5 MiB a call, 1 MiB a
// record counting its ID, the partition key.
func (s *Sink) Limits() sinks.Limits { return limits }

// Write puts the records with one PutRecords call and returns one result per
// record, in order. A record Kinesis could not store this time is
// Retryable, whatever its error code: Kinesis reports no failure of one
// record that a later call cannot fix. A record whose ID is no partition
// key is Permanent, CodeBadPartitionKey, and not sent, so that it does not
// fail the rest of the batch.
//
// Write returns a *sinks.DestinationError when the call failed as a whole,
// or when every record failed with an error of the destination rather than of
// the record (a KMS key that is disabled or may not be used); ctx's error
// when ctx ended. A batch beyond Limits fails whole, unsent, with
// ClassInvalid.
func (s *Sink) Write(ctx context.Context, records []sinks.Record) ([]sinks.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	results := make([]sinks.Result, len(records))
	body := s.bodies.Get()
	defer s.bodies.Put(body)
	sent, err := s.encode(body, records, results)
	if err != nil {
		return nil, err
	}
	if len(sent) == 0 {
		return results, nil
	}
	answer := sinks.NewAnswer(results, sent, "PutRecords")
	reader := s.answerReader(&answer)
	out, err := s.client.PutRecords(ctx, &kinesis.PutRecordsInput{
		StreamARN:  aws.String(s.stream.arn),
		StreamName: aws.String(s.stream.name),
		Records:    []types.PutRecordsRequestEntry{}, // in the body
	}, awsClient.WithBody(putRecordsTarget, *body), awsClient.WithAnswer(reader))
	if err != nil {
		return nil, classify(ctx, err)
	}
	if reader.Read {
		answer.End()
	} else {
		recordResults(results, sent, out.Records)
	}
	if len(sent) == len(results) {
		if err := destinationError(results); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// refuse returns the Permanent result of a record that Kinesis would refuse,
// and false for a record to send.
func refuse(r sinks.Record) (sinks.Result, bool) {
	if r.ID == "" || utf8.RuneCountInString(r.ID) > maxPartitionKey {
		return sinks.Result{
			Status:  sinks.Permanent,
			Code:    CodeBadPartitionKey,
			Message: fmt.Sprintf("the ID %.40q is not a partition key of 1 to %d characters", r.ID, maxPartitionKey),
		}, true
	}
	return sinks.Result{}, false
}

// recordResults fills in the results of the sent records from PutRecords'
// answer as the SDK read it, entry i of which is that of records[sent[i]].
// A record the answer leaves out is Retryable.
func recordResults(results []sinks.Result, sent []int, answer []types.PutRecordsResultEntry) {
	sinks.SentResults(results, sent, answer, "PutRecords", func(e types.PutRecordsResultEntry) sinks.EntryError {
		return sinks.EntryError{Failed: e.ErrorCode != nil, Code: aws.ToString(e.ErrorCode), Message: aws.ToString(e.ErrorMessage)}
	})
}
