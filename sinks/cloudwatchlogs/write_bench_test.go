package cloudwatchlogs

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
)

// storingLogs is a CloudWatch Logs client that stores every event and
// keeps nothing, for benchmarks: fakeLogs keeps each call.
type storingLogs struct {
	//lint:ignore U1000 embedded as STYLE.md 3 says, so that the fake still compiles when the sink calls more of the client
	logsAPI
}

func (storingLogs) PutLogEvents(context.Context, *cloudwatchlogs.PutLogEventsInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error) {
	return &cloudwatchlogs.PutLogEventsOutput{}, nil
}

// BenchmarkWrite measures a Write of a full batch of small records that
// CloudWatch Logs stores whole, so that a change to the sink's hot path
// shows its cost in allocations.
func BenchmarkWrite(b *testing.B) {
	rs := records(500)
	sink, err := New(context.Background(), Config{LogGroupARN: testGroupARN, LogStream: testStream, Auth: staticKeys})
	if err != nil {
		b.Fatal(err)
	}
	sink.client = storingLogs{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sink.Write(ctx, rs); err != nil {
			b.Fatal(err)
		}
	}
}
