package firehose

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
)

// TestWritePerRecordResults checks that the results of a PutRecordBatch
// answer say exactly which records are accepted and which retryable.
func TestWritePerRecordResults(t *testing.T) {
	const (
		unavailable = "ServiceUnavailableException"
		internal    = "InternalFailure"
	)
	tests := []struct {
		name   string
		answer []string
		want   []sinks.Status
	}{
		{"all stored", []string{"", "", ""}, []sinks.Status{sinks.Accepted, sinks.Accepted, sinks.Accepted}},
		{
			"some failed",
			[]string{"", unavailable, "", internal, ""},
			[]sinks.Status{sinks.Accepted, sinks.Retryable, sinks.Accepted, sinks.Retryable, sinks.Accepted},
		},
		{"all failed: per record", []string{unavailable, unavailable}, []sinks.Status{sinks.Retryable, sinks.Retryable}},
		{"an unknown code is retryable", []string{"", "SomethingNew"}, []sinks.Status{sinks.Accepted, sinks.Retryable}},
		{"missing results are retryable", []string{"", ""}, []sinks.Status{sinks.Accepted, sinks.Accepted, sinks.Retryable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeFirehose{putRecordBatch: func(ctx context.Context, in *firehose.PutRecordBatchInput) (*firehose.PutRecordBatchOutput, error) {
				return answer(tt.answer...), nil
			}}
			results, err := newFakeSink(t, fake).Write(context.Background(), records(len(tt.want)))
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			if calls := fake.calls.Load(); calls != 1 {
				t.Errorf("PutRecordBatch called %d times, want 1", calls)
			}
			awstest.CheckResults(t, results, tt.want, tt.answer)
		})
	}
}

// TestWriteResendsOnlyFailed checks, over two Writes as the pipeline makes
// them, that the second call carries exactly the records the first did not
// store.
func TestWriteResendsOnlyFailed(t *testing.T) {
	var sent [][]string
	fake := &fakeFirehose{putRecordBatch: func(ctx context.Context, in *firehose.PutRecordBatchInput) (*firehose.PutRecordBatchOutput, error) {
		var call []string
		codes := make([]string, len(in.Records))
		for i, r := range in.Records {
			call = append(call, string(r.Data))
			if len(sent) == 0 && i%2 == 1 {
				codes[i] = "ServiceUnavailableException"
			}
		}
		sent = append(sent, call)
		return answer(codes...), nil
	}}
	sink := newFakeSink(t, fake)
	batch := records(5)
	results, err := sink.Write(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	var again []sinks.Record
	for i, r := range results {
		if r.Status == sinks.Retryable {
			again = append(again, batch[i])
		}
	}
	results, err = sink.Write(context.Background(), again)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Status != sinks.Accepted {
			t.Errorf("resent record %d: %v", i, r.Status)
		}
	}
	want := []string{"{\"n\":1}\n", "{\"n\":3}\n"}
	if len(sent) != 2 || len(sent[1]) != 2 || sent[1][0] != want[0] || sent[1][1] != want[1] {
		t.Fatalf("calls %q, want the second to carry %q", sent, want)
	}
}

// TestWriteRequest checks what the sink sends: the delivery stream's name,
// and each record's Data unchanged and followed by a newline, in order.
func TestWriteRequest(t *testing.T) {
	batch := records(5)
	batch[2].Data = []byte(`{"multi":"line\nin a string"}`)
	var got *firehose.PutRecordBatchInput
	fake := &fakeFirehose{putRecordBatch: func(ctx context.Context, in *firehose.PutRecordBatchInput) (*firehose.PutRecordBatchOutput, error) {
		got = in
		return answer("", "", "", "", ""), nil
	}}
	if _, err := newFakeSink(t, fake).Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if aws.ToString(got.DeliveryStreamName) != "events" {
		t.Errorf("sent DeliveryStreamName %q, want events", aws.ToString(got.DeliveryStreamName))
	}
	if len(got.Records) != len(batch) {
		t.Fatalf("sent %d records, want %d", len(got.Records), len(batch))
	}
	for i, r := range got.Records {
		if want := append(bytes.Clone(batch[i].Data), '\n'); !bytes.Equal(r.Data, want) {
			t.Errorf("record %d = %q, want %q", i, r.Data, want)
		}
	}
	// Framing must not touch the caller's Data.
	if string(batch[0].Data) != `{"n":0}` {
		t.Errorf("the caller's Data changed to %q", batch[0].Data)
	}
}

