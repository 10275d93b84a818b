package firehose

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
)

// answerStatuses are the statuses FuzzPutRecordBatchAnswer answers with.
var answerStatuses = []int{http.StatusOK, http.StatusBadRequest, http.StatusInternalServerError, http.StatusNoContent}

// FuzzPutRecordBatchAnswer checks that the sink reads any answer of
// PutRecordBatch, of any status, to the results or the error it would
// have with the SDK's deserializer: the SDK's PutRecordBatch of the same
// records, given the same answer, read by recordResults and Classify.
func FuzzPutRecordBatchAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"FailedPutCount":0,"Encrypted":false,"RequestResponses":[{"RecordId":"1"},{"RecordId":"2"},{"RecordId":"3"}]}`,
		`{"FailedPutCount":1,"Encrypted":true,"RequestResponses":[{"RecordId":"1"},{"ErrorCode":"ServiceUnavailableException","ErrorMessage":"Slow down."},{"ErrorCode":"","ErrorMessage":"not failed"}]}`,
		`{"RequestResponses":[{"ErrorCode":"E\u0041","ErrorMessage":"a \"quoted\" message\n"},{"ErrorCode":"x","ErrorMessage":"\ud800"}]}`,
		`{"RequestResponses":[{"Error\u0043ode":"X"},{"RecordId":"\u0031","Unknown":{"a":[1,2.5e3,true,null,"s"]}}],"More":null}`,
		`{"RequestResponses":[{"ErrorCode":null},null,{}]}`,
		`{"RequestResponses":[{"ErrorCode":"A","ErrorCode":"B"}],"RequestResponses":[]}`,
		`{"FailedPutCount":-2147483649,"RequestResponses":[]}`,
		`{"Encrypted":"true","RequestResponses":[]}`,
		`{"RequestResponses":[]}]`,
		"{\"RequestResponses\":[{\"ErrorCode\":\"\xff\xfe\",\"ErrorMessage\":\"\x01\"}]}",
		`{"RequestResponses":[{}]`,
		// What schemas.Cursor refuses and the SDK reads: nesting past its
		// 64 levels, invalid UTF-8 and a UTF-16 surrogate in UTF-8 in a
		// member the sink skips.
		`{"RequestResponses":[{},{},{}],"Deep":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`,
		"{\"RequestResponses\":[{\"RecordId\":\"1\",\"Unknown\":\"\xc3\x28\"},{},{\"RecordId\":\"\xed\xa0\x80\"}],\"Encrypted\":false}",
		`null`,
		``,
		`{"__type":"ResourceNotFoundException","message":"Firehose events not found"}`,
	} {
		f.Add(seed, uint8(0))
	}
	f.Add(`{"__type":"ResourceNotFoundException","message":"Firehose events not found"}`, uint8(1))
	f.Add(`{"__type":"ServiceUnavailableException"}`, uint8(2))
	capture := &awstest.Capture{}
	sink, client := captureSink(f, capture)
	batch := records(3)
	f.Fuzz(func(t *testing.T, answer string, status uint8) {
		capture.Answer, capture.Status = answer, answerStatuses[int(status)%len(answerStatuses)]
		ctx := context.Background()
		want, wantErr := sdkResults(ctx, client, sink, batch)
		got, err := sink.Write(ctx, batch)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("answer %q, status %d: Write's error %v, with the SDK's deserializer %v", answer, capture.Status, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("answer %q, status %d: results\n%+v\nwith the SDK's deserializer\n%+v", answer, capture.Status, got, want)
		}
	})
}

// sdkResults returns what Write returns for batch when the SDK reads the
// answer: client's PutRecordBatch of the records Write sends.
func sdkResults(ctx context.Context, client *firehose.Client, sink *Sink, batch []sinks.Record) ([]sinks.Result, error) {
	in := &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String(sink.stream.name)}
	for _, r := range batch {
		in.Records = append(in.Records, types.Record{Data: append(append([]byte{}, r.Data...), '\n')})
	}
	out, err := client.PutRecordBatch(ctx, in)
	if err != nil {
		return nil, codeClasses.Classify(ctx, err)
	}
	results := make([]sinks.Result, len(batch))
	recordResults(results, out.RequestResponses)
	return results, nil
}

// TestSinkReadsAnswer checks that the sink reads Firehose's answer
// itself, not the SDK, and with no allocation per record.
func TestSinkReadsAnswer(t *testing.T) {
	const n = 500
	entry := `{"RecordId":"49590338271490256608559692538361571095921575989136588898"}`
	capture := &awstest.Capture{Answer: `{"FailedPutCount":0,"Encrypted":false,"RequestResponses":[` + strings.TrimSuffix(strings.Repeat(entry+",", n), ",") + `]}`}
	sink, client := captureSink(t, capture)
	results := make([]sinks.Result, n)
	answer := sinks.NewAnswer(results, nil, "PutRecordBatch")
	reader := sink.answerReader(&answer)
	if _, err := client.PutRecordBatch(context.Background(), &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String(sink.stream.name), Records: []types.Record{{Data: []byte("x")}}}, awsClient.WithAnswer(reader)); err != nil {
		t.Fatal(err)
	}
	if !reader.Read {
		t.Fatal("the SDK read the answer")
	}
	answer.End()
	for i, r := range results {
		if r.Status != sinks.Accepted {
			t.Fatalf("result %d = %+v, want accepted", i, r)
		}
	}

	body := []byte(capture.Answer)
	allocs := testing.AllocsPerRun(20, func() {
		answer := sinks.NewAnswer(results, nil, "PutRecordBatch")
		if !putRecordBatchAnswer.Read(body, sink.answerReader(&answer).Entry) {
			t.Fatal("the answer was not read")
		}
	})
	if allocs > 2 {
		t.Errorf("reading an answer of 500 records: %.0f allocations, want at most 2 (the reader and its Entry)", allocs)
	}
}
