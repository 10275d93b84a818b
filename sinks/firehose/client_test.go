package firehose

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/internal/kinesalitetest"
	"github.com/sluicehq/sluice/sinks"
)

// These tests run the real SDK client against awstest, to check what the
// fake interface cannot: the request on the wire, the signature's key and
// region, no retries, endpoints.

const putRecordBatch = "Firehose_20150804.PutRecordBatch"

var staticKeys = sinks.AWSAuth{AccessKeyID: "AKIASTATICKEY0000000", SecretAccessKey: "static-secret"}

// allStored answers a PutRecordBatch call as Firehose does when it stored
// every record.
func allStored(call awstest.Call) awstest.Answer {
	var in struct{ Records []json.RawMessage }
	_ = json.Unmarshal(call.Body, &in)
	entries := make([]string, len(in.Records))
	for i := range entries {
		entries[i] = fmt.Sprintf(`{"RecordId":"rec-%d"}`, i)
	}
	return awstest.Answer{Status: http.StatusOK, Body: `{"FailedPutCount":0,"Encrypted":false,"RequestResponses":[` + strings.Join(entries, ",") + `]}`}
}

// TestClientRequest checks the PutRecordBatch request on the wire and its
// signature.
func TestClientRequest(t *testing.T) {
	srv := awstest.Start(t)
	awstest.Isolate(t)
	srv.Answer(putRecordBatch, allStored)
	sink, err := New(context.Background(), Config{DeliveryStreamARN: testStreamARN, Auth: staticKeys, Endpoint: srv.URL, HTTPClient: kinesalitetest.LoopbackHTTPClient()})
	if err != nil {
		t.Fatal(err)
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Fatalf("New made %d calls, want none", len(calls))
	}
	results, err := sink.Write(context.Background(), records(2))
	if err != nil || len(results) != 2 || results[0].Status != sinks.Accepted || results[1].Status != sinks.Accepted {
		t.Fatalf("Write = %v, %v", results, err)
	}
	calls := srv.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	var in struct {
		DeliveryStreamName string
		Records            []struct{ Data []byte }
	}
	if err := json.Unmarshal(calls[0].Body, &in); err != nil {
		t.Fatal(err)
	}
	if in.DeliveryStreamName != "events" || len(in.Records) != 2 || string(in.Records[1].Data) != "{\"n\":1}\n" {
		t.Errorf("sent %s", calls[0].Body)
	}
	auth := calls[0].Header.Get("Authorization")
	if !strings.Contains(auth, "Credential="+staticKeys.AccessKeyID+"/") || !strings.Contains(auth, "/eu-west-1/firehose/aws4_request") {
		t.Errorf("signed with %q, want the static key in eu-west-1", auth)
	}
}

// TestSDKDoesNotRetry checks that each failed call is made once, whatever
// the SDK's retryer would have done, and classified from the real answer.
func TestSDKDoesNotRetry(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   sinks.Class
	}{
		{"throughput exceeded", 503, `{"__type":"ServiceUnavailableException","message":"Slow down."}`, sinks.ClassThrottled},
		{"internal failure", 500, `{"__type":"InternalFailure","message":"oops"}`, sinks.ClassUnavailable},
		{"bad gateway, HTML", 502, `<html>bad gateway</html>`, sinks.ClassUnavailable},
		{"front end throttled", 400, `{"__type":"ThrottlingException","message":"Rate exceeded"}`, sinks.ClassThrottled},
		{"not found", 400, `{"__type":"ResourceNotFoundException","message":"Firehose events under account 123456789012 not found."}`, sinks.ClassNotFound},
		{"denied", 400, `{"__type":"AccessDeniedException","message":"not authorized to perform: firehose:PutRecordBatch"}`, sinks.ClassAccessDenied},
		{"unknown key", 400, `{"__type":"UnrecognizedClientException","message":"The security token included in the request is invalid."}`, sinks.ClassBadCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awstest.Start(t)
			awstest.Isolate(t)
			srv.Answer(putRecordBatch, awstest.Always(tt.status, tt.body))
			sink, err := New(context.Background(), Config{DeliveryStreamARN: testStreamARN, Auth: staticKeys, Endpoint: srv.URL, HTTPClient: kinesalitetest.LoopbackHTTPClient()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = sink.Write(context.Background(), records(2))
			if got := sinks.ClassOf(err); got != tt.want {
				t.Errorf("class %s, want %s (%v)", got, tt.want, err)
			}
			if calls := srv.Calls(); len(calls) != 1 {
				t.Errorf("PutRecordBatch called %d times, want exactly 1", len(calls))
			}
		})
	}
}

