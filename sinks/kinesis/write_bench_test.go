package kinesis

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// answeringKinesis is a Kinesis client that answers every call with its
// output and reads nothing of the call, for benchmarks: fakeKinesis
// decodes each body.
type answeringKinesis struct{ out *kinesis.PutRecordsOutput }

func (a answeringKinesis) PutRecords(context.Context, *kinesis.PutRecordsInput, ...func(*kinesis.Options)) (*kinesis.PutRecordsOutput, error) {
	return a.out, nil
}

// BenchmarkWrite measures a Write of a full batch of small records that
// Kinesis stores whole, so that a change to the sink's hot path shows its
// cost in allocations.
func BenchmarkWrite(b *testing.B) {
	rs := records(500)
	out := &kinesis.PutRecordsOutput{Records: make([]types.PutRecordsResultEntry, len(rs))}
	sink, err := New(context.Background(), Config{StreamARN: testStreamARN, Auth: staticKeys})
	if err != nil {
		b.Fatal(err)
	}
	sink.client = answeringKinesis{out}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sink.Write(ctx, rs); err != nil {
			b.Fatal(err)
		}
	}
}
