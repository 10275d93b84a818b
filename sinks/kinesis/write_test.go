package kinesis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/smithy-go"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
)

// answer returns a PutRecords answer: "" is a stored record, any other
// string the ErrorCode of a failed one.
func answer(codes ...string) *kinesis.PutRecordsOutput {
	out := &kinesis.PutRecordsOutput{}
	failed := int32(0)
	for i, code := range codes {
		if code == "" {
			out.Records = append(out.Records, types.PutRecordsResultEntry{
				ShardId:        aws.String("shardId-000000000000"),
				SequenceNumber: aws.String(fmt.Sprintf("4%020d", i)),
			})
			continue
		}
		failed++
		out.Records = append(out.Records, types.PutRecordsResultEntry{
			ErrorCode:    aws.String(code),
			ErrorMessage: aws.String(fmt.Sprintf("%s for record %d", code, i)),
		})
	}
	out.FailedRecordCount = aws.Int32(failed)
	return out
}

// TestWritePerRecordResults checks that the results of a PutRecords answer
// say exactly which records are accepted and which retryable, and when a
// batch whose every record failed is a destination error.
func TestWritePerRecordResults(t *testing.T) {
	const (
		throttled = "ProvisionedThroughputExceededException"
		internal  = "InternalFailure"
		kmsThrot  = "KMSThrottlingException"
		kmsDenied = "KMSAccessDeniedException"
		kmsOff    = "KMSDisabledException"
		kmsGone   = "KMSNotFoundException"
	)
	tests := []struct {
		name      string
		answer    []string
		want      []sinks.Status
		wantClass sinks.Class // of a DestinationError instead of results
	}{
		{"all stored", []string{"", "", ""}, []sinks.Status{sinks.Accepted, sinks.Accepted, sinks.Accepted}, ""},
		{
			"some throttled",
			[]string{"", throttled, "", internal, kmsThrot, ""},
			[]sinks.Status{sinks.Accepted, sinks.Retryable, sinks.Accepted, sinks.Retryable, sinks.Retryable, sinks.Accepted},
			"",
		},
		{"all throttled: per record, as throttling passes", []string{throttled, throttled}, []sinks.Status{sinks.Retryable, sinks.Retryable}, ""},
		{"all internal failures", []string{internal, internal}, []sinks.Status{sinks.Retryable, sinks.Retryable}, ""},
		{"an unknown code is retryable", []string{"", "SomethingNew"}, []sinks.Status{sinks.Accepted, sinks.Retryable}, ""},
		{"KMS denied for some: per record", []string{"", kmsDenied}, []sinks.Status{sinks.Accepted, sinks.Retryable}, ""},
		{"KMS denied for a throttled batch: per record", []string{throttled, kmsDenied}, []sinks.Status{sinks.Retryable, sinks.Retryable}, ""},
		{"KMS denied for all", []string{kmsDenied, kmsDenied}, nil, sinks.ClassAccessDenied},
		{"KMS key disabled for all", []string{kmsOff, kmsOff, kmsOff}, nil, sinks.ClassAccessDenied},
		{"KMS key gone for all", []string{kmsGone}, nil, sinks.ClassNotFound},
		{"missing results are retryable", []string{"", ""}, []sinks.Status{sinks.Accepted, sinks.Accepted, sinks.Retryable}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeKinesis{putRecords: func(ctx context.Context, in *kinesis.PutRecordsInput) (*kinesis.PutRecordsOutput, error) {
				return answer(tt.answer...), nil
			}}
			n := max(len(tt.answer), len(tt.want))
			results, err := newFakeSink(t, fake).Write(context.Background(), records(n))
			if calls := fake.calls.Load(); calls != 1 {
				t.Errorf("PutRecords called %d times, want 1", calls)
			}
			if tt.wantClass != "" {
				var de *sinks.DestinationError
				if !errors.As(err, &de) || de.Class != tt.wantClass || de.Code != tt.answer[0] {
					t.Fatalf("Write = %v, %v; want a DestinationError of class %s, code %s", results, err, tt.wantClass, tt.answer[0])
				}
				return
			}
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			awstest.CheckResults(t, results, tt.want, tt.answer)
		})
	}
}

// TestWriteRequest checks what the sink sends: the stream's ARN and name,
// each record's ID as partition key and its Data unchanged, in order.
func TestWriteRequest(t *testing.T) {
	batch := records(5)
	var got *kinesis.PutRecordsInput
	fake := &fakeKinesis{putRecords: func(ctx context.Context, in *kinesis.PutRecordsInput) (*kinesis.PutRecordsOutput, error) {
		got = in
		return answer("", "", "", "", ""), nil
	}}
	if _, err := newFakeSink(t, fake).Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if aws.ToString(got.StreamARN) != testStreamARN || aws.ToString(got.StreamName) != "events" {
		t.Errorf("sent StreamARN %q, StreamName %q; want %q, %q", aws.ToString(got.StreamARN), aws.ToString(got.StreamName), testStreamARN, "events")
	}
	if len(got.Records) != len(batch) {
		t.Fatalf("sent %d records, want %d", len(got.Records), len(batch))
	}
	for i, e := range got.Records {
		if aws.ToString(e.PartitionKey) != batch[i].ID || !bytes.Equal(e.Data, batch[i].Data) || e.ExplicitHashKey != nil {
			t.Errorf("entry %d = %q %q, want partition key %q data %q", i, aws.ToString(e.PartitionKey), e.Data, batch[i].ID, batch[i].Data)
		}
	}
}

