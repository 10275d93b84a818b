package api

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
)

// TestTargetBody checks the bytes of each type's target in a response and
// in an audit event, a role path's '&', '<' and '>' unescaped as the rest
// of a body is, and the secret never in either.
func TestTargetBody(t *testing.T) {
	role := store.AWSAuth{Role: &store.AWSRole{RoleARN: "arn:aws:iam::123456789012:role/a&<b>/r"}}
	creds := store.AWSAuth{Creds: &store.AWSCreds{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "s3cret"}}
	tests := []struct {
		name          string
		target        store.Target
		body, audited string
	}{
		{"firehose", store.Target{Firehose: &store.FirehoseTarget{Auth: creds, DeliveryStreamARN: "arn:aws:firehose:us-east-1:123456789012:deliverystream/d"}},
			`{"firehose":{"auth":{"creds":{"aws_access_key_id":"AKIDEXAMPLE"}},"delivery_stream_arn":"arn:aws:firehose:us-east-1:123456789012:deliverystream/d"}}`,
			`{"firehose":{"auth":{"creds":{"aws_access_key_id":"AKIDEXAMPLE","aws_secret_access_key":null}},"delivery_stream_arn":"arn:aws:firehose:us-east-1:123456789012:deliverystream/d"}}`},
		{"kinesis", store.Target{Kinesis: &store.KinesisTarget{Auth: role, StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/s"}},
			`{"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/a&<b>/r"}},"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/s"}}`,
			`{"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/a&<b>/r"}},"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/s"}}`},
		{"cloudwatch_logs", store.Target{CloudWatchLogs: &store.CloudWatchLogsTarget{Auth: creds, LogGroupARN: "arn:aws:logs:us-east-1:123456789012:log-group:g:*"}},
			`{"cloudwatch_logs":{"auth":{"creds":{"aws_access_key_id":"AKIDEXAMPLE"}},"log_group_arn":"arn:aws:logs:us-east-1:123456789012:log-group:g:*"}}`,
			`{"cloudwatch_logs":{"auth":{"creds":{"aws_access_key_id":"AKIDEXAMPLE","aws_secret_access_key":null}},"log_group_arn":"arn:aws:logs:us-east-1:123456789012:log-group:g:*"}}`},
		{"none", store.Target{}, `{}`, `{}`},
	}
	s := &Server{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := store.Destination{ID: "ed_1", Target: tt.target}
			for _, c := range []struct {
				what string
				body any
				want string
			}{
				{"response", targetResponse(d.Redacted().Target), tt.body},
				{"audit event", s.destinationAudit(nil, d).Target, tt.audited},
			} {
				var out bytes.Buffer
				enc := json.NewEncoder(&out)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(map[string]any{"target": c.body}); err != nil {
					t.Fatal(err)
				}
				if want := `{"target":` + c.want + "}\n"; out.String() != want {
					t.Errorf("%s:\n got %s\nwant %s", c.what, out.String(), want)
				}
			}
			if tt.target.Auth().Creds != nil && tt.target.Auth().Creds.SecretAccessKey != "s3cret" {
				t.Fatal("the target's secret was removed from the destination itself")
			}
		})
	}
}
