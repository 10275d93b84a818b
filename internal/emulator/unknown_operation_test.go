package emulator_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// TestUnknownOperationNamesIt checks that a call of an operation the
// emulator does not serve says which, in every protocol it speaks.
func TestUnknownOperationNamesIt(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	t.Run("JSON", func(t *testing.T) {
		for _, tt := range []struct{ target, code, mentions string }{
			{"Kinesis_20131202.DeleteStream", "UnknownOperationException", "Operation DeleteStream of Kinesis (Kinesis_20131202)"},
			{"Firehose_20150804.DeleteDeliveryStream", "UnknownOperationException", "Operation DeleteDeliveryStream of Firehose (Firehose_20150804)"},
			{"Logs_20140328.DeleteLogGroup", "UnknownOperationException", "Operation DeleteLogGroup of CloudWatch Logs (Logs_20140328)"},
			{"DynamoDB_20120810.ListTables", "UnknownOperationException", "Operation ListTables of service DynamoDB_20120810"},
		} {
			resp := rawCall(t, emu.Endpoint, tt.target, map[string]string{}, nil)
			if msg, _ := resp.Body["message"].(string); resp.Status != http.StatusBadRequest || resp.Body["__type"] != tt.code || !strings.Contains(msg, tt.mentions) {
				t.Errorf("%s: %d %v, want 400 %s saying %q", tt.target, resp.Status, resp.Body, tt.code, tt.mentions)
			}
		}
		resp := rawCall(t, emu.Endpoint, "", map[string]string{}, http.Header{"X-Amz-Target": {}})
		if msg, _ := resp.Body["message"].(string); resp.Body["__type"] != "UnknownOperationException" || !strings.Contains(msg, "X-Amz-Target") {
			t.Errorf("no X-Amz-Target: %v", resp.Body)
		}
	})
	t.Run("query", func(t *testing.T) {
		for _, tt := range []struct{ service, action, code, mentions string }{
			{"sts", "GetSessionToken", "InvalidAction", "Operation GetSessionToken of STS"},
			{"sqs", "ListQueues", "InvalidAction", "Operation ListQueues of service sqs"},
		} {
			status, code, msg := queryCall(t, emu.Endpoint, tt.service, url.Values{"Action": {tt.action}, "Version": {"2011-06-15"}})
			if status != http.StatusBadRequest || code != tt.code || !strings.Contains(msg, tt.mentions) {
				t.Errorf("%s %s: %d %s %q, want 400 %s saying %q", tt.service, tt.action, status, code, msg, tt.code, tt.mentions)
			}
		}
	})
}

// queryCall sends a query-protocol call scoped to service with a dummy
// signature, and returns the status and, for an error, its code and
// message.
func queryCall(t *testing.T, endpoint, service string, form url.Values) (status int, code, message string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint+"/", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	req.Header.Set("X-Amz-Date", "20260101T000000Z")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAEMULATORTEST0000/20260101/us-east-1/"+service+"/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature="+strings.Repeat("0", 64))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, "", ""
	}
	var answer struct {
		Error struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
	}
	if err := xml.Unmarshal(body, &answer); err != nil {
		t.Fatalf("error answer %q is no XML: %v", body, err)
	}
	return resp.StatusCode, answer.Error.Code, answer.Error.Message
}