// TestWriteRefusesWhatKinesisWouldRefuse checks the sink's defence against
// records Kinesis would refuse with the whole call (an ID that is no
// partition key): they are Permanent and not sent, and the rest of the
// batch goes out with its results in place. A record of the largest size
// is sent.
func TestWriteRefusesWhatKinesisWouldRefuse(t *testing.T) {
	fits := func(id string, dataLen int) sinks.Record {
		return sinks.Record{ID: id, Data: bytes.Repeat([]byte("x"), dataLen)}
	}
	maxData := limits.MaxRecordBytes - len("a-max")
	tests := []struct {
		name   string
		batch  []sinks.Record
		answer []string // of the records sent
		want   []sinks.Result
	}{
		{
			"the largest record among others",
			[]sinks.Record{fits("a-0", 10), fits("a-max", maxData), fits("a-3", 10)},
			[]string{"", "ProvisionedThroughputExceededException", ""},
			[]sinks.Result{
				{Status: sinks.Accepted},
				{Status: sinks.Retryable, Code: "ProvisionedThroughputExceededException"},
				{Status: sinks.Accepted},
			},
		},
		{
			"empty and overlong IDs",
			[]sinks.Record{fits("", 10), fits("ok", 10), fits(strings.Repeat("é", 257), 10), fits(strings.Repeat("é", 256), 10)},
			[]string{"", ""},
			[]sinks.Result{
				{Status: sinks.Permanent, Code: CodeBadPartitionKey},
				{Status: sinks.Accepted},
				{Status: sinks.Permanent, Code: CodeBadPartitionKey},
				{Status: sinks.Accepted},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent []string
			fake := &fakeKinesis{putRecords: func(ctx context.Context, in *kinesis.PutRecordsInput) (*kinesis.PutRecordsOutput, error) {
				for _, e := range in.Records {
					sent = append(sent, aws.ToString(e.PartitionKey))
				}
				return answer(tt.answer...), nil
			}}
			results, err := newFakeSink(t, fake).Write(context.Background(), tt.batch)
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			var wantSent []string
			for i, r := range tt.want {
				if r.Status != sinks.Permanent {
					wantSent = append(wantSent, tt.batch[i].ID)
				}
				if results[i].Status != r.Status || results[i].Code != r.Code {
					t.Errorf("record %d: %v %s, want %v %s", i, results[i].Status, results[i].Code, r.Status, r.Code)
				}
				if r.Status == sinks.Permanent && results[i].Message == "" {
					t.Errorf("record %d: Permanent with no message", i)
				}
			}
			if len(wantSent) == 0 {
				if calls := fake.calls.Load(); calls != 0 {
					t.Errorf("PutRecords called %d times for a batch with nothing to send", calls)
				}
			} else if strings.Join(sent, ",") != strings.Join(wantSent, ",") {
				t.Errorf("sent %q, want %q", sent, wantSent)
			}
		})
	}
}

// TestWriteRefusesOversizeBatches checks that a batch beyond Limits (the
// call's, or one record's, the partition key counting) fails whole with
// ClassInvalid, unsent.
func TestWriteRefusesOversizeBatches(t *testing.T) {
	big := make([]sinks.Record, 6)
	for i := range big {
		big[i] = sinks.Record{ID: fmt.Sprintf("big-%03d", i), Data: bytes.Repeat([]byte("x"), limits.MaxRecordBytes-len("big-000"))}
	}
	for name, batch := range map[string][]sinks.Record{
		"501 records":       records(501),
		"more than 5 MiB":   big,
		"5 MiB and 1 byte":  append(big[:5:5], sinks.Record{ID: "x", Data: nil}),
		"twice the records": records(1000),
		"a record over 1 MiB with its partition key": {records(1)[0],
			{ID: "a-big", Data: bytes.Repeat([]byte("x"), limits.MaxRecordBytes-len("a-big")+1)}},
	} {
		t.Run(name, func(t *testing.T) {
			fake := &fakeKinesis{putRecords: func(ctx context.Context, in *kinesis.PutRecordsInput) (*kinesis.PutRecordsOutput, error) {
				t.Error("PutRecords called")
				return nil, errors.New("unexpected call")
			}}
			_, err := newFakeSink(t, fake).Write(context.Background(), batch)
			if sinks.ClassOf(err) != sinks.ClassInvalid {
				t.Fatalf("Write = %v, want a DestinationError of class invalid", err)
			}
		})
	}
}

// TestWriteEndedContext checks that a Write ended by its context returns
// the context's error, not a DestinationError.
func TestWriteEndedContext(t *testing.T) {
	started := make(chan struct{})
	fake := &fakeKinesis{putRecords: func(ctx context.Context, in *kinesis.PutRecordsInput) (*kinesis.PutRecordsOutput, error) {
		close(started)
		<-ctx.Done()
		return nil, &smithy.OperationError{ServiceID: "Kinesis", OperationName: "PutRecords", Err: &aws.RequestCanceledError{Err: ctx.Err()}}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	results, err := newFakeSink(t, fake).Write(ctx, records(3))
	if !errors.Is(err, context.Canceled) || results != nil {
		t.Fatalf("Write = %v, %v; want context.Canceled", results, err)
	}
	var de *sinks.DestinationError
	if errors.As(err, &de) {
		t.Fatalf("Write returned a DestinationError for an ended context: %v", err)
	}
}
