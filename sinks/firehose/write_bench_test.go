package firehose

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"
)

// answeringFirehose is a Firehose client that answers every call with its
// output and reads nothing of the call, for benchmarks: fakeFirehose
// decodes each body.
type answeringFirehose struct {
	out *firehose.PutRecordBatchOutput
}

func (a answeringFirehose) PutRecordBatch(context.Context, *firehose.PutRecordBatchInput, ...func(*firehose.Options)) (*firehose.PutRecordBatchOutput, error) {
	return a.out, nil
}

// BenchmarkWrite measures a Write of a full batch of small records that
// Firehose stores whole, so that a change to the sink's hot path shows its
// cost in allocations.
func BenchmarkWrite(b *testing.B) {
	rs := records(500)
	out := &firehose.PutRecordBatchOutput{RequestResponses: make([]types.PutRecordBatchResponseEntry, len(rs))}
	sink, err := New(context.Background(), Config{DeliveryStreamARN: testStreamARN, Auth: staticKeys})
	if err != nil {
		b.Fatal(err)
	}
	sink.client = answeringFirehose{out}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sink.Write(ctx, rs); err != nil {
			b.Fatal(err)
		}
	}
}
