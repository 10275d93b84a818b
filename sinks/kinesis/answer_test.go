package kinesis

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
)

// answerStatuses are the statuses FuzzPutRecordsAnswer answers with.
var answerStatuses = []int{http.StatusOK, http.StatusBadRequest, http.StatusInternalServerError, http.StatusNoContent}

// FuzzPutRecordsAnswer checks that the sink reads any answer of
// PutRecords, of any status, to the results or the error it would have
// with the SDK's deserializer: the SDK's PutRecords of the same records,
// given the same answer, read by recordResults and classify.
func FuzzPutRecordsAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"FailedRecordCount":0,"Records":[{"SequenceNumber":"1","ShardId":"shardId-000000000000"},{"SequenceNumber":"2","ShardId":"shardId-000000000000"},{"SequenceNumber":"3","ShardId":"shardId-000000000000"}]}`,
		`{"FailedRecordCount":1,"Records":[{"SequenceNumber":"1","ShardId":"shardId-000000000000"},{"ErrorCode":"ProvisionedThroughputExceededException","ErrorMessage":"Rate exceeded for shard"},{"ErrorCode":"InternalFailure"}]}`,
		`{"Records":[{"ErrorCode":"KMSDisabledException","ErrorMessage":"m"},{"ErrorCode":"KMSDisabledException"},{"ErrorCode":"KMSDisabledException"}],"EncryptionType":"KMS"}`,
		`{"Records":[{"ErrorCode":"E\u0041","ErrorMessage":"a \"quoted\" message\n"},{"ErrorCode":"","ErrorMessage":"\ud800"}]}`,
		`{"Records":[{"Error\u0043ode":"X"},{"SequenceNumber":"\u0031","Unknown":{"a":[1,2.5e3,true,null,"s"]}}],"More":null}`,
		`{"Records":[{"ErrorCode":null},null,{}]}`,
		`{"Records":[{"ErrorCode":"A","ErrorCode":"B"}],"Records":[]}`,
		`{"FailedRecordCount":2147483648,"Records":[]}`,
		`{"FailedRecordCount":1.0,"Records":[]}`,
		`{"Records":[]} trailing`,
		`{"Records":[{"ShardId":1}]}`,
		"{\"Records\":[{\"ErrorCode\":\"\xff\xfe\",\"ErrorMessage\":\"\x01\"}]}",
		`{"Records":[{}]`,
		"{\"Records\":[{\"ErrorCode\":\"E\xff\",\"ErrorMessage\":\"m\xe9\"},{},{}]}",
		`{"FailedRecordCount":3,"Records":[{},{"X":1,"X":[2]},{"ErrorCode":"E"},{"ErrorCode":"F"}]}`,
		`{"FailedRecordCount":-1,"Records":[{"ErrorCode":"E"}]}`,
		`{"Records":[{},{},{}],"Deep":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
		// What schemas.Cursor refuses and the SDK reads: nesting just past
		// its 64 levels (and just within), invalid UTF-8 and a UTF-16
		// surrogate in UTF-8 in a member the sink skips.
		`{"Records":[{},{},{}],"Deep":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`,
		`{"Records":[{},{},{}],"Deep":` + strings.Repeat(`{"a":`, 63) + "1" + strings.Repeat("}", 63) + `}`,
		"{\"Records\":[{\"SequenceNumber\":\"1\",\"Unknown\":\"\xc3\x28\"},{},{\"ShardId\":\"\xed\xa0\x80\"}]}",
		`null`,
		``,
		`{"__type":"ResourceNotFoundException","message":"Stream events not found"}`,
		`{"__type":"ProvisionedThroughputExceededException"}`,
	} {
		f.Add(seed, uint8(0), false)
	}
	f.Add(`{"__type":"ResourceNotFoundException","message":"Stream events not found"}`, uint8(1), true)
	f.Add(`{"__type":"InternalFailure"}`, uint8(2), false)
	capture := &awstest.Capture{}
	sink, client := captureSink(f, capture)
	f.Fuzz(func(t *testing.T, answer string, status uint8, refuseOne bool) {
		capture.Answer, capture.Status = answer, answerStatuses[int(status)%len(answerStatuses)]
		batch := records(3)
		if refuseOne {
			batch = append(batch, sinks.Record{Data: []byte("no ID")})
		}
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
// answer: client's PutRecords of the records Write sends.
func sdkResults(ctx context.Context, client *kinesis.Client, sink *Sink, batch []sinks.Record) ([]sinks.Result, error) {
	results := make([]sinks.Result, len(batch))
	in := &kinesis.PutRecordsInput{StreamARN: aws.String(sink.stream.arn), StreamName: aws.String(sink.stream.name)}
	var sent []int
	for i, r := range batch {
		if refused, ok := refuse(r); ok {
			results[i] = refused
			continue
		}
		sent = append(sent, i)
		in.Records = append(in.Records, types.PutRecordsRequestEntry{Data: r.Data, PartitionKey: aws.String(r.ID)})
	}
	out, err := client.PutRecords(ctx, in)
	if err != nil {
		return nil, classify(ctx, err)
	}
	recordResults(results, sent, out.Records)
	if len(sent) == len(results) {
		if err := destinationError(results); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// benchAnswer returns Kinesis' answer to a call of n records.
func benchAnswer(n int) string {
	entry := `{"SequenceNumber":"49590338271490256608559692538361571095921575989136588898","ShardId":"shardId-000000000000"}`
	return `{"FailedRecordCount":0,"Records":[` + strings.TrimSuffix(strings.Repeat(entry+",", n), ",") + `]}`
}

// TestSinkReadsAnswer checks that the sink reads Kinesis' answer itself,
// not the SDK, and with no allocation per record.
func TestSinkReadsAnswer(t *testing.T) {
	batch := records(500)
	capture := &awstest.Capture{Answer: benchAnswer(len(batch))}
	sink, client := captureSink(t, capture)
	results := make([]sinks.Result, len(batch))
	answer := sinks.NewAnswer(results, nil, "PutRecords")
	reader := sink.answerReader(&answer)
	if _, err := client.PutRecords(context.Background(), &kinesis.PutRecordsInput{StreamARN: aws.String(sink.stream.arn), Records: []types.PutRecordsRequestEntry{{Data: []byte("x"), PartitionKey: aws.String("k")}}}, awsClient.WithAnswer(reader)); err != nil {
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
		answer := sinks.NewAnswer(results, nil, "PutRecords")
		if !putRecordsAnswer.Read(body, sink.answerReader(&answer).Entry) {
			t.Fatal("the answer was not read")
		}
	})
	if allocs > 2 {
		t.Errorf("reading an answer of 500 records: %.0f allocations, want at most 2 (the reader and its Entry)", allocs)
	}
}

// TestAnswerResultsOutliveBuffer checks that the codes and messages of the
// results of a Write are their own, not the answer's pooled buffer, which
// the next Write reads its answer into.
func TestAnswerResultsOutliveBuffer(t *testing.T) {
	capture := &awstest.Capture{}
	sink, _ := captureSink(t, capture)
	ctx := context.Background()
	answer := func(code, message string) string {
		return `{"FailedRecordCount":3,"Records":[{"ErrorCode":"` + code + `","ErrorMessage":"` + message + `"},{"ErrorCode":"` + code + `"},{"ErrorCode":"` + code + `"}]}`
	}
	capture.Answer = answer("ProvisionedThroughputExceededException", "Rate exceeded for shard")
	first, err := sink.Write(ctx, records(3))
	if err != nil {
		t.Fatal(err)
	}
	want := sinks.Result{Status: sinks.Retryable, Code: "ProvisionedThroughputExceededException", Message: "Rate exceeded for shard"}
	for range 10 {
		capture.Answer = answer("XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "yyyyyyyyyyyyyyyyyyyyyyy")
		if _, err := sink.Write(ctx, records(3)); err != nil {
			t.Fatal(err)
		}
		if first[0] != want {
			t.Fatalf("the first Write's result became %+v after later Writes, want %+v", first[0], want)
		}
	}
}
