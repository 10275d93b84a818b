package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestDestinationTargetFlags checks that the target flags come from the
// destination types, in the order and with the words they always had.
func TestDestinationTargetFlags(t *testing.T) {
	d := newDestinationFlags()
	want := "give the target: one of --kinesis-stream-arn, --firehose-delivery-stream-arn and --cloudwatch-log-group-arn, " +
		"with --role-arn or --aws-access-key-id (or a target in --data)"
	if got := d.targetMissing().Error(); got != want {
		t.Fatalf("targetMissing:\n got %s\nwant %s", got, want)
	}
	fl := pflag.NewFlagSet("create", pflag.ContinueOnError)
	d.register(fl)
	for flag, usage := range map[string]string{
		"kinesis-stream-arn":           "Kinesis data stream, such as arn:aws:kinesis:",
		"firehose-delivery-stream-arn": "Data Firehose delivery stream, such as arn:aws:firehose:",
		"cloudwatch-log-group-arn":     "CloudWatch Logs log group, such as arn:aws:logs:",
	} {
		if f := fl.Lookup(flag); f == nil || !strings.Contains(f.Usage, usage) {
			t.Errorf("flag --%s: %+v", flag, f)
		}
	}
}
