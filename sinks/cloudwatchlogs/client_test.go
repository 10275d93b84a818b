package cloudwatchlogs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/internal/kinesalitetest"
	"github.com/sluicehq/sluice/sinks"
)

// These tests run the real SDK client against awstest, to check what the
// fake interface cannot: the requests on the wire, the signature's key and
// region, no retries, endpoints, and errors as the SDK reads them.

const (
	putLogEvents    = "Logs_20140328.PutLogEvents"
	createLogStream = "Logs_20140328.CreateLogStream"
)

var staticKeys = sinks.AWSAuth{AccessKeyID: "AKIASTATICKEY0000000", SecretAccessKey: "static-secret"}

func accepted(awstest.Call) awstest.Answer {
	return awstest.Answer{Status: http.StatusOK, Body: `{"nextSequenceToken":"49650000000000000000000000000000000000000000000000000000"}`}
}

// newClientSink returns a sink of testGroupARN and testStream calling srv.
func newClientSink(t *testing.T, srv *awstest.Server) *Sink {
	t.Helper()
	sink, err := New(context.Background(), Config{LogGroupARN: testGroupARN, LogStream: testStream, Auth: staticKeys, Endpoint: srv.URL, HTTPClient: kinesalitetest.LoopbackHTTPClient()})
	if err != nil {
		t.Fatal(err)
	}
	return sink
}

// TestClientCreatesLogStream checks the calls on the wire of a first Write
// to a missing log stream: PutLogEvents, CreateLogStream, PutLogEvents, all
// signed with the configured key in the ARN's region.
func TestClientCreatesLogStream(t *testing.T) {
	srv := awstest.Start(t)
	awstest.Isolate(t)
	created := false
	srv.Answer(putLogEvents, func(c awstest.Call) awstest.Answer {
		if !created {
			return awstest.Answer{Status: http.StatusBadRequest, Body: `{"__type":"ResourceNotFoundException","message":"The specified log stream does not exist."}`}
		}
		return accepted(c)
	})
	srv.Answer(createLogStream, func(awstest.Call) awstest.Answer {
		created = true
		return awstest.Answer{Status: http.StatusOK, Body: `{}`}
	})
	sink := newClientSink(t, srv)
	if calls := srv.Calls(); len(calls) != 0 {
		t.Fatalf("New made %d calls, want none", len(calls))
	}
	batch := records(2)
	results, err := sink.Write(context.Background(), batch)
	if err != nil || results[0].Status != sinks.Accepted || results[1].Status != sinks.Accepted {
		t.Fatalf("Write = %v, %v", results, err)
	}
	calls := srv.Calls()
	var targets []string
	for _, c := range calls {
		targets = append(targets, c.Target)
		auth := c.Header.Get("Authorization")
		if !strings.Contains(auth, "Credential="+staticKeys.AccessKeyID+"/") || !strings.Contains(auth, "/eu-west-1/logs/aws4_request") {
			t.Errorf("%s signed with %q, want the static key in eu-west-1", c.Target, auth)
		}
	}
	if want := []string{putLogEvents, createLogStream, putLogEvents}; fmt.Sprint(targets) != fmt.Sprint(want) {
		t.Fatalf("calls %v, want %v", targets, want)
	}
	var create struct{ LogGroupName, LogStreamName string }
	if err := json.Unmarshal(calls[1].Body, &create); err != nil || create.LogGroupName != "/sluice/events" || create.LogStreamName != testStream {
		t.Errorf("CreateLogStream sent %s", calls[1].Body)
	}
	var put struct {
		LogGroupName, LogStreamName string
		SequenceToken               *string
		LogEvents                   []struct {
			Timestamp int64
			Message   string
		}
	}
	if err := json.Unmarshal(calls[2].Body, &put); err != nil {
		t.Fatal(err)
	}
	if put.LogGroupName != "/sluice/events" || put.LogStreamName != testStream || put.SequenceToken != nil || len(put.LogEvents) != 2 {
		t.Fatalf("PutLogEvents sent %s", calls[2].Body)
	}
	for i, e := range put.LogEvents {
		if e.Message != string(batch[i].Data) || e.Timestamp != batch[i].Timestamp.UnixMilli() {
			t.Errorf("event %d sent as %+v", i, e)
		}
	}
}

// TestClientRejectedEvents checks rejectedLogEventsInfo as the SDK reads it.
func TestClientRejectedEvents(t *testing.T) {
	srv := awstest.Start(t)
	awstest.Isolate(t)
	srv.Answer(putLogEvents, awstest.Always(http.StatusOK, `{"rejectedLogEventsInfo":{"tooOldLogEventEndIndex":1,"tooNewLogEventStartIndex":2}}`))
	results, err := newClientSink(t, srv).Write(context.Background(), records(3))
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Code != CodeTooOld || results[1].Status != sinks.Accepted || results[2].Code != CodeTooNew {
		t.Fatalf("results %+v, want too old, accepted, too new", results)
	}
}

