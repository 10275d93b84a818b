package store

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckARN(t *testing.T) {
	tests := []struct {
		name    string
		rule    arnRule
		arn     string
		wantMsg string // "" for a valid ARN
	}{
		{name: "delivery stream", rule: firehoseARN, arn: "arn:aws:firehose:us-east-1:123456789012:deliverystream/a.b_c-d"},
		{name: "stream", rule: kinesisARN, arn: "arn:aws:kinesis:ap-southeast-2:123456789012:stream/events"},
		{name: "log group", rule: logGroupARN, arn: "arn:aws:logs:eu-central-1:123456789012:log-group:/aws/sluice#1"},
		{name: "log group with :*", rule: logGroupARN, arn: "arn:aws:logs:eu-central-1:123456789012:log-group:sluice:*"},
		{name: "role", rule: roleARN, arn: "arn:aws:iam::123456789012:role/sluice+delivery@ops"},
		{name: "role with path", rule: roleARN, arn: "arn:aws:iam::123456789012:role/a/b/sluice"},
		{name: "govcloud", rule: kinesisARN, arn: "arn:aws-us-gov:kinesis:us-gov-east-1:123456789012:stream/events"},
		{name: "china", rule: kinesisARN, arn: "arn:aws-cn:kinesis:cn-northwest-1:123456789012:stream/events"},

		{name: "empty", rule: kinesisARN, arn: "", wantMsg: "is required"},
		{name: "no prefix", rule: kinesisARN, arn: "aws:kinesis:us-east-1:123456789012:stream/events", wantMsg: "is not an ARN"},
		{name: "partition", rule: kinesisARN, arn: "arn:aws-iso-b:kinesis:us-isob-east-1:123456789012:stream/x", wantMsg: "partition"},
		{name: "service", rule: firehoseARN, arn: "arn:aws:kinesis:us-east-1:123456789012:deliverystream/x", wantMsg: `not "firehose"`},
		{name: "region missing", rule: logGroupARN, arn: "arn:aws:logs::123456789012:log-group:x", wantMsg: "region is missing"},
		{name: "region malformed", rule: logGroupARN, arn: "arn:aws:logs:US-EAST-1:123456789012:log-group:x", wantMsg: "not a region name"},
		{name: "us-gov region in aws", rule: kinesisARN, arn: "arn:aws:kinesis:us-gov-west-1:123456789012:stream/x", wantMsg: "not in the partition"},
		{name: "aws region in aws-us-gov", rule: kinesisARN, arn: "arn:aws-us-gov:kinesis:us-east-1:123456789012:stream/x", wantMsg: "not in the partition"},
		{name: "role with region", rule: roleARN, arn: "arn:aws:iam:us-east-1:123456789012:role/x", wantMsg: "has no region"},
		{name: "account", rule: roleARN, arn: "arn:aws:iam::1234567890123:role/x", wantMsg: "12 digits"},
		{name: "resource type", rule: logGroupARN, arn: "arn:aws:logs:us-east-1:123456789012:log-stream:x", wantMsg: `does not start with "log-group:"`},
		{name: "log group characters", rule: logGroupARN, arn: "arn:aws:logs:us-east-1:123456789012:log-group:a b", wantMsg: "may hold only"},
		{name: "log group too long", rule: logGroupARN, arn: "arn:aws:logs:us-east-1:123456789012:log-group:" + strings.Repeat("a", 513), wantMsg: "longer than 512"},
		{name: "delivery stream too long", rule: firehoseARN, arn: "arn:aws:firehose:us-east-1:123456789012:deliverystream/" + strings.Repeat("a", 65), wantMsg: "longer than 64"},
		{name: "role name characters", rule: roleARN, arn: "arn:aws:iam::123456789012:role/a:b", wantMsg: "may hold only"},
		{name: "role path with a space", rule: roleARN, arn: "arn:aws:iam::123456789012:role/a b/c", wantMsg: "role path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parsed, err := checkARN("f", tt.arn, tt.rule)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("checkARN(%q): %v", tt.arn, err)
				}
				if parsed.String() != tt.arn {
					t.Fatalf("parsed ARN %q, want %q", parsed, tt.arn)
				}
				return
			}
			var invalid *ValidationError
			if !errors.As(err, &invalid) || invalid.Field != "f" {
				t.Fatalf("checkARN(%q) = %v, want a *ValidationError of f", tt.arn, err)
			}
			if !strings.Contains(invalid.Msg, tt.wantMsg) || !strings.Contains(invalid.Msg, tt.rule.example) {
				t.Fatalf("message %q does not say %q and show an example ARN", invalid.Msg, tt.wantMsg)
			}
		})
	}
}
