package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// Valid ARNs for tests.
const (
	streamARN         = "arn:aws:kinesis:us-east-1:123456789012:stream/events"
	deliveryStreamARN = "arn:aws:firehose:eu-west-1:123456789012:deliverystream/events"
	logGroupARN       = "arn:aws:logs:us-east-2:123456789012:log-group:/sluice/events"
	roleARN           = "arn:aws:iam::123456789012:role/sluice-delivery"
	testSecret        = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

// kinesisDestination is a valid destination delivering to Kinesis through a
// role.
func kinesisDestination() store.Destination {
	return store.Destination{
		Description: "events to kinesis",
		Metadata:    `{"team":"ops"}`,
		Format:      "json",
		Target: store.Target{Kinesis: &store.KinesisTarget{
			Auth:      store.AWSAuth{Role: &store.AWSRole{RoleARN: roleARN}},
			StreamARN: streamARN,
		}},
	}
}

// credsDestination is a valid destination delivering to Firehose with
// static credentials.
func credsDestination() store.Destination {
	return store.Destination{
		Target: store.Target{Firehose: &store.FirehoseTarget{
			Auth:              store.AWSAuth{Creds: &store.AWSCreds{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: testSecret}},
			DeliveryStreamARN: deliveryStreamARN,
		}},
	}
}

func (e env) createDestination(t *testing.T, accountID string, in store.Destination) store.Destination {
	t.Helper()
	d, err := e.store.CreateDestination(e.ctx, accountID, in)
	if err != nil {
		t.Fatalf("CreateDestination: %v", err)
	}
	return d
}

// wantInvalid fails the test unless err is a *store.ValidationError of the
// field, matching store.ErrInvalid, with a message.
func wantInvalid(t *testing.T, err error, field string) *store.ValidationError {
	t.Helper()
	var invalid *store.ValidationError
	if !errors.As(err, &invalid) {
		t.Fatalf("error = %v, want a *store.ValidationError of %s", err, field)
	}
	if invalid.Field != field {
		t.Fatalf("error of field %q (%v), want one of %q", invalid.Field, err, field)
	}
	if !errors.Is(err, store.ErrInvalid) || invalid.Msg == "" {
		t.Fatalf("error %v: want it to match ErrInvalid and say what is wrong", err)
	}
	return invalid
}

func TestCreateDestinationValidation(t *testing.T) {
	kinesis := func(change func(*store.KinesisTarget)) func(*store.Destination) {
		return func(d *store.Destination) { change(d.Target.Kinesis) }
	}
	streamARNIs := func(arn string) func(*store.Destination) {
		return kinesis(func(k *store.KinesisTarget) { k.StreamARN = arn })
	}
	roleARNIs := func(arn string) func(*store.Destination) {
		return kinesis(func(k *store.KinesisTarget) { k.Auth.Role.RoleARN = arn })
	}
	creds := func(id, secret string) func(*store.Destination) {
		return kinesis(func(k *store.KinesisTarget) {
			k.Auth = store.AWSAuth{Creds: &store.AWSCreds{AccessKeyID: id, SecretAccessKey: secret}}
		})
	}
	tests := []struct {
		name      string
		change    func(*store.Destination)
		wantField string // "" for a valid destination
	}{
		{name: "valid", change: func(*store.Destination) {}},
		{name: "longest description in bytes", change: func(d *store.Destination) { d.Description = strings.Repeat("d", 255) }},
		{name: "description over 255 bytes", change: func(d *store.Destination) { d.Description = strings.Repeat("é", 128) }, wantField: "description"},
		{name: "description not utf-8", change: func(d *store.Destination) { d.Description = "\xff" }, wantField: "description"},
		{name: "longest metadata in bytes", change: func(d *store.Destination) { d.Metadata = strings.Repeat("m", 4096) }},
		{name: "metadata over 4096 bytes", change: func(d *store.Destination) { d.Metadata = strings.Repeat("é", 2049) }, wantField: "metadata"},
		{name: "format in upper case", change: func(d *store.Destination) { d.Format = "JSON" }},
		{name: "format left out", change: func(d *store.Destination) { d.Format = "" }},
		{name: "format not json", change: func(d *store.Destination) { d.Format = "avro" }, wantField: "format"},
		{name: "no target", change: func(d *store.Destination) { d.Target = store.Target{} }, wantField: "target"},
		{name: "two targets", change: func(d *store.Destination) { d.Target.Firehose = credsDestination().Target.Firehose }, wantField: "target"},
		{name: "firehose", change: func(d *store.Destination) { d.Target = credsDestination().Target }},
		{name: "firehose ARN of a stream", change: func(d *store.Destination) {
			d.Target = credsDestination().Target
			d.Target.Firehose.DeliveryStreamARN = "arn:aws:firehose:eu-west-1:123456789012:stream/events"
		}, wantField: "target.firehose.delivery_stream_arn"},
		{name: "cloudwatch logs", change: func(d *store.Destination) {
			d.Target = store.Target{CloudWatchLogs: &store.CloudWatchLogsTarget{Auth: d.Target.Kinesis.Auth, LogGroupARN: logGroupARN}}
		}},
		{name: "cloudwatch logs with :*", change: func(d *store.Destination) {
			d.Target = store.Target{CloudWatchLogs: &store.CloudWatchLogsTarget{Auth: d.Target.Kinesis.Auth, LogGroupARN: logGroupARN + ":*"}}
		}},
		{name: "log group without name", change: func(d *store.Destination) {
			d.Target = store.Target{CloudWatchLogs: &store.CloudWatchLogsTarget{Auth: d.Target.Kinesis.Auth,
				LogGroupARN: "arn:aws:logs:us-east-2:123456789012:log-group:"}}
		}, wantField: "target.cloudwatch_logs.log_group_arn"},
		{name: "no auth", change: kinesis(func(k *store.KinesisTarget) { k.Auth = store.AWSAuth{} }), wantField: "target.kinesis.auth"},
		{name: "role and creds", change: kinesis(func(k *store.KinesisTarget) {
			k.Auth.Creds = &store.AWSCreds{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: testSecret}
		}), wantField: "target.kinesis.auth"},
		{name: "creds", change: creds("AKIAIOSFODNN7EXAMPLE", testSecret)},
		{name: "creds of an emulator", change: creds("test", "test")},
		{name: "creds without key id", change: creds("", testSecret), wantField: "target.kinesis.auth.creds.aws_access_key_id"},
		{name: "creds with a bad key id", change: creds("AKIA IOSFODNN7", testSecret), wantField: "target.kinesis.auth.creds.aws_access_key_id"},
		{name: "creds without secret", change: creds("AKIAIOSFODNN7EXAMPLE", ""), wantField: "target.kinesis.auth.creds.aws_secret_access_key"},
		{name: "creds with a secret with spaces", change: creds("AKIAIOSFODNN7EXAMPLE", "a secret"), wantField: "target.kinesis.auth.creds.aws_secret_access_key"},
		{name: "role with a path", change: roleARNIs("arn:aws:iam::123456789012:role/service/sluice/delivery")},
		{name: "role ARN empty", change: roleARNIs(""), wantField: "target.kinesis.auth.role.role_arn"},
		{name: "role ARN not an ARN", change: roleARNIs("sluice-delivery"), wantField: "target.kinesis.auth.role.role_arn"},
		{name: "role ARN with a region", change: roleARNIs("arn:aws:iam:us-east-1:123456789012:role/x"), wantField: "target.kinesis.auth.role.role_arn"},
		{name: "role ARN of another service", change: roleARNIs("arn:aws:sts::123456789012:role/x"), wantField: "target.kinesis.auth.role.role_arn"},
		{name: "role ARN of a user", change: roleARNIs("arn:aws:iam::123456789012:user/x"), wantField: "target.kinesis.auth.role.role_arn"},
		{name: "role ARN without name", change: roleARNIs("arn:aws:iam::123456789012:role/path/"), wantField: "target.kinesis.auth.role.role_arn"},
		{name: "role ARN with an empty path segment", change: roleARNIs("arn:aws:iam::123456789012:role//x"), wantField: "target.kinesis.auth.role.role_arn"},
		{name: "role ARN of another partition", change: roleARNIs("arn:aws-cn:iam::123456789012:role/x"), wantField: "target.kinesis.auth.role.role_arn"},
		{name: "china", change: func(d *store.Destination) {
			d.Target.Kinesis.StreamARN = "arn:aws-cn:kinesis:cn-north-1:123456789012:stream/events"
			d.Target.Kinesis.Auth.Role.RoleARN = "arn:aws-cn:iam::123456789012:role/x"
		}},
		{name: "govcloud", change: func(d *store.Destination) {
			d.Target.Kinesis.StreamARN = "arn:aws-us-gov:kinesis:us-gov-west-1:123456789012:stream/events"
			d.Target.Kinesis.Auth.Role.RoleARN = "arn:aws-us-gov:iam::123456789012:role/x"
		}},
		{name: "stream ARN empty", change: streamARNIs(""), wantField: "target.kinesis.stream_arn"},
		{name: "stream ARN not an ARN", change: streamARNIs("events"), wantField: "target.kinesis.stream_arn"},
		{name: "stream ARN too short", change: streamARNIs("arn:aws:kinesis:us-east-1:stream/events"), wantField: "target.kinesis.stream_arn"},
		{name: "unknown partition", change: streamARNIs("arn:aws-iso:kinesis:us-iso-east-1:123456789012:stream/events"), wantField: "target.kinesis.stream_arn"},
		{name: "another service", change: streamARNIs("arn:aws:firehose:us-east-1:123456789012:stream/events"), wantField: "target.kinesis.stream_arn"},
		{name: "no region", change: streamARNIs("arn:aws:kinesis::123456789012:stream/events"), wantField: "target.kinesis.stream_arn"},
		{name: "malformed region", change: streamARNIs("arn:aws:kinesis:us_east_1:123456789012:stream/events"), wantField: "target.kinesis.stream_arn"},
		{name: "region of another partition", change: streamARNIs("arn:aws:kinesis:cn-north-1:123456789012:stream/events"), wantField: "target.kinesis.stream_arn"},
		{name: "account of 11 digits", change: streamARNIs("arn:aws:kinesis:us-east-1:12345678901:stream/events"), wantField: "target.kinesis.stream_arn"},
		{name: "account with letters", change: streamARNIs("arn:aws:kinesis:us-east-1:12345678901a:stream/events"), wantField: "target.kinesis.stream_arn"},
		{name: "resource of another type", change: streamARNIs("arn:aws:kinesis:us-east-1:123456789012:table/events"), wantField: "target.kinesis.stream_arn"},
		{name: "stream without name", change: streamARNIs("arn:aws:kinesis:us-east-1:123456789012:stream/"), wantField: "target.kinesis.stream_arn"},
		{name: "stream name with a slash", change: streamARNIs("arn:aws:kinesis:us-east-1:123456789012:stream/a/b"), wantField: "target.kinesis.stream_arn"},
	}
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := kinesisDestination()
			tt.change(&in)
			d, err := e.store.CreateDestination(e.ctx, account.ID, in)
			if tt.wantField != "" {
				wantInvalid(t, err, tt.wantField)
				return
			}
			if err != nil {
				t.Fatalf("CreateDestination: %v", err)
			}
			if d.Format != store.FormatJSON {
				t.Fatalf("format = %q, want %q", d.Format, store.FormatJSON)
			}
			got, err := e.store.GetDestination(e.ctx, account.ID, d.ID)
			if err != nil {
				t.Fatalf("GetDestination: %v", err)
			}
			wantSameJSON(t, got, d)
		})
	}
}

