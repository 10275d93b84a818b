package firehose_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/firehose"
)

// BenchmarkWriteEndpoint measures a Write of 500 records of about 1.8 KB
// through the sink's real SDK client, signing included, into an in-process
// endpoint answering PutRecordBatch at once: the cost of making the call, which
// BenchmarkWrite's fake client leaves out.
func BenchmarkWriteEndpoint(b *testing.B) {
	b.Setenv("AWS_CA_BUNDLE", "") // the endpoint is no transport to give a CA
	sink, err := firehose.New(context.Background(), firehose.Config{
		DeliveryStreamARN: "arn:aws:firehose:eu-west-1:123456789012:deliverystream/events",
		Auth:              sinks.AWSAuth{AccessKeyID: "AKIASTATICKEY0000000", SecretAccessKey: "static-secret"},
		Endpoint:          "http://endpoint.test",
		HTTPClient:        awstest.Endpoint{Answer: `{"FailedPutCount":0,"RequestResponses":[` + strings.Repeat(`{"RecordId":"49590338271490256608559692538361571095921575989136588898"},`, 499) + `{"RecordId":"49590338271490256608559692538361571095921575989136588898"}]}`},
	})
	if err != nil {
		b.Fatal(err)
	}
	awstest.BenchWrite(b, sink)
}
