package firehose

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"
)

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
	sink.client = &fakeFirehose{putRecordBatch: func(context.Context, *firehose.PutRecordBatchInput) (*firehose.PutRecordBatchOutput, error) {
		return out, nil
	}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sink.Write(ctx, rs); err != nil {
			b.Fatal(err)
		}
	}
}