// wantSameJSON fails the test unless got and want encode to the same JSON.
func wantSameJSON(t *testing.T, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("encoding %+v: %v", got, err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("encoding %+v: %v", want, err)
	}
	if !bytes.Equal(g, w) {
		t.Fatalf("got  %s\nwant %s", g, w)
	}
}

func TestDestinationRoundTrip(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	in := credsDestination()
	in.Format = "Json"
	d := e.createDestination(t, account.ID, in)
	if err := schemas.CheckID(schemas.PrefixDestination, d.ID); err != nil {
		t.Fatalf("destination id: %v", err)
	}
	if d.AccountID != account.ID || d.CreatedAt.IsZero() || d.Format != "json" {
		t.Fatalf("destination = %+v", d)
	}
	if in.Target.Firehose == d.Target.Firehose {
		t.Fatalf("the destination shares its target with the input")
	}

	got, err := e.store.GetDestination(e.ctx, account.ID, d.ID)
	if err != nil {
		t.Fatalf("GetDestination: %v", err)
	}
	wantSameJSON(t, got, d)
	if got.Target.Firehose.Auth.Creds.SecretAccessKey != testSecret {
		t.Fatalf("the stored destination lost its secret access key, which delivery needs")
	}

	updated, err := e.store.UpdateDestination(e.ctx, account.ID, d.ID, func(d *store.Destination) error {
		d.Description = "renamed"
		d.Target.Firehose.Auth = store.AWSAuth{Role: &store.AWSRole{RoleARN: roleARN}}
		d.ID, d.CreatedAt = "ed_other", d.CreatedAt.Add(1) // discarded
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateDestination: %v", err)
	}
	if updated.ID != d.ID || !updated.CreatedAt.Equal(d.CreatedAt) || updated.Description != "renamed" ||
		updated.Target.Firehose.Auth.Role == nil || updated.Target.Firehose.Auth.Creds != nil {
		t.Fatalf("updated destination = %+v", updated)
	}
	got, err = e.store.GetDestination(e.ctx, account.ID, d.ID)
	if err != nil {
		t.Fatalf("GetDestination after update: %v", err)
	}
	wantSameJSON(t, got, updated)

	if _, err := e.store.DeleteDestination(e.ctx, account.ID, d.ID); err != nil {
		t.Fatalf("DeleteDestination: %v", err)
	}
	_, err = e.store.GetDestination(e.ctx, account.ID, d.ID)
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, errOf(e.store.DeleteDestination(e.ctx, account.ID, d.ID)), store.ErrNotFound)
	_, err = e.store.UpdateDestination(e.ctx, account.ID, d.ID, func(*store.Destination) error { return nil })
	wantErr(t, err, store.ErrNotFound)
}

