package firehose

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"

	"github.com/sluicehq/sluice/sinks"
)

// limits are PutRecordBatch's: 500 records and 4 MiB a call, 1,000 KiB a
// record, each record counting the newline the sink ends it with.
var limits = sinks.Limits{
	MaxRecords:     500,
	MaxBatchBytes:  4 << 20,
	MaxRecordBytes: 1000 << 10,
	RecordOverhead: 1,
}

// CodeRecordTooLarge is the Code of the Permanent result of a record the
// sink refuses without sending it: with its newline, it is larger than
// Limits().MaxRecordBytes, and Firehose would refuse the whole call for it.
const CodeRecordTooLarge = "RecordTooLarge"

// awsClient makes the sink's Firehose client.
var awsClient = sinks.AWSClient[*firehose.Client, firehose.Options]{
	Sink:         "firehose",
	New:          firehose.NewFromConfig,
	BaseEndpoint: func(o *firehose.Options) **string { return &o.BaseEndpoint },
}

// putRecordBatchAPI is the call the sink makes of the Firehose client.
type putRecordBatchAPI interface {
	PutRecordBatch(ctx context.Context, in *firehose.PutRecordBatchInput, optFns ...func(*firehose.Options)) (*firehose.PutRecordBatchOutput, error)
}

// Sink writes to one Firehose delivery stream. It is safe for concurrent
// use.
type Sink struct {
	stream deliveryStream
	client putRecordBatchAPI
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
	return &Sink{stream: target, client: client}, nil
}

// Limits returns PutRecordBatch's limits: 500 records and 4 MiB a call,
// 1,000 KiB a record, counting each record's newline.
func (s *Sink) Limits() sinks.Limits { return limits }

// Write puts the records with one PutRecordBatch call, each record's Data
// followed by a newline, and returns one result per record, in order. A
// record Firehose could not store this time is Retryable, whatever its
// ErrorCode (ServiceUnavailableException, InternalFailure, or one not known
// yet), so that only those are sent again. A record larger than
// MaxRecordBytes with its newline is Permanent, CodeRecordTooLarge, and not
// sent, so that it does not fail the rest of the batch.
//
// Write returns a *sinks.DestinationError when the call failed as a whole,
// and ctx's error when ctx ended. A batch of more than MaxRecords records or
// MaxBatchBytes bytes fails whole, unsent, with ClassInvalid.
func (s *Sink) Write(ctx context.Context, records []sinks.Record) ([]sinks.Result, error) {
	results, err := limits.Begin(ctx, records)
	if err != nil {
		return nil, err
	}
	entries, sent := s.entries(records, results)
	if len(entries) == 0 {
		return results, nil
	}
	out, err := s.client.PutRecordBatch(ctx, &firehose.PutRecordBatchInput{
		DeliveryStreamName: aws.String(s.stream.name),
		Records:            entries,
	})
	if err != nil {
		return nil, codeClasses.Classify(ctx, err)
	}
	recordResults(results, sent, out.RequestResponses)
	return results, nil
}

// entries returns the records to send, framed, and the index in records of
// each; it sets the Permanent results of the records it leaves out. The
// framed records share one buffer.
func (s *Sink) entries(records []sinks.Record, results []sinks.Result) ([]types.Record, []int) {
	size := 0
	for _, r := range records {
		size += limits.Size(r)
	}
	buf := make([]byte, 0, size)
	entries := make([]types.Record, 0, len(records))
	sent := make([]int, 0, len(records))
	for i, r := range records {
		if size := limits.Size(r); size > limits.MaxRecordBytes {
			results[i] = sinks.Result{
				Status:  sinks.Permanent,
				Code:    CodeRecordTooLarge,
				Message: fmt.Sprintf("%d bytes with its newline, more than the %d Firehose takes", size, limits.MaxRecordBytes),
			}
			continue
		}
		start := len(buf)
		buf = append(buf, r.Data...)
		buf = append(buf, '\n')
		entries = append(entries, types.Record{Data: buf[start:len(buf):len(buf)]})
		sent = append(sent, i)
	}
	return entries, sent
}

// recordResults fills in the results of the sent records from
// PutRecordBatch's answer, entry i of which is that of records[sent[i]]: a
// record with an ErrorCode is Retryable, one without is Accepted (whatever
// FailedPutCount says), and a record the answer leaves out is Retryable.
func recordResults(results []sinks.Result, sent []int, answer []types.PutRecordBatchResponseEntry) {
	sinks.SentResults(results, sent, answer, "PutRecordBatch", func(e types.PutRecordBatchResponseEntry) sinks.EntryError {
		code := aws.ToString(e.ErrorCode)
		return sinks.EntryError{Failed: code != "", Code: code, Message: aws.ToString(e.ErrorMessage)}
	})
}
