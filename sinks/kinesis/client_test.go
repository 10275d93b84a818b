package kinesis

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/awstest"
	"github.com/sluicehq/sluice/internal/kinesalitetest"
	"github.com/sluicehq/sluice/sinks"
)

// These tests run the real SDK client against fakeAWS, an HTTP server on
// loopback answering as STS and Kinesis do, to check what the fake
// interface cannot: the SDK's retryer is off, the credentials and region
// are the configured ones, and New does no I/O.

// fakeAWS answers STS AssumeRole and Kinesis PutRecords.
type fakeAWS struct {
	*httptest.Server
	// assumeRole and putRecords answer a call: status and body.
	assumeRole, putRecords func() (int, string)

	mu          sync.Mutex
	stsCalls    []url.Values  // the forms of AssumeRole calls
	stsAuth     []string      // their Authorization headers
	kinesisAuth []http.Header // the headers of PutRecords calls
}

func newFakeAWS(t *testing.T) *fakeAWS {
	t.Helper()
	f := &fakeAWS{
		assumeRole: func() (int, string) { return http.StatusOK, assumeRoleOK },
		putRecords: func() (int, string) {
			return http.StatusOK, `{"FailedRecordCount":0,"Records":[{"SequenceNumber":"1","ShardId":"shardId-000000000000"}]}`
		},
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAWS) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	var status int
	var answer string
	switch target := r.Header.Get("X-Amz-Target"); {
	case target == "Kinesis_20131202.PutRecords":
		f.kinesisAuth = append(f.kinesisAuth, r.Header.Clone())
		status, answer = f.putRecords()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	case strings.Contains(string(body), "Action=AssumeRole"):
		form, _ := url.ParseQuery(string(body))
		f.stsCalls = append(f.stsCalls, form)
		f.stsAuth = append(f.stsAuth, r.Header.Get("Authorization"))
		status, answer = f.assumeRole()
		w.Header().Set("Content-Type", "text/xml")
	default:
		status, answer = http.StatusNotImplemented, "no such fake call"
	}
	f.mu.Unlock()
	w.WriteHeader(status)
	io.WriteString(w, answer)
}

// counts returns the number of AssumeRole and PutRecords calls so far.
func (f *fakeAWS) counts() (sts, kinesis int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.stsCalls), len(f.kinesisAuth)
}

