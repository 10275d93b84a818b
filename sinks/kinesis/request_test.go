package kinesis

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/awsjson"
)

// captureSink returns a sink of testStreamARN whose client, signing with
// static keys, sends through capture, and that client.
func captureSink(tb testing.TB, capture *awstest.Capture) (*Sink, *kinesis.Client) {
	tb.Helper()
	target, err := parseStreamARN(testStreamARN)
	if err != nil {
		tb.Fatal(err)
	}
	client := kinesis.NewFromConfig(awstest.CaptureConfig(capture), func(o *kinesis.Options) { o.BaseEndpoint = aws.String("http://kinesis.test") })
	return &Sink{stream: target, client: client, bodies: new(awsjson.Buffers), answers: new(awsjson.Buffers)}, client
}

// fuzzBatch returns the records of a fuzzed batch: data cut at each 0x1e,
// at most the MaxRecords of one call (more is a batch no caller makes,
// which the sink refuses), each with the next ID of ids (cut at each 0x1e,
// in turn).
func fuzzBatch(data []byte, ids string) []sinks.Record {
	idList := strings.Split(ids, "\x1e")
	var batch []sinks.Record
	for i, d := range bytes.SplitN(data, []byte{0x1e}, limits.MaxRecords) {
		batch = append(batch, sinks.Record{ID: idList[i%len(idList)], Data: d})
	}
	return batch
}

// FuzzPutRecordsBody checks that the sink's PutRecords request is the one
// the SDK makes of the same records (awstest.CheckSameRequest: the same
// URL and headers, and a body of UTF-8 that decodes to the same JSON),
// IDs that are not UTF-8 included.
func FuzzPutRecordsBody(f *testing.F) {
	f.Add([]byte(`{"event_id":"e1","data":{"a":1}}`), "e1")
	f.Add([]byte("quote \" backslash \\ \x00\x01\x1f\x7f\x1e\xe2\x80\xa8 \xff\xfe not UTF-8\x1e"), "id \"quoted\" \\\x1e\u2028é日本\x1e\x01\x1e\xff")
	f.Add([]byte{}, "")
	f.Add([]byte("a\x1eb"), "\xff\x1eok \xc3")
	f.Add(bytes.Repeat([]byte{0, 1, 2}, 100), strings.Repeat("k", 256))
	capture := &awstest.Capture{Answer: `{"FailedRecordCount":0,"Records":[]}`}
	sink, client := captureSink(f, capture)
	f.Fuzz(func(t *testing.T, data []byte, ids string) {
		batch := fuzzBatch(data, ids)
		in := &kinesis.PutRecordsInput{StreamARN: aws.String(sink.stream.arn), StreamName: aws.String(sink.stream.name)}
		for _, r := range batch {
			if _, refused := refuse(r); !refused {
				in.Records = append(in.Records, types.PutRecordsRequestEntry{Data: append([]byte{}, r.Data...), PartitionKey: aws.String(r.ID)})
			}
		}
		if len(in.Records) == 0 {
			return
		}
		capture.CheckSameWrite(t, func(ctx context.Context) error {
			_, err := client.PutRecords(ctx, in)
			return err
		}, sink, batch)
	})
}

// TestEncodeAllocations checks that encoding a batch of 500 records into a
// warm buffer allocates nothing per record.
func TestEncodeAllocations(t *testing.T) {
	batch := make([]sinks.Record, 500)
	for i := range batch {
		batch[i] = sinks.Record{ID: "0b7e1e4c-5f4e-4b8a-9d3c-2a1f0e9d8c7b", Data: bytes.Repeat([]byte(`{"k":"v"},`), 180)}
	}
	sink, _ := captureSink(t, &awstest.Capture{})
	results := make([]sinks.Result, len(batch))
	body := sink.bodies.Get()
	allocs := testing.AllocsPerRun(20, func() {
		*body = (*body)[:0]
		if _, err := sink.encode(body, batch, results); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("encoding 500 records: %.0f allocations, want at most 1 (the index of the records sent)", allocs)
	}
}
