package emulator_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

func stsClient(emu *emulatortest.Emulator) *sts.Client {
	return sts.NewFromConfig(emu.AWSConfig(), func(o *sts.Options) { o.BaseEndpoint = aws.String(emu.Endpoint) })
}

func TestSTSAssumeRole(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	ctx := t.Context()
	client := stsClient(emu)
	const role = "arn:aws:iam::210987654321:role/team/sluice"

	out, err := client.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("sluice-delivery"), ExternalId: aws.String("ac_123")})
	if err != nil {
		t.Fatalf("AssumeRole: %v", err)
	}
	creds := out.Credentials
	if !strings.HasPrefix(aws.ToString(creds.AccessKeyId), "ASIA") || aws.ToString(creds.SecretAccessKey) == "" || aws.ToString(creds.SessionToken) == "" || creds.Expiration == nil {
		t.Fatalf("credentials %+v", creds)
	}
	if got := aws.ToString(out.AssumedRoleUser.Arn); got != "arn:aws:sts::210987654321:assumed-role/sluice/sluice-delivery" {
		t.Fatalf("AssumedRoleUser.Arn = %s", got)
	}

	assumed := emu.AssumedRoles()
	if len(assumed) != 1 || assumed[0].RoleARN != role || assumed[0].ExternalID != "ac_123" || assumed[0].RoleSessionName != "sluice-delivery" ||
		assumed[0].AccessKeyID != aws.ToString(creds.AccessKeyId) || assumed[0].CallerAccessKeyID != emulatortest.AccessKeyID {
		t.Fatalf("AssumedRoles = %+v", assumed)
	}
	resp, err := http.Get(emu.Endpoint + "/_emulator/sts/assumed-roles")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var admin struct {
		AssumedRoles []emulator.AssumedRole `json:"assumed_roles"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&admin); err != nil || len(admin.AssumedRoles) != 1 || admin.AssumedRoles[0].ExternalID != "ac_123" {
		t.Fatalf("GET /_emulator/sts/assumed-roles: %+v, %v", admin, err)
	}

	// Calls signed with the issued keys are the role's.
	cfg := emu.AWSConfig()
	cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(client, role, func(o *stscreds.AssumeRoleOptions) { o.ExternalID = aws.String("ac_123") }))
	asRole := sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = aws.String(emu.Endpoint) })
	who, err := asRole.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatalf("GetCallerIdentity as the role: %v", err)
	}
	if !strings.HasPrefix(aws.ToString(who.Arn), "arn:aws:sts::210987654321:assumed-role/sluice/") || aws.ToString(who.Account) != "210987654321" {
		t.Fatalf("GetCallerIdentity as the role = %s %s", aws.ToString(who.Arn), aws.ToString(who.Account))
	}
	who, err = client.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(who.Account) != emulator.DefaultAccountID || aws.ToString(who.Arn) != "arn:aws:iam::123456789012:user/emulator" {
		t.Fatalf("GetCallerIdentity = %+v, %v", who, err)
	}
	// ... and sign the other services' calls.
	if err := emu.CreateStream("s", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := kinesis.NewFromConfig(cfg, func(o *kinesis.Options) { o.BaseEndpoint = aws.String(emu.Endpoint) }).DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("s")}); err != nil {
		t.Fatalf("a Kinesis call with the role's credentials: %v", err)
	}
}

func TestSTSErrors(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	ctx := t.Context()
	client := stsClient(emu)
	assume := func(role, session, externalID string) error {
		in := &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String(session)}
		if externalID != "" {
			in.ExternalId = aws.String(externalID)
		}
		_, err := client.AssumeRole(ctx, in)
		return err
	}
	const role = "arn:aws:iam::123456789012:role/sluice"
	wantAPIError(t, assume("arn:aws:s3:::bucket-of-twenty", "s1", ""), "ValidationError", 400)
	wantAPIError(t, assume(role, "a session name with spaces", ""), "ValidationError", 400)
	wantAPIError(t, assume(role, "s1", "x"), "ValidationError", 400)

	// A role whose trust policy requires an external id.
	if err := emu.SetFault(emulator.Fault{Service: emulator.ServiceSTS, Resource: "sluice", ExternalID: "ac_right"}); err != nil {
		t.Fatal(err)
	}
	wantAPIError(t, assume(role, "s1", "ac_wrong"), "AccessDenied", 403)
	wantAPIError(t, assume(role, "s1", ""), "AccessDenied", 403)
	if err := assume(role, "s1", "ac_right"); err != nil {
		t.Fatalf("AssumeRole with the external id required: %v", err)
	}
	if err := assume("arn:aws:iam::123456789012:role/other", "s1", ""); err != nil {
		t.Fatalf("AssumeRole of a role with no fault: %v", err)
	}
	if got := emu.Counters(emulator.ServiceSTS, "sluice").ByOperation["AssumeRole"]; got.Calls != 3 || got.Errors != 2 {
		t.Fatalf("counters of sts/sluice: %+v", got)
	}
	// A role denied.
	fault, err := emulator.ParseFault("sts/*:access_denied")
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.SetFault(fault); err != nil {
		t.Fatal(err)
	}
	wantAPIError(t, assume("arn:aws:iam::123456789012:role/other", "s1", ""), "AccessDenied", 403)

	for _, bad := range []string{"sts/x:not_found", "kinesis/x:external_id=ac_1", "sts/x:throttle_records=0.5"} {
		if _, err := emulator.ParseFault(bad); err == nil {
			t.Errorf("ParseFault(%q) = nil error", bad)
		}
	}
	if f, err := emulator.ParseFault("sts/sluice:external_id=ac_36Jc"); err != nil || f.ExternalID != "ac_36Jc" || f.String() != "sts/sluice:external_id=ac_36Jc" {
		t.Errorf("ParseFault(external_id) = %+v %v", f, err)
	}
}

// TestUnreadableBody checks that a call whose body fails to read is
// answered with a 400 saying so, in the query protocol (STS) and the JSON
// one, never with an empty 200 a client takes for success.
func TestUnreadableBody(t *testing.T) {
	srv, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	broken := func() io.Reader {
		return io.MultiReader(strings.NewReader("Action=GetCallerIdentity&Vers"), iotest.ErrReader(errors.New("unexpected EOF in chunked body")))
	}
	sts := httptest.NewRequest(http.MethodPost, "/", broken())
	sts.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	kinesis := httptest.NewRequest(http.MethodPost, "/", broken())
	kinesis.Header.Set("Content-Type", "application/x-amz-json-1.1")
	kinesis.Header.Set("X-Amz-Target", "Kinesis_20131202.ListStreams")
	kinesis.Header.Set("X-Amz-Date", "20260101T000000Z")
	kinesis.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host;x-amz-date, Signature="+strings.Repeat("0", 64))
	for name, r := range map[string]*http.Request{"sts": sts, "kinesis": kinesis} {
		t.Run(name, func(t *testing.T) {
			w := httptest.NewRecorder()
			srv.Handler().ServeHTTP(w, r)
			body := w.Body.String()
			if w.Code != http.StatusBadRequest || !strings.Contains(body, "The request body could not be read: unexpected EOF in chunked body") {
				t.Fatalf("answer %d %q, want 400 saying the body could not be read", w.Code, body)
			}
		})
	}
}