func TestUpdateDestinationChecks(t *testing.T) {
	errFromFn := errors.New("refused by the caller")
	tests := []struct {
		name      string
		fn        func(*store.Destination) error
		wantErr   error
		wantField string
	}{
		{name: "target type change", fn: func(d *store.Destination) error {
			d.Target = credsDestination().Target
			return nil
		}, wantField: "target"},
		{name: "second target", fn: func(d *store.Destination) error {
			d.Target.Firehose = credsDestination().Target.Firehose
			return nil
		}, wantField: "target"},
		{name: "invalid ARN", fn: func(d *store.Destination) error {
			d.Target.Kinesis.StreamARN = "arn:aws:kinesis:us-east-1:123:stream/x"
			return nil
		}, wantField: "target.kinesis.stream_arn"},
		{name: "description too long", fn: func(d *store.Destination) error {
			d.Description = strings.Repeat("d", 256)
			return nil
		}, wantField: "description"},
		{name: "error of fn", fn: func(*store.Destination) error { return errFromFn }, wantErr: errFromFn},
	}
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	d := e.createDestination(t, account.ID, kinesisDestination())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.store.UpdateDestination(e.ctx, account.ID, d.ID, tt.fn)
			if tt.wantField != "" {
				v := wantInvalid(t, err, tt.wantField)
				if tt.name == "target type change" && !strings.Contains(v.Msg, "target type cannot change") {
					t.Fatalf("message %q does not say the target type cannot change", v.Msg)
				}
			} else if err != tt.wantErr {
				t.Fatalf("error = %v, want %v as it is", err, tt.wantErr)
			}
			got, err := e.store.GetDestination(e.ctx, account.ID, d.ID)
			if err != nil {
				t.Fatalf("GetDestination: %v", err)
			}
			wantSameJSON(t, got, d)
		})
	}
}

