package awstest

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sluicehq/sluice/sinks"
)

// APIError returns err as the SDK returns the error of a call of operation
// of serviceID ("Kinesis", "PutRecords") whose HTTP response had that
// status: what a fake client returns for a call the service refused.
func APIError(serviceID, operation string, status int, err error) error {
	return &smithy.OperationError{
		ServiceID:     serviceID,
		OperationName: operation,
		Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{
				Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
				Err:      err,
			},
			RequestID: "test-request",
		},
	}
}

// CheckValidate checks one case of a sink's Config.Validate: with ok,
// validate returns nil; without, validate and newSink (the sink's New of the
// same Config) both return an error wrapping errConfig, the sink's
// ErrConfig.
func CheckValidate(t *testing.T, ok bool, errConfig error, validate, newSink func() error) {
	t.Helper()
	err := validate()
	if ok && err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if !ok && !errors.Is(err, errConfig) {
		t.Fatalf("Validate = %v, want an error wrapping ErrConfig", err)
	}
	if !ok {
		if err := newSink(); !errors.Is(err, errConfig) {
			t.Fatalf("New = %v, want an error wrapping ErrConfig", err)
		}
	}
}

// CheckHidesSecret checks that printing (%v, %+v) or logging (slog's JSON)
// each of values, a Config or an AWSAuth with auth in it, never shows
// auth's secret access key, and does show its access key id.
func CheckHidesSecret(t *testing.T, auth sinks.AWSAuth, values ...any) {
	t.Helper()
	var logged strings.Builder
	logger := slog.New(slog.NewJSONHandler(&logged, nil))
	var shown []string
	for _, v := range values {
		logger.Info("sink", "value", v)
		shown = append(shown, fmt.Sprint(v), fmt.Sprintf("%+v", v))
	}
	for _, s := range append(shown, logged.String()) {
		if strings.Contains(s, auth.SecretAccessKey) {
			t.Errorf("the secret shows in %s", s)
		}
		if !strings.Contains(s, auth.AccessKeyID) {
			t.Errorf("the access key id is missing from %s", s)
		}
	}
}

// CheckResults checks the results of a Write of len(want) records whose
// answer gave each sent record codes[i] ("" for stored): record i has
// status want[i]; an accepted one has no code and no message; any other has
// a message and, when codes has an entry for it, that code.
func CheckResults(t *testing.T, results []sinks.Result, want []sinks.Status, codes []string) {
	t.Helper()
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for i, r := range results {
		if r.Status != want[i] {
			t.Errorf("record %d: %v, want %v", i, r.Status, want[i])
		}
		switch {
		case r.Status == sinks.Accepted && (r.Code != "" || r.Message != ""):
			t.Errorf("record %d accepted with code %q, message %q", i, r.Code, r.Message)
		case r.Status != sinks.Accepted && i < len(codes) && r.Code != codes[i]:
			t.Errorf("record %d: code %q, want %q", i, r.Code, codes[i])
		case r.Status != sinks.Accepted && r.Message == "":
			t.Errorf("record %d: no message", i)
		}
	}
}