// TestEndpointFromEnvironment checks that the SDK's standard variables
// point the sink at an emulator with no sluice setting, and that the
// default chain signs when no Auth is given.
func TestEndpointFromEnvironment(t *testing.T) {
	for _, variable := range []string{"AWS_ENDPOINT_URL_FIREHOSE", "AWS_ENDPOINT_URL"} {
		t.Run(variable, func(t *testing.T) {
			srv := awstest.Start(t)
			awstest.Isolate(t)
			t.Setenv(variable, srv.URL)
			srv.Answer(putRecordBatch, allStored)
			sink, err := New(context.Background(), Config{DeliveryStreamARN: testStreamARN, HTTPClient: kinesalitetest.LoopbackHTTPClient()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sink.Write(context.Background(), records(1)); err != nil {
				t.Fatal(err)
			}
			calls := srv.Calls()
			if len(calls) != 1 || !strings.Contains(calls[0].Header.Get("Authorization"), "Credential="+awstest.DefaultChainKey+"/") {
				t.Fatalf("calls %+v, want one signed by the default chain", calls)
			}
		})
	}
}

// TestConfigValidate checks the configs New refuses.
func TestConfigValidate(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/sluice"
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"static keys", Config{DeliveryStreamARN: testStreamARN, Auth: staticKeys}, true},
		{"default chain", Config{DeliveryStreamARN: testStreamARN}, true},
		{"role", Config{DeliveryStreamARN: testStreamARN, Auth: sinks.AWSAuth{RoleARN: role}, ExternalID: "acc_1"}, true},
		{"a long name", Config{DeliveryStreamARN: "arn:aws:firehose:eu-west-1:123456789012:deliverystream/" + strings.Repeat("a", 64)}, true},
		{"no ARN", Config{}, false},
		{"not an ARN", Config{DeliveryStreamARN: "events"}, false},
		{"a Kinesis ARN", Config{DeliveryStreamARN: "arn:aws:kinesis:eu-west-1:123456789012:stream/events"}, false},
		{"no name", Config{DeliveryStreamARN: "arn:aws:firehose:eu-west-1:123456789012:deliverystream/"}, false},
		{"a name too long", Config{DeliveryStreamARN: "arn:aws:firehose:eu-west-1:123456789012:deliverystream/" + strings.Repeat("a", 65)}, false},
		{"a name with a slash", Config{DeliveryStreamARN: "arn:aws:firehose:eu-west-1:123456789012:deliverystream/a/b"}, false},
		{"no region", Config{DeliveryStreamARN: "arn:aws:firehose::123456789012:deliverystream/events"}, false},
		{"role and keys", Config{DeliveryStreamARN: testStreamARN, Auth: sinks.AWSAuth{RoleARN: role, AccessKeyID: "A", SecretAccessKey: "B"}, ExternalID: "acc_1"}, false},
		{"half a key pair", Config{DeliveryStreamARN: testStreamARN, Auth: sinks.AWSAuth{AccessKeyID: "A"}}, false},
		{"role without external id", Config{DeliveryStreamARN: testStreamARN, Auth: sinks.AWSAuth{RoleARN: role}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			awstest.CheckValidate(t, tt.ok, ErrConfig, func() error { _, err := tt.cfg.check(); return err }, func() error {
				_, err := New(context.Background(), tt.cfg)
				return err
			})
		})
	}
}

// TestConfigHidesSecret checks that printing or logging a Config never
// shows the secret access key.
func TestConfigHidesSecret(t *testing.T) {
	cfg := Config{DeliveryStreamARN: testStreamARN, Auth: staticKeys}
	awstest.CheckHidesSecret(t, staticKeys, cfg)
}