// TestSDKDoesNotRetry checks that each failed call is made once, whatever
// the SDK's retryer would have done, and classified from the real answer;
// and that a missing group is not_found after one attempt to create the
// stream.
func TestSDKDoesNotRetry(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   sinks.Class
	}{
		{"throttled", 400, `{"__type":"ThrottlingException","message":"Rate exceeded"}`, sinks.ClassThrottled},
		{"unavailable", 503, `{"__type":"ServiceUnavailableException","message":"later"}`, sinks.ClassUnavailable},
		{"bad gateway, HTML", 502, `<html>bad gateway</html>`, sinks.ClassUnavailable},
		{"denied", 400, `{"__type":"AccessDeniedException","message":"not authorized to perform: logs:PutLogEvents"}`, sinks.ClassAccessDenied},
		{"unknown key", 400, `{"__type":"UnrecognizedClientException","message":"The security token included in the request is invalid."}`, sinks.ClassBadCredentials},
		{"not in order", 400, `{"__type":"InvalidParameterException","message":"Log events in a single PutLogEvents request must be in chronological order."}`, sinks.ClassInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awstest.Start(t)
			awstest.Isolate(t)
			srv.Answer(putLogEvents, awstest.Always(tt.status, tt.body))
			_, err := newClientSink(t, srv).Write(context.Background(), records(2))
			if got := sinks.ClassOf(err); got != tt.want {
				t.Errorf("class %s, want %s (%v)", got, tt.want, err)
			}
			if calls := srv.Calls(); len(calls) != 1 {
				t.Errorf("%d calls, want exactly 1", len(calls))
			}
		})
	}
	t.Run("no group", func(t *testing.T) {
		srv := awstest.Start(t)
		awstest.Isolate(t)
		srv.Answer(putLogEvents, awstest.Always(400, `{"__type":"ResourceNotFoundException","message":"The specified log group does not exist."}`))
		srv.Answer(createLogStream, awstest.Always(400, `{"__type":"ResourceNotFoundException","message":"The specified log group does not exist."}`))
		_, err := newClientSink(t, srv).Write(context.Background(), records(2))
		var de *sinks.DestinationError
		if !errors.As(err, &de) || de.Class != sinks.ClassNotFound || !strings.Contains(de.Message, "log group") {
			t.Errorf("Write = %v, want not_found saying the log group does not exist", err)
		}
		if calls := srv.Calls(); len(calls) != 2 {
			t.Errorf("%d calls, want PutLogEvents and CreateLogStream", len(calls))
		}
	})
}

// TestEndpointFromEnvironment checks that the SDK's standard variables
// point the sink at an emulator with no sluice setting, and that the
// default chain signs when no Auth is given.
func TestEndpointFromEnvironment(t *testing.T) {
	for _, variable := range []string{"AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", "AWS_ENDPOINT_URL"} {
		t.Run(variable, func(t *testing.T) {
			srv := awstest.Start(t)
			awstest.Isolate(t)
			t.Setenv(variable, srv.URL)
			srv.Answer(putLogEvents, accepted)
			sink, err := New(context.Background(), Config{LogGroupARN: testGroupARN, LogStream: testStream, HTTPClient: kinesalitetest.LoopbackHTTPClient()})
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
	const group = "arn:aws:logs:eu-west-1:123456789012:log-group:"
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"static keys", Config{LogGroupARN: testGroupARN, LogStream: testStream, Auth: staticKeys}, true},
		{"default chain", Config{LogGroupARN: testGroupARN, LogStream: testStream}, true},
		{"role", Config{LogGroupARN: testGroupARN, LogStream: testStream, Auth: sinks.AWSAuth{RoleARN: role}, ExternalID: "acc_1"}, true},
		{"no stream: the group's sink", Config{LogGroupARN: testGroupARN}, true},
		{"without :*", Config{LogGroupARN: group + "/sluice/events"}, true},
		{"every character of a group", Config{LogGroupARN: group + "a-Z_0/9.#"}, true},
		{"no ARN", Config{}, false},
		{"not an ARN", Config{LogGroupARN: "/sluice/events"}, false},
		{"a Kinesis ARN", Config{LogGroupARN: "arn:aws:kinesis:eu-west-1:123456789012:stream/events"}, false},
		{"a log stream's ARN", Config{LogGroupARN: group + "g:log-stream:s"}, false},
		{"no group name", Config{LogGroupARN: group}, false},
		{"no group name, with :*", Config{LogGroupARN: group + ":*"}, false},
		{"a group name too long", Config{LogGroupARN: group + strings.Repeat("a", 513)}, false},
		{"no region", Config{LogGroupARN: "arn:aws:logs::123456789012:log-group:events"}, false},
		{"a stream with ':'", Config{LogGroupARN: testGroupARN, LogStream: "a:b"}, false},
		{"a stream with '*'", Config{LogGroupARN: testGroupARN, LogStream: "a*"}, false},
		{"a stream too long", Config{LogGroupARN: testGroupARN, LogStream: strings.Repeat("s", 513)}, false},
		{"half a key pair", Config{LogGroupARN: testGroupARN, Auth: sinks.AWSAuth{AccessKeyID: "A"}}, false},
		{"role without external id", Config{LogGroupARN: testGroupARN, Auth: sinks.AWSAuth{RoleARN: role}}, false},
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
	cfg := Config{LogGroupARN: testGroupARN, LogStream: testStream, Auth: staticKeys}
	awstest.CheckHidesSecret(t, staticKeys, cfg)
}
