package cloudwatchlogs

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// captureSink returns a sink of testGroupARN and testStream whose client,
// signing with static keys, sends through capture, and that client.
func captureSink(tb testing.TB, capture *awstest.Capture) (*Sink, *cloudwatchlogs.Client) {
	tb.Helper()
	group, err := parseLogGroupARN(testGroupARN)
	if err != nil {
		tb.Fatal(err)
	}
	client := cloudwatchlogs.NewFromConfig(awstest.CaptureConfig(capture), func(o *cloudwatchlogs.Options) { o.BaseEndpoint = aws.String("http://logs.test") })
	return (&Sink{group: group, client: client, bodies: new(awsjson.Buffers)}).WithLogStream(testStream), client
}

// FuzzPutLogEventsBody checks that the sink's PutLogEvents request is the
// one the SDK makes of the same events (awstest.CheckSameRequest: the
// same URL and headers, and a body of UTF-8 that decodes to the same
// JSON). The records are data cut at each 0x1e, at times within a day of
// base drawn from spread; those CloudWatch Logs would refuse (empty, not
// UTF-8) are left out of the SDK's call, and the others sorted by time, as
// the sink does.
func FuzzPutLogEventsBody(f *testing.F) {
	f.Add([]byte(`{"event_id":"e1","data":{"a":1}}`), uint32(0))
	f.Add([]byte("quote \" backslash \\ \x01\x1f\x7f\x1e\u2028\u2029 line\nseparators\r\t\x1e\xff\xfe not UTF-8\x1eé日本🚀\x1e\x00"), uint32(7))
	f.Add([]byte{}, uint32(1))
	f.Add([]byte("c\x1eb\x1ea\x1ed\x1ee"), uint32(2654435761))
	capture := &awstest.Capture{Answer: `{}`}
	sink, client := captureSink(f, capture)
	f.Fuzz(func(t *testing.T, data []byte, spread uint32) {
		var batch []sinks.Record
		for i, d := range bytes.Split(data, []byte{0x1e}) {
			offset := time.Duration(uint64(spread)*uint64(i+1)%uint64(maxSpan/time.Millisecond)) * time.Millisecond
			batch = append(batch, sinks.Record{ID: "e", Data: d, Timestamp: base.Add(offset)})
		}
		var events []types.InputLogEvent
		for _, r := range batch {
			if _, refused := refuse(r); !refused {
				events = append(events, types.InputLogEvent{Message: aws.String(string(r.Data)), Timestamp: aws.Int64(r.Timestamp.UnixMilli())})
			}
		}
		if len(events) == 0 {
			return
		}
		slices.SortStableFunc(events, func(a, b types.InputLogEvent) int { return cmp.Compare(*a.Timestamp, *b.Timestamp) })
		in := &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(sink.group.name), LogStreamName: aws.String(sink.stream), LogEvents: events}
		capture.CheckSameWrite(t, func(ctx context.Context) error {
			_, err := client.PutLogEvents(ctx, in)
			return err
		}, sink, batch)
	})
}

// TestEncodeAllocations checks that encoding a run of 500 events into a
// warm buffer allocates nothing.
func TestEncodeAllocations(t *testing.T) {
	batch := make([]sinks.Record, 500)
	run := make([]event, len(batch))
	for i := range batch {
		batch[i] = sinks.Record{ID: "e", Data: bytes.Repeat([]byte(`{"k":"v"},`), 180), Timestamp: base}
		run[i] = event{index: i, timestamp: base.UnixMilli()}
	}
	sink, _ := captureSink(t, &awstest.Capture{})
	body := sink.bodies.Get()
	allocs := testing.AllocsPerRun(20, func() {
		*body = sink.encode((*body)[:0], batch, run)
	})
	if allocs != 0 {
		t.Errorf("encoding 500 events: %.0f allocations, want none", allocs)
	}
}
