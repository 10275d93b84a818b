package sinks

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
)

// kinesisClient is an AWSClient as a sink's package declares it.
var kinesisClient = AWSClient[*kinesis.Client, kinesis.Options]{
	Sink:         "kinesis",
	New:          kinesis.NewFromConfig,
	BaseEndpoint: func(o *kinesis.Options) **string { return &o.BaseEndpoint },
}

// TestAWSClientMake checks that Make gives the client the access's region
// and credentials and, only when given one, its own endpoint, and that its
// error names the sink and the target.
func TestAWSClientMake(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_KINESIS", "")
	access := AWSAccess{Region: "eu-west-1", Auth: AWSAuth{AccessKeyID: "AKIA0", SecretAccessKey: "s"}}
	const arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/events"
	for _, endpoint := range []string{"", "http://127.0.0.1:4566"} {
		client, err := kinesisClient.Make(t.Context(), arn, access, endpoint)
		if err != nil {
			t.Fatal(err)
		}
		o := client.Options()
		if o.Region != "eu-west-1" || aws.ToString(o.BaseEndpoint) != endpoint {
			t.Errorf("endpoint %q: the client's region %q and endpoint %q", endpoint, o.Region, aws.ToString(o.BaseEndpoint))
		}
		if creds, err := o.Credentials.Retrieve(t.Context()); err != nil || creds.AccessKeyID != "AKIA0" {
			t.Errorf("the client's credentials %v, %v; want the access's", creds.AccessKeyID, err)
		}
	}

	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "config"))
	t.Setenv("AWS_PROFILE", "missing")
	_, err := kinesisClient.Make(t.Context(), arn, access, "")
	if err == nil || !strings.HasPrefix(err.Error(), "kinesis sink of "+arn+": loading the AWS configuration: ") {
		t.Fatalf("Make with a profile that does not exist: %v, want the error naming the sink", err)
	}
}
