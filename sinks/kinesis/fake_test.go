package kinesis

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
)

// testStreamARN is the stream of the unit tests.
const testStreamARN = "arn:aws:kinesis:eu-west-1:123456789012:stream/events"

// fakeKinesis is the Kinesis client of unit tests: putRecords answers each
// call, and calls counts them.
type fakeKinesis struct {
	//lint:ignore U1000 embedded as STYLE.md 3 says, so that the fake still compiles when the sink calls more of the client
	putRecordsAPI
	putRecords func(ctx context.Context, in *kinesis.PutRecordsInput) (*kinesis.PutRecordsOutput, error)
	calls      atomic.Int64
}

func (f *fakeKinesis) PutRecords(ctx context.Context, _ *kinesis.PutRecordsInput, optFns ...func(*kinesis.Options)) (*kinesis.PutRecordsOutput, error) {
	f.calls.Add(1)
	var o kinesis.Options
	for _, fn := range optFns {
		fn(&o)
	}
	in := new(kinesis.PutRecordsInput)
	if err := awstest.SentInput(o.APIOptions, in); err != nil {
		return nil, err
	}
	return f.putRecords(ctx, in)
}

// newFakeSink returns a sink of testStreamARN writing through fake.
func newFakeSink(t *testing.T, fake *fakeKinesis) *Sink {
	t.Helper()
	target, err := parseStreamARN(testStreamARN)
	if err != nil {
		t.Fatal(err)
	}
	return &Sink{stream: target, client: fake}
}

// apiError returns err as the SDK returns the error of a PutRecords call
// whose HTTP response had that status.
func apiError(status int, err error) error {
	return awstest.APIError("Kinesis", "PutRecords", status, err)
}

// records returns n small records with IDs id-0, id-1, ...
func records(n int) []sinks.Record {
	rs := make([]sinks.Record, n)
	for i := range rs {
		rs[i] = sinks.Record{ID: fmt.Sprintf("id-%d", i), Data: fmt.Appendf(nil, `{"n":%d}`, i)}
	}
	return rs
}