// TestWriteSendsLargestRecord checks that a record of 1,000 KiB with its
// newline is sent, among others.
func TestWriteSendsLargestRecord(t *testing.T) {
	batch := []sinks.Record{
		{ID: "small", Data: []byte(`{}`)},
		{ID: "max", Data: bytes.Repeat([]byte("x"), limits.MaxRecordBytes-1)},
		{ID: "last", Data: []byte(`{}`)},
	}
	var sent []int
	fake := &fakeFirehose{putRecordBatch: func(ctx context.Context, in *firehose.PutRecordBatchInput) (*firehose.PutRecordBatchOutput, error) {
		for _, r := range in.Records {
			sent = append(sent, len(r.Data))
		}
		return answer("", "", ""), nil
	}}
	results, err := newFakeSink(t, fake).Write(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Status != sinks.Accepted {
			t.Errorf("record %s: %v, want accepted", batch[i].ID, r.Status)
		}
	}
	if len(sent) != 3 || sent[1] != limits.MaxRecordBytes {
		t.Errorf("sent records of %v bytes, want 3 with the second of %d", sent, limits.MaxRecordBytes)
	}
}

// TestWriteRefusesOversizeBatches checks that a batch beyond Limits (the
// call's, or one record's, the newline counting) fails whole with
// ClassInvalid, unsent.
func TestWriteRefusesOversizeBatches(t *testing.T) {
	big := make([]sinks.Record, 5)
	for i := range big {
		big[i] = sinks.Record{ID: "big", Data: bytes.Repeat([]byte("x"), limits.MaxRecordBytes-1)}
	}
	exact := make([]sinks.Record, 8) // 4 MiB exactly, newlines counted
	for i := range exact {
		exact[i] = sinks.Record{ID: "exact", Data: bytes.Repeat([]byte("x"), limits.MaxBatchBytes/8-1)}
	}
	tally := limits.Tally()
	for _, r := range exact {
		tally.Add(r)
	}
	if err := tally.Err(); err != nil {
		t.Fatalf("the batch at the limit does not fit: %v", err)
	}
	for name, batch := range map[string][]sinks.Record{
		"501 records":      records(501),
		"more than 4 MiB":  big,
		"4 MiB and 1 byte": append(exact[:8:8], sinks.Record{ID: "x"}),
		"a record over 1,000 KiB with its newline": {{ID: "small", Data: []byte(`{}`)},
			{ID: "big", Data: bytes.Repeat([]byte("x"), limits.MaxRecordBytes)}},
	} {
		t.Run(name, func(t *testing.T) {
			fake := &fakeFirehose{putRecordBatch: func(ctx context.Context, in *firehose.PutRecordBatchInput) (*firehose.PutRecordBatchOutput, error) {
				t.Error("PutRecordBatch called")
				return nil, errors.New("unexpected call")
			}}
			_, err := newFakeSink(t, fake).Write(context.Background(), batch)
			if sinks.ClassOf(err) != sinks.ClassInvalid {
				t.Fatalf("Write = %v, want a DestinationError of class invalid", err)
			}
		})
	}
}

