package kinesis

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

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
	sink.client = &fakeKinesis{putRecords: func(context.Context, *kinesis.PutRecordsInput) (*kinesis.PutRecordsOutput, error) { return out, nil }}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sink.Write(ctx, rs); err != nil {
			b.Fatal(err)
		}
	}
}