// TestDestinationNeverShowsSecret checks that neither the JSON of a
// redacted destination nor slog nor fmt shows the secret access key.
func TestDestinationNeverShowsSecret(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	d := e.createDestination(t, account.ID, credsDestination())

	redacted := d.Redacted()
	if d.Target.Firehose.Auth.Creds.SecretAccessKey != testSecret {
		t.Fatalf("Redacted changed the destination it was called on")
	}
	if redacted.Target.Firehose.Auth.Creds.AccessKeyID != "AKIAIOSFODNN7EXAMPLE" {
		t.Fatalf("Redacted lost the access key id: %+v", redacted.Target.Firehose.Auth)
	}
	encoded, err := json.Marshal(redacted)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	if strings.Contains(string(encoded), "aws_secret_access_key") {
		t.Fatalf("redacted JSON names the secret field: %s", encoded)
	}

	var logged bytes.Buffer
	for _, handler := range []slog.Handler{slog.NewJSONHandler(&logged, nil), slog.NewTextHandler(&logged, nil)} {
		logger := slog.New(handler)
		logger.Info("destination", "value", d, "pointer", &d, "target", d.Target, "firehose", d.Target.Firehose,
			"fire", *d.Target.Firehose, "auth", d.Target.Firehose.Auth, "creds", d.Target.Firehose.Auth.Creds,
			"credsValue", *d.Target.Firehose.Auth.Creds)
		logger.Info("nested", slog.Group("g", "destination", d))
	}
	printed := fmt.Sprintf("%v %+v %#v %v %+v %#v", d, d, d, *d.Target.Firehose.Auth.Creds,
		*d.Target.Firehose.Auth.Creds, *d.Target.Firehose.Auth.Creds)
	for name, out := range map[string]string{"json.Marshal(Redacted)": string(encoded), "slog": logged.String(), "fmt": printed} {
		if strings.Contains(out, testSecret) {
			t.Fatalf("%s shows the secret access key: %s", name, out)
		}
	}
	if !strings.Contains(logged.String(), "AKIAIOSFODNN7EXAMPLE") || !strings.Contains(logged.String(), deliveryStreamARN) {
		t.Fatalf("slog does not show the access key id and ARN: %s", logged.String())
	}
}
