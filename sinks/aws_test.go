package sinks

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// TestAWSAuthValidate checks the credentials Validate refuses.
func TestAWSAuthValidate(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/sluice"
	tests := []struct {
		name       string
		auth       AWSAuth
		externalID string
		ok         bool
	}{
		{"default chain", AWSAuth{}, "", true},
		{"static keys", AWSAuth{AccessKeyID: "A", SecretAccessKey: "B"}, "", true},
		{"role", AWSAuth{RoleARN: role}, "acc_1", true},
		{"role with a path", AWSAuth{RoleARN: "arn:aws:iam::123456789012:role/delivery/sluice"}, "acc_1", true},
		{"role and keys", AWSAuth{RoleARN: role, AccessKeyID: "A", SecretAccessKey: "B"}, "acc_1", false},
		{"half a key pair", AWSAuth{AccessKeyID: "A"}, "", false},
		{"the other half", AWSAuth{SecretAccessKey: "B"}, "", false},
		{"role without external id", AWSAuth{RoleARN: role}, "", false},
		{"role that is a user", AWSAuth{RoleARN: "arn:aws:iam::123456789012:user/sluice"}, "acc_1", false},
		{"role that is no ARN", AWSAuth{RoleARN: "sluice"}, "acc_1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.auth.Validate(tt.externalID)
			if (err == nil) != tt.ok {
				t.Fatalf("Validate = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestAWSAuthHidesSecret checks that printing or logging credentials never
// shows the secret access key.
func TestAWSAuthHidesSecret(t *testing.T) {
	auth := AWSAuth{AccessKeyID: "AKIASTATICKEY0000000", SecretAccessKey: "static-secret"}
	access := AWSAccess{Region: "eu-west-1", Auth: auth}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("sink", "auth", auth, "access", access)
	for _, shown := range []string{fmt.Sprint(auth), fmt.Sprintf("%+v", access), logged.String()} {
		if strings.Contains(shown, auth.SecretAccessKey) {
			t.Errorf("the secret shows in %s", shown)
		}
		if !strings.Contains(shown, auth.AccessKeyID) {
			t.Errorf("the access key id is missing from %s", shown)
		}
	}
}

// TestParseTargetARN checks the service and region checks.
func TestParseTargetARN(t *testing.T) {
	tests := []struct {
		arn, service, region string
	}{
		{"arn:aws:firehose:eu-west-1:123456789012:deliverystream/events", "firehose", "eu-west-1"},
		{"arn:aws:logs:us-east-1:123456789012:log-group:/sluice/events:*", "logs", "us-east-1"},
		{"arn:aws:kinesis:eu-west-1:123456789012:stream/events", "firehose", ""},
		{"arn:aws:firehose::123456789012:deliverystream/events", "firehose", ""},
		{"events", "firehose", ""},
	}
	for _, tt := range tests {
		parsed, err := ParseTargetARN(tt.arn, tt.service)
		switch {
		case tt.region == "" && err == nil:
			t.Errorf("ParseTargetARN(%q, %q) = %v, want an error", tt.arn, tt.service, parsed)
		case tt.region != "" && (err != nil || parsed.Region != tt.region):
			t.Errorf("ParseTargetARN(%q, %q) = %v, %v; want region %s", tt.arn, tt.service, parsed, err, tt.region)
		}
	}
}

// TestLoadAWSConfig checks the region, that no retryer and no attempt
// count survive from the environment, and that failures to get credentials
// are marked.
func TestLoadAWSConfig(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE":             none,
		"AWS_SHARED_CREDENTIALS_FILE": none,
		"AWS_PROFILE":                 "",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_ACCESS_KEY_ID":           "",
		"AWS_SECRET_ACCESS_KEY":       "",
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  "us-east-2",
		"AWS_MAX_ATTEMPTS":            "5",
		"AWS_RETRY_MODE":              "standard",
	} {
		t.Setenv(k, v)
	}
	ctx := t.Context()
	static, err := LoadAWSConfig(ctx, AWSAccess{Region: "eu-west-1", Auth: AWSAuth{AccessKeyID: "AKIA0", SecretAccessKey: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	if static.Region != "eu-west-1" {
		t.Errorf("region %q, want the ARN's eu-west-1", static.Region)
	}
	if static.RetryMaxAttempts != 0 {
		t.Errorf("RetryMaxAttempts %d, want 0 whatever AWS_MAX_ATTEMPTS says", static.RetryMaxAttempts)
	}
	if _, ok := static.Retryer().(aws.NopRetryer); !ok {
		t.Errorf("retryer %T, want aws.NopRetryer", static.Retryer())
	}
	creds, err := static.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "AKIA0" {
		t.Errorf("static credentials %v, %v", creds.AccessKeyID, err)
	}

	chain, err := LoadAWSConfig(ctx, AWSAccess{Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = chain.Credentials.Retrieve(ctx)
	var credErr *CredentialsError
	if !errors.As(err, &credErr) {
		t.Errorf("an empty default chain answered %v, want a *CredentialsError", err)
	}
}

// TestTallyErr checks the batches Tally refuses.
func TestTallyErr(t *testing.T) {
	l := Limits{MaxRecords: 3, MaxBatchBytes: 30, MaxRecordBytes: 20, RecordOverhead: 1}
	record := func(n int) Record { return Record{ID: "x", Data: bytes.Repeat([]byte("a"), n)} }
	tests := []struct {
		name  string
		batch []Record
		ok    bool
	}{
		{"empty", nil, true},
		{"at both limits", []Record{record(9), record(9), record(9)}, true},
		{"a record at its limit", []Record{record(19)}, true},
		{"a record too many", []Record{record(1), record(1), record(1), record(1)}, false},
		{"a byte too many, counting the overhead", []Record{record(10), record(9), record(9)}, false},
		{"a record too large, counting the overhead", []Record{record(1), record(20)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tally := l.Tally()
			for _, r := range tt.batch {
				tally.Add(r)
			}
			err := tally.Err()
			var de *DestinationError
			switch {
			case tt.ok && err != nil:
				t.Fatalf("Err = %v", err)
			case !tt.ok && (!errors.As(err, &de) || de.Class != ClassInvalid || de.Code != CodeBatchTooLarge || de.Message == ""):
				t.Fatalf("Err = %v, want an invalid DestinationError with code %s", err, CodeBatchTooLarge)
			}
		})
	}
}