var assumeRoleOK = fmt.Sprintf(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <Credentials>
      <AccessKeyId>ASIAASSUMEDROLE00000</AccessKeyId>
      <SecretAccessKey>assumed-secret</SecretAccessKey>
      <SessionToken>assumed-session-token</SessionToken>
      <Expiration>%s</Expiration>
    </Credentials>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/sluice-delivery/sluice-delivery</Arn>
      <AssumedRoleId>AROAEXAMPLE:sluice-delivery</AssumedRoleId>
    </AssumedRoleUser>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata>
</AssumeRoleResponse>`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))

const assumeRoleDenied = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>AccessDenied</Code><Message>not authorized to perform: sts:AssumeRole</Message></Error>
  <RequestId>fake</RequestId>
</ErrorResponse>`

// isolateAWS is awstest.Isolate, with STS at sts.
func isolateAWS(t *testing.T, sts string) {
	t.Helper()
	awstest.Isolate(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts)
}

var staticKeys = sinks.AWSAuth{AccessKeyID: "AKIASTATICKEY0000000", SecretAccessKey: "static-secret"}

// TestSDKDoesNotRetry checks that each failed call is made once, whatever
// the SDK's retryer would have done, and classified from the real answer.
func TestSDKDoesNotRetry(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   sinks.Class
	}{
		{"internal failure", 500, `{"__type":"InternalFailure","message":"oops"}`, sinks.ClassUnavailable},
		{"unavailable", 503, `{"__type":"ServiceUnavailable","message":"later"}`, sinks.ClassUnavailable},
		{"bad gateway, HTML", 502, `<html>bad gateway</html>`, sinks.ClassUnavailable},
		{"stream throttled", 400, `{"__type":"ProvisionedThroughputExceededException","message":"Rate exceeded"}`, sinks.ClassThrottled},
		{"front end throttled", 400, `{"__type":"ThrottlingException","message":"Rate exceeded"}`, sinks.ClassThrottled},
		{"not found", 400, `{"__type":"ResourceNotFoundException","message":"Stream events under account 123456789012 not found."}`, sinks.ClassNotFound},
		{"denied", 400, `{"__type":"AccessDeniedException","message":"not authorized to perform: kinesis:PutRecords"}`, sinks.ClassAccessDenied},
		{"unknown key", 400, `{"__type":"UnrecognizedClientException","message":"The security token included in the request is invalid."}`, sinks.ClassBadCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aws := newFakeAWS(t)
			isolateAWS(t, aws.URL)
			aws.putRecords = func() (int, string) { return tt.status, tt.body }
			sink, err := New(context.Background(), Config{StreamARN: testStreamARN, Auth: staticKeys, Endpoint: aws.URL, HTTPClient: kinesalitetest.LoopbackHTTPClient()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = sink.Write(context.Background(), records(2))
			if got := sinks.ClassOf(err); got != tt.want {
				t.Errorf("class %s, want %s (%v)", got, tt.want, err)
			}
			if _, calls := aws.counts(); calls != 1 {
				t.Errorf("PutRecords called %d times, want exactly 1", calls)
			}
		})
	}
}

// TestCredentials checks which credentials sign PutRecords, in the ARN's
// region, and that New makes no call.
func TestCredentials(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/sluice-delivery"
	tests := []struct {
		name       string
		auth       sinks.AWSAuth
		assumeRole func() (int, string)
		wantKey    string // the key signing PutRecords
		wantToken  string // its session token
		wantSTS    int    // AssumeRole calls for two Writes
		wantClass  sinks.Class
	}{
		{name: "static keys", auth: staticKeys, wantKey: staticKeys.AccessKeyID},
		{name: "default chain", wantKey: awstest.DefaultChainKey},
		{name: "role", auth: sinks.AWSAuth{RoleARN: role}, wantKey: "ASIAASSUMEDROLE00000", wantToken: "assumed-session-token", wantSTS: 1},
		{
			name:       "role denied",
			auth:       sinks.AWSAuth{RoleARN: role},
			assumeRole: func() (int, string) { return http.StatusForbidden, assumeRoleDenied },
			wantSTS:    2,
			wantClass:  sinks.ClassBadCredentials,
		},
		{
			name:       "STS down",
			auth:       sinks.AWSAuth{RoleARN: role},
			assumeRole: func() (int, string) { return http.StatusServiceUnavailable, "" },
			wantSTS:    2,
			wantClass:  sinks.ClassUnavailable,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aws := newFakeAWS(t)
			isolateAWS(t, aws.URL)
			if tt.assumeRole != nil {
				aws.assumeRole = tt.assumeRole
			}
			sink, err := New(context.Background(), Config{
				StreamARN:  testStreamARN,
				Auth:       tt.auth,
				ExternalID: "acc_2mE3example",
				Endpoint:   aws.URL,
				HTTPClient: kinesalitetest.LoopbackHTTPClient(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if sts, kinesis := aws.counts(); sts+kinesis != 0 {
				t.Fatalf("New made %d STS and %d Kinesis calls, want none", sts, kinesis)
			}
			for range 2 {
				_, err = sink.Write(context.Background(), records(1))
				if tt.wantClass == "" && err != nil {
					t.Fatalf("Write: %v", err)
				}
				if tt.wantClass != "" && sinks.ClassOf(err) != tt.wantClass {
					t.Fatalf("Write = %v, want class %s", err, tt.wantClass)
				}
			}
			sts, kinesis := aws.counts()
			if sts != tt.wantSTS {
				t.Errorf("%d AssumeRole calls, want %d", sts, tt.wantSTS)
			}
			aws.mu.Lock()
			defer aws.mu.Unlock()
			if tt.wantClass != "" {
				if kinesis != 0 {
					t.Errorf("%d PutRecords calls without credentials", kinesis)
				}
			} else {
				for _, h := range aws.kinesisAuth {
					scope := "Credential=" + tt.wantKey + "/"
					auth := h.Get("Authorization")
					if !strings.Contains(auth, scope) || !strings.Contains(auth, "/eu-west-1/kinesis/aws4_request") {
						t.Errorf("PutRecords signed with %q, want %s...in eu-west-1", auth, scope)
					}
					if got := h.Get("X-Amz-Security-Token"); got != tt.wantToken {
						t.Errorf("PutRecords session token %q, want %q", got, tt.wantToken)
					}
				}
			}
			for i, form := range aws.stsCalls {
				if form.Get("RoleArn") != role || form.Get("ExternalId") != "acc_2mE3example" || form.Get("RoleSessionName") != sinks.AWSSessionName {
					t.Errorf("AssumeRole with %v, want role %s, external id acc_2mE3example, session %s", form, role, sinks.AWSSessionName)
				}
				if !strings.Contains(aws.stsAuth[i], "Credential="+awstest.DefaultChainKey+"/") || !strings.Contains(aws.stsAuth[i], "/eu-west-1/sts/") {
					t.Errorf("AssumeRole signed with %q, want the default chain's key in eu-west-1", aws.stsAuth[i])
				}
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
		{"static keys", Config{StreamARN: testStreamARN, Auth: staticKeys}, true},
		{"default chain", Config{StreamARN: testStreamARN}, true},
		{"role", Config{StreamARN: testStreamARN, Auth: sinks.AWSAuth{RoleARN: role}, ExternalID: "acc_1"}, true},
		{"role with a path", Config{StreamARN: testStreamARN, Auth: sinks.AWSAuth{RoleARN: "arn:aws:iam::123456789012:role/delivery/sluice"}, ExternalID: "acc_1"}, true},
		{"no ARN", Config{}, false},
		{"not an ARN", Config{StreamARN: "events"}, false},
		{"a Firehose ARN", Config{StreamARN: "arn:aws:firehose:eu-west-1:123456789012:deliverystream/events"}, false},
		{"no stream name", Config{StreamARN: "arn:aws:kinesis:eu-west-1:123456789012:stream/"}, false},
		{"no region", Config{StreamARN: "arn:aws:kinesis::123456789012:stream/events"}, false},
		{"a consumer ARN", Config{StreamARN: "arn:aws:kinesis:eu-west-1:123456789012:stream/events/consumer/c:1"}, false},
		{"role and keys", Config{StreamARN: testStreamARN, Auth: sinks.AWSAuth{RoleARN: role, AccessKeyID: "A", SecretAccessKey: "B"}, ExternalID: "acc_1"}, false},
		{"half a key pair", Config{StreamARN: testStreamARN, Auth: sinks.AWSAuth{AccessKeyID: "A"}}, false},
		{"the other half", Config{StreamARN: testStreamARN, Auth: sinks.AWSAuth{SecretAccessKey: "B"}}, false},
		{"role without external id", Config{StreamARN: testStreamARN, Auth: sinks.AWSAuth{RoleARN: role}}, false},
		{"role that is a user", Config{StreamARN: testStreamARN, Auth: sinks.AWSAuth{RoleARN: "arn:aws:iam::123456789012:user/sluice"}, ExternalID: "acc_1"}, false},
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

// TestAuthHidesSecret checks that printing or logging a Config never shows
// the secret access key.
func TestAuthHidesSecret(t *testing.T) {
	cfg := Config{StreamARN: testStreamARN, Auth: staticKeys}
	awstest.CheckHidesSecret(t, staticKeys, cfg, cfg.Auth)
}
