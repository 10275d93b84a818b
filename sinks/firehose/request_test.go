package firehose

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// captureSink returns a sink of testStreamARN whose client, signing with
// static keys, sends through capture, and that client.
func captureSink(tb testing.TB, capture *awstest.Capture) (*Sink, *firehose.Client) {
	tb.Helper()
	target, err := parseDeliveryStreamARN(testStreamARN)
	if err != nil {
		tb.Fatal(err)
	}
	client := firehose.NewFromConfig(awstest.CaptureConfig(capture), func(o *firehose.Options) { o.BaseEndpoint = aws.String("http://firehose.test") })
	return &Sink{stream: target, client: client, bodies: new(awsjson.Buffers), answers: new(awsjson.Buffers)}, client
}

// FuzzPutRecordBatchBody checks that the sink's PutRecordBatch request is
// the one the SDK makes of the same records, each followed by a newline
// (awstest.CheckSameRequest: the same URL and headers, and a body of UTF-8
// that decodes to the same JSON). The records are data cut at each 0x1e,
// at most the MaxRecords of one call (more is a batch no caller makes,
// which the sink refuses).
func FuzzPutRecordBatchBody(f *testing.F) {
	f.Add([]byte(`{"event_id":"e1","data":{"a":1}}`))
	f.Add([]byte("quote \" backslash \\ \x00\x01\x1f\x7f\x1e\xe2\x80\xa8 \xff\xfe not UTF-8\x1e\n\x1e"))
	f.Add([]byte{})
	f.Add([]byte("a\x1eab\x1eabc\x1eabcd"))
	capture := &awstest.Capture{Answer: `{"FailedPutCount":0,"RequestResponses":[]}`}
	sink, client := captureSink(f, capture)
	f.Fuzz(func(t *testing.T, data []byte) {
		var batch []sinks.Record
		in := &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String(sink.stream.name)}
		for i, d := range bytes.SplitN(data, []byte{0x1e}, limits.MaxRecords) {
			batch = append(batch, sinks.Record{ID: string(rune('a' + i%26)), Data: d})
			in.Records = append(in.Records, types.Record{Data: append(bytes.Clone(d), '\n')})
		}
		capture.CheckSameWrite(t, func(ctx context.Context) error {
			_, err := client.PutRecordBatch(ctx, in)
			return err
		}, sink, batch)
	})
}

// TestEncodeAllocations checks that encoding a batch of 500 records into a
// warm buffer allocates nothing.
func TestEncodeAllocations(t *testing.T) {
	batch := make([]sinks.Record, 500)
	for i := range batch {
		batch[i] = sinks.Record{ID: "0b7e1e4c-5f4e-4b8a-9d3c-2a1f0e9d8c7b", Data: bytes.Repeat([]byte(`{"k":"v"},`), 180)}
	}
	sink, _ := captureSink(t, &awstest.Capture{})
	body := sink.bodies.Get()
	allocs := testing.AllocsPerRun(20, func() {
		*body = (*body)[:0]
		if err := sink.encode(body, batch); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("encoding 500 records: %.0f allocations, want none", allocs)
	}
}
