package cloudwatchlogs_test

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/cloudwatchlogs"
)

// BenchmarkWriteEndpoint measures a Write of 500 records of about 1.8 KB
// through the sink's real SDK client, signing included, into an in-process
// endpoint answering PutLogEvents at once: the cost of making the call, which
// BenchmarkWrite's fake client leaves out.
func BenchmarkWriteEndpoint(b *testing.B) {
	b.Setenv("AWS_CA_BUNDLE", "") // the endpoint is no transport to give a CA
	sink, err := cloudwatchlogs.New(context.Background(), cloudwatchlogs.Config{
		LogGroupARN: "arn:aws:logs:eu-west-1:123456789012:log-group:/sluice/events:*", LogStream: "esb_2mE3subscription",
		Auth:       sinks.AWSAuth{AccessKeyID: "AKIASTATICKEY0000000", SecretAccessKey: "static-secret"},
		Endpoint:   "http://endpoint.test",
		HTTPClient: awstest.Endpoint{Answer: `{}`},
	})
	if err != nil {
		b.Fatal(err)
	}
	awstest.BenchWrite(b, sink)
}
