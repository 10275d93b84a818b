package firehose

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
)

// testStreamARN is the delivery stream of the unit tests.
const testStreamARN = "arn:aws:firehose:eu-west-1:123456789012:deliverystream/events"

// fakeFirehose is the Firehose client of unit tests: putRecordBatch answers
// each call, and calls counts them.
type fakeFirehose struct {
	//lint:ignore U1000 embedded as STYLE.md 3 says, so that the fake still compiles when the sink calls more of the client
	putRecordBatchAPI
	putRecordBatch func(ctx context.Context, in *firehose.PutRecordBatchInput) (*firehose.PutRecordBatchOutput, error)
	calls          atomic.Int64
}

func (f *fakeFirehose) PutRecordBatch(ctx context.Context, _ *firehose.PutRecordBatchInput, optFns ...func(*firehose.Options)) (*firehose.PutRecordBatchOutput, error) {
	f.calls.Add(1)
	var o firehose.Options
	for _, fn := range optFns {
		fn(&o)
	}
	in := new(firehose.PutRecordBatchInput)
	if err := awstest.SentInput(o.APIOptions, in); err != nil {
		return nil, err
	}
	return f.putRecordBatch(ctx, in)
}

// newFakeSink returns a sink of testStreamARN writing through fake.
func newFakeSink(t *testing.T, fake *fakeFirehose) *Sink {
	t.Helper()
	target, err := parseDeliveryStreamARN(testStreamARN)
	if err != nil {
		t.Fatal(err)
	}
	return &Sink{stream: target, client: fake}
}

// answer returns a PutRecordBatch answer: "" is a stored record, any other
// string the ErrorCode of a failed one.
func answer(codes ...string) *firehose.PutRecordBatchOutput {
	out := &firehose.PutRecordBatchOutput{}
	failed := int32(0)
	for i, code := range codes {
		if code == "" {
			out.RequestResponses = append(out.RequestResponses, types.PutRecordBatchResponseEntry{RecordId: aws.String(fmt.Sprintf("rec-%d", i))})
			continue
		}
		failed++
		out.RequestResponses = append(out.RequestResponses, types.PutRecordBatchResponseEntry{
			ErrorCode:    aws.String(code),
			ErrorMessage: aws.String(fmt.Sprintf("%s for record %d", code, i)),
		})
	}
	out.FailedPutCount = aws.Int32(failed)
	return out
}

// apiError returns err as the SDK returns the error of a PutRecordBatch
// call whose HTTP response had that status.
func apiError(status int, err error) error {
	return awstest.APIError("Firehose", "PutRecordBatch", status, err)
}

// records returns n small records with IDs id-0, id-1, ...
func records(n int) []sinks.Record {
	rs := make([]sinks.Record, n)
	for i := range rs {
		rs[i] = sinks.Record{ID: fmt.Sprintf("id-%d", i), Data: fmt.Appendf(nil, `{"n":%d}`, i)}
	}
	return rs
}
