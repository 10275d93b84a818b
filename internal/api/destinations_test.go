package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
)

const (
	testStreamARN   = "arn:aws:kinesis:us-east-1:123456789012:stream/events"
	testFirehoseARN = "arn:aws:firehose:us-east-1:123456789012:deliverystream/events"
	testRoleARN     = "arn:aws:iam::123456789012:role/sluice"
	testKeyID       = "AKIAIOSFODNN7EXAMPLE"
	testSecret      = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

// kinesisBody is a valid destination body with a role.
const kinesisBody = `{"description":"to kinesis","metadata":"{\"team\":\"ops\"}","target":{"kinesis":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"stream_arn":"` + testStreamARN + `"}}}`

// credsBody is a valid Firehose destination body with static credentials.
const credsBody = `{"format":"JSON","target":{"firehose":{"auth":{"creds":{"aws_access_key_id":"` + testKeyID + `","aws_secret_access_key":"` + testSecret + `"}},"delivery_stream_arn":"` + testFirehoseARN + `"}}}`

// call sends a management request with the usual headers and the key's
// token, and checks that the secret is in no response.
func (e *testEnv) call(t *testing.T, token, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	resp, out := e.do(t, method, path, token, reader, func(req *http.Request) {
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
	})
	if bytes.Contains(out, []byte(testSecret)) || bytes.Contains(out, []byte("aws_secret_access_key")) {
		t.Fatalf("%s %s: the response shows the secret: %s", method, path, out)
	}
	return resp, out
}

// destination is a destination as the API returns it.
type destination struct {
	ID          string          `json:"id"`
	URI         string          `json:"uri"`
	CreatedAt   string          `json:"created_at"`
	Description string          `json:"description"`
	Metadata    string          `json:"metadata"`
	Format      string          `json:"format"`
	Target      json.RawMessage `json:"target"`
}

type destinationList struct {
	Destinations []destination `json:"event_destinations"`
	URI          string        `json:"uri"`
	NextPageURI  *string       `json:"next_page_uri"`
}

func (e *testEnv) create(t *testing.T, body string) destination {
	t.Helper()
	resp, out := e.call(t, e.token, http.MethodPost, "/event_destinations", body)
	apitest.WantStatus(t, resp, out, http.StatusCreated)
	return apitest.DecodeAs[destination](t, out)
}

func TestDestinationRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	created := e.create(t, credsBody)
	if created.URI != e.url+"/event_destinations/"+created.ID || created.Format != "json" ||
		!strings.HasSuffix(created.CreatedAt, "Z") || !strings.Contains(string(created.Target), testKeyID) {
		t.Fatalf("created %+v", created)
	}
	stored, err := e.store.GetDestination(t.Context(), e.account, created.ID)
	if err != nil || stored.Target.Auth().Creds.SecretAccessKey != testSecret {
		t.Fatalf("stored %v, %v: want the secret kept", stored, err)
	}

	resp, out := e.call(t, e.token, http.MethodGet, "/event_destinations/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[destination](t, out); got.ID != created.ID || got.CreatedAt != created.CreatedAt {
		t.Fatalf("got %+v, want %+v", got, created)
	}

	resp, out = e.call(t, e.token, http.MethodGet, "/event_destinations", "")
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if list := apitest.DecodeAs[destinationList](t, out); len(list.Destinations) != 1 || list.NextPageURI != nil || list.URI != e.url+"/event_destinations" {
		t.Fatalf("list %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodPatch, "/event_destinations/"+created.ID, `{"description":"renamed","metadata":"m"}`)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	if got := apitest.DecodeAs[destination](t, out); got.Description != "renamed" || got.Metadata != "m" || !strings.Contains(string(got.Target), testFirehoseARN) {
		t.Fatalf("patched %s", out)
	}
	// A target of another type is refused.
	resp, out = e.call(t, e.token, http.MethodPatch, "/event_destinations/"+created.ID, kinesisBody)
	apitest.WantStatus(t, resp, out, http.StatusBadRequest)
	if body := apitest.DecodeError(t, out); body.ErrorCode != "ERR_SLUICE_333" || body.Details["field"] != "target" {
		t.Fatalf("type change: %s", out)
	}

	resp, out = e.call(t, e.token, http.MethodDelete, "/event_destinations/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNoContent)
	resp, out = e.call(t, e.token, http.MethodGet, "/event_destinations/"+created.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusNotFound)
	if body := apitest.DecodeError(t, out); body.ErrorCode != "ERR_SLUICE_420" {
		t.Fatalf("get after delete: %s", out)
	}
}

// TestDestinationPatchKeepsSecret keeps the stored secret when creds are
// sent again without it, for the same access key id.
func TestDestinationPatchKeepsSecret(t *testing.T) {
	e := newTestEnv(t)
	created := e.create(t, credsBody)
	without := strings.Replace(credsBody, `,"aws_secret_access_key":"`+testSecret+`"`, "", 1)
	resp, out := e.call(t, e.token, http.MethodPatch, "/event_destinations/"+created.ID, without)
	apitest.WantStatus(t, resp, out, http.StatusOK)
	stored, err := e.store.GetDestination(t.Context(), e.account, created.ID)
	if err != nil || stored.Target.Auth().Creds.SecretAccessKey != testSecret {
		t.Fatalf("stored %v, %v: want the secret kept", stored, err)
	}
}

// targetBody is a destination body with the target's members and nothing
// else.
func targetBody(target string) string { return `{"target":{` + target + `}}` }

// destinationCase is a destination body the API refuses, and how.
type destinationCase struct {
	name  string
	body  string
	code  string
	field string // details.field, "" for none
}

// TestDestinationLimits creates a destination of each target type, with
// each kind of auth, at the limits of its fields: all are taken.
func TestDestinationLimits(t *testing.T) {
	e := newTestEnv(t)
	role := `"auth":{"role":{"role_arn":"arn:aws-us-gov:iam::123456789012:role/a/b/sluice"}}`
	creds := `"auth":{"creds":{"aws_access_key_id":"` + testKeyID + `","aws_secret_access_key":"` + testSecret + `"}}`
	for _, target := range []string{
		`"firehose":{` + creds + `,"delivery_stream_arn":"` + testFirehoseARN + `"}`,
		`"kinesis":{` + role + `,"stream_arn":"arn:aws-us-gov:kinesis:us-gov-west-1:123456789012:stream/events"}`,
		`"cloudwatch_logs":{` + creds + `,"log_group_arn":"arn:aws:logs:eu-west-1:123456789012:log-group:/sluice/events:*"}`,
		`"cloudwatch_logs":{"auth":{"role":{"role_arn":"arn:aws-cn:iam::123456789012:role/sluice"}},"log_group_arn":"arn:aws-cn:logs:cn-north-1:123456789012:log-group:events"}`,
	} {
		// 255 bytes of description and 4096 of metadata, in characters
		// of two bytes where they fit.
		body := `{"description":"d` + strings.Repeat("é", 127) + `","metadata":"` + strings.Repeat("é", 2048) + `","format":"Json","target":{` + target + `}}`
		created := e.create(t, body)
		if len(created.Description) != 255 || len(created.Metadata) != 4096 || created.Format != "json" {
			t.Fatalf("created %+v", created)
		}
		want := strings.ReplaceAll(target, `,"aws_secret_access_key":"`+testSecret+`"`, "")
		if string(created.Target) != "{"+want+"}" {
			t.Fatalf("target %s, want {%s}", created.Target, want)
		}
	}
}

func TestDestinationValidation(t *testing.T) {
	e := newTestEnv(t)
	tests := []destinationCase{
		{"two targets", `{"target":{"kinesis":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"stream_arn":"` + testStreamARN + `"},"firehose":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"delivery_stream_arn":"` + testFirehoseARN + `"}}}`, "ERR_SLUICE_333", "target"},
		{"no auth", `{"target":{"kinesis":{"stream_arn":"` + testStreamARN + `"}}}`, "ERR_SLUICE_333", "target.kinesis.auth"},
		{"bad ARN", `{"target":{"kinesis":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"stream_arn":"arn:aws:kinesis:us-east-1:123:table/x"}}}`, "ERR_SLUICE_333", "target.kinesis.stream_arn"},
		{"format xml", strings.Replace(kinesisBody, `{"description"`, `{"format":"xml","description"`, 1), "ERR_SLUICE_333", "format"},
		{"description of 256 bytes", strings.Replace(kinesisBody, `"to kinesis"`, `"`+strings.Repeat("d", 256)+`"`, 1), "ERR_SLUICE_333", "description"},
		{"description of 128 two-byte characters, 256 bytes", strings.Replace(kinesisBody, `"to kinesis"`, `"`+strings.Repeat("é", 128)+`"`, 1), "ERR_SLUICE_333", "description"},
		{"metadata of 4097 bytes", strings.Replace(kinesisBody, `"{\"team\":\"ops\"}"`, `"`+strings.Repeat("m", 4097)+`"`, 1), "ERR_SLUICE_333", "metadata"},
		{"metadata of 2049 two-byte characters, 4098 bytes", strings.Replace(kinesisBody, `"{\"team\":\"ops\"}"`, `"`+strings.Repeat("é", 2049)+`"`, 1), "ERR_SLUICE_333", "metadata"},
		{"role and creds", targetBody(`"kinesis":{"auth":{"role":{"role_arn":"` + testRoleARN + `"},"creds":{"aws_access_key_id":"` + testKeyID + `","aws_secret_access_key":"s"}},"stream_arn":"` + testStreamARN + `"}`), "ERR_SLUICE_333", "target.kinesis.auth"},
		{"no target", `{"description":"d"}`, "ERR_SLUICE_333", "target"},
		{"empty target", `{"target":{}}`, "ERR_SLUICE_333", "target"},
		{"a Kinesis ARN for Firehose", targetBody(`"firehose":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"delivery_stream_arn":"` + testStreamARN + `"}`), "ERR_SLUICE_333", "target.firehose.delivery_stream_arn"},
		{"a log stream for a log group", targetBody(`"cloudwatch_logs":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"log_group_arn":"arn:aws:logs:us-east-1:123456789012:log-stream:x"}`), "ERR_SLUICE_333", "target.cloudwatch_logs.log_group_arn"},
		{"an account of 11 digits", targetBody(`"kinesis":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"stream_arn":"arn:aws:kinesis:us-east-1:12345678901:stream/events"}`), "ERR_SLUICE_333", "target.kinesis.stream_arn"},
		{"an unknown partition", targetBody(`"kinesis":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"stream_arn":"arn:aws-iso:kinesis:us-iso-east-1:123456789012:stream/events"}`), "ERR_SLUICE_333", "target.kinesis.stream_arn"},
		{"a region of another partition", targetBody(`"kinesis":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"stream_arn":"arn:aws-cn:kinesis:us-east-1:123456789012:stream/events"}`), "ERR_SLUICE_333", "target.kinesis.stream_arn"},
		{"no region", targetBody(`"kinesis":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"stream_arn":"arn:aws:kinesis::123456789012:stream/events"}`), "ERR_SLUICE_333", "target.kinesis.stream_arn"},
		{"a role ARN with a region", targetBody(`"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam:us-east-1:123456789012:role/sluice"}},"stream_arn":"` + testStreamARN + `"}`), "ERR_SLUICE_333", "target.kinesis.auth.role.role_arn"},
		{"a user ARN for a role", targetBody(`"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:user/sluice"}},"stream_arn":"` + testStreamARN + `"}`), "ERR_SLUICE_333", "target.kinesis.auth.role.role_arn"},
		{"a role of another partition", targetBody(`"kinesis":{"auth":{"role":{"role_arn":"arn:aws-cn:iam::123456789012:role/sluice"}},"stream_arn":"` + testStreamARN + `"}`), "ERR_SLUICE_333", "target.kinesis.auth.role.role_arn"},
		{"unknown field", strings.Replace(kinesisBody, `{"description"`, `{"colour":"red","description"`, 1), "ERR_SLUICE_331", ""},
		{"wrong type", `{"target":{"kinesis":{"auth":{"role":{"role_arn":"` + testRoleARN + `"}},"stream_arn":42}}}`, "ERR_SLUICE_332", "target.kinesis.stream_arn"},
		{"malformed", `{"target":`, "ERR_SLUICE_330", ""},
		{"empty", ``, "ERR_SLUICE_330", ""},
		{"trailing data", kinesisBody + `{}`, "ERR_SLUICE_330", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.url+"/event_destinations", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.token)
			req.Header.Set("Service-Version", "2")
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			apitest.WantStatus(t, resp, out, http.StatusBadRequest)
			body := apitest.DecodeError(t, out)
			if body.ErrorCode != tt.code {
				t.Fatalf("code %s, want %s: %s", body.ErrorCode, tt.code, body.Msg)
			}
			if tt.field != "" && body.Details["field"] != tt.field {
				t.Fatalf("details.field %v, want %s: %s", body.Details["field"], tt.field, body.Msg)
			}
		})
	}
	t.Run("wrong type message", func(t *testing.T) {
		resp, out := e.call(t, e.token, http.MethodPost, "/event_destinations", tests[slices.IndexFunc(tests, func(tt destinationCase) bool { return tt.name == "wrong type" })].body)
		apitest.WantStatus(t, resp, out, http.StatusBadRequest)
		if msg := apitest.DecodeError(t, out).Msg; msg != "field target.kinesis.stream_arn: expected string, got number" {
			t.Fatalf("msg %q", msg)
		}
	})
	t.Run("unknown field message", func(t *testing.T) {
		resp, out := e.call(t, e.token, http.MethodPost, "/event_destinations", tests[slices.IndexFunc(tests, func(tt destinationCase) bool { return tt.name == "unknown field" })].body)
		apitest.WantStatus(t, resp, out, http.StatusBadRequest)
		if msg := apitest.DecodeError(t, out).Msg; !strings.Contains(msg, `unknown field "colour"`) {
			t.Fatalf("msg %q", msg)
		}
	})
}

func TestDestinationInUse(t *testing.T) {
	e := newTestEnv(t)
	d := e.create(t, kinesisBody)
	sub, err := e.store.CreateSubscription(t.Context(), e.account, store.Subscription{
		Sources:        []store.Source{{Type: "http_request_complete.v0"}},
		DestinationIDs: []string{d.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, out := e.call(t, e.token, http.MethodDelete, "/event_destinations/"+d.ID, "")
	apitest.WantStatus(t, resp, out, http.StatusConflict)
	body := apitest.DecodeError(t, out)
	if body.ErrorCode != "ERR_SLUICE_421" || !strings.Contains(body.Msg, sub.ID) || body.Details["subscriptions"] != `["`+sub.ID+`"]` {
		t.Fatalf("got %s", out)
	}
}