// TestWriteWholeCallErrors checks the class of each failure of a whole
// PutRecordBatch call, and that the sink makes exactly one call.
func TestWriteWholeCallErrors(t *testing.T) {
	msg := aws.String("the message")
	generic := func(code string) error { return &smithy.GenericAPIError{Code: code, Message: code + " happened"} }
	refused := &smithyhttp.RequestSendError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	tests := []struct {
		name      string
		err       error
		wantClass sinks.Class
		wantCode  string
	}{
		{"delivery stream not found", apiError(400, &types.ResourceNotFoundException{Message: msg}), sinks.ClassNotFound, "ResourceNotFoundException"},
		{"access denied", apiError(400, generic("AccessDeniedException")), sinks.ClassAccessDenied, "AccessDeniedException"},
		{"KMS key unusable", apiError(400, &types.InvalidKMSResourceException{Message: msg}), sinks.ClassAccessDenied, "InvalidKMSResourceException"},
		{"CloudWatch Logs only", apiError(400, &types.InvalidSourceException{Message: msg}), sinks.ClassAccessDenied, "InvalidSourceException"},
		{"unknown access key", apiError(400, generic("UnrecognizedClientException")), sinks.ClassBadCredentials, "UnrecognizedClientException"},
		{"wrong secret", apiError(400, generic("InvalidSignatureException")), sinks.ClassBadCredentials, "InvalidSignatureException"},
		{"over the stream's throughput", apiError(503, &types.ServiceUnavailableException{Message: msg}), sinks.ClassThrottled, "ServiceUnavailableException"},
		{"limit exceeded", apiError(400, &types.LimitExceededException{Message: msg}), sinks.ClassThrottled, "LimitExceededException"},
		{"front end throttled", apiError(400, generic("ThrottlingException")), sinks.ClassThrottled, "ThrottlingException"},
		{"internal failure", apiError(500, generic("InternalFailure")), sinks.ClassUnavailable, "InternalFailure"},
		{"stream being updated", apiError(400, &types.ResourceInUseException{Message: msg}), sinks.ClassUnavailable, "ResourceInUseException"},
		{"invalid argument", apiError(400, &types.InvalidArgumentException{Message: msg}), sinks.ClassInvalid, "InvalidArgumentException"},
		{"unknown code, 502", apiError(502, generic("BadGateway")), sinks.ClassUnavailable, "BadGateway"},
		{"unknown code, 403", apiError(403, generic("Nope")), sinks.ClassAccessDenied, "Nope"},
		{"connection refused", &smithy.OperationError{ServiceID: "Firehose", OperationName: "PutRecordBatch", Err: refused}, sinks.ClassUnavailable, ""},
		{"no credentials", &smithy.OperationError{ServiceID: "Firehose", OperationName: "PutRecordBatch",
			Err: &sinks.CredentialsError{Err: errors.New("no EC2 IMDS role found")}}, sinks.ClassBadCredentials, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeFirehose{putRecordBatch: func(ctx context.Context, in *firehose.PutRecordBatchInput) (*firehose.PutRecordBatchOutput, error) {
				return nil, tt.err
			}}
			results, err := newFakeSink(t, fake).Write(context.Background(), records(3))
			if calls := fake.calls.Load(); calls != 1 {
				t.Errorf("PutRecordBatch called %d times, want exactly 1", calls)
			}
			var de *sinks.DestinationError
			if !errors.As(err, &de) || results != nil {
				t.Fatalf("Write = %v, %v; want only a *sinks.DestinationError", results, err)
			}
			if de.Class != tt.wantClass || de.Code != tt.wantCode {
				t.Errorf("class %s, code %q; want %s, %q (%v)", de.Class, de.Code, tt.wantClass, tt.wantCode, err)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the error does not wrap the SDK's: %v", err)
			}
		})
	}
}

// TestWriteEndedContext checks that a Write ended by its context returns
// the context's error, not a DestinationError.
func TestWriteEndedContext(t *testing.T) {
	started := make(chan struct{})
	fake := &fakeFirehose{putRecordBatch: func(ctx context.Context, in *firehose.PutRecordBatchInput) (*firehose.PutRecordBatchOutput, error) {
		close(started)
		<-ctx.Done()
		return nil, &smithy.OperationError{ServiceID: "Firehose", OperationName: "PutRecordBatch", Err: &aws.RequestCanceledError{Err: ctx.Err()}}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	results, err := newFakeSink(t, fake).Write(ctx, records(3))
	var de *sinks.DestinationError
	if !errors.Is(err, context.Canceled) || results != nil || errors.As(err, &de) {
		t.Fatalf("Write = %v, %v; want context.Canceled", results, err)
	}
}
