package kinesis_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/kinesis"
)

// BenchmarkWriteEndpoint measures a Write of 500 records of about 1.8 KB
// through the sink's real SDK client, signing included, into an in-process
// endpoint answering PutRecords at once: the cost of making the call, which
// BenchmarkWrite's fake client leaves out.
func BenchmarkWriteEndpoint(b *testing.B) {
	b.Setenv("AWS_CA_BUNDLE", "") // the endpoint is no transport to give a CA
	sink, err := kinesis.New(context.Background(), kinesis.Config{
		StreamARN:  "arn:aws:kinesis:eu-west-1:123456789012:stream/events",
		Auth:       sinks.AWSAuth{AccessKeyID: "AKIASTATICKEY0000000", SecretAccessKey: "static-secret"},
		Endpoint:   "http://endpoint.test",
		HTTPClient: awstest.Endpoint{Answer: `{"FailedRecordCount":0,"Records":[` + strings.Repeat(`{"SequenceNumber":"49590338271490256608559692538361571095921575989136588898","ShardId":"shardId-000000000000"},`, 499) + `{"SequenceNumber":"49590338271490256608559692538361571095921575989136588898","ShardId":"shardId-000000000000"}]}`},
	})
	if err != nil {
		b.Fatal(err)
	}
	awstest.BenchWrite(b, sink)
}
