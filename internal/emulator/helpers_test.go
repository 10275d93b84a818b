package emulator_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// wantAPIError fails the test unless err is an AWS error of code answered
// with HTTP status.
func wantAPIError(t *testing.T, err error, code string, status int) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v, want %s", err, code)
	}
	if apiErr.ErrorCode() != code {
		t.Fatalf("error code = %s (%s), want %s", apiErr.ErrorCode(), apiErr.ErrorMessage(), code)
	}
	var respErr *awshttp.ResponseError
	if !errors.As(err, &respErr) {
		t.Fatalf("error %v has no HTTP response", err)
	}
	if got := respErr.HTTPStatusCode(); got != status {
		t.Fatalf("%s: HTTP status = %d, want %d", code, got, status)
	}
}

// rawResponse is an answer to a raw call.
type rawResponse struct {
	Status int
	Body   map[string]any
}

// rawCall sends an AWS JSON 1.1 call with headers of the right form and a
// dummy signature, and decodes the answer.
func rawCall(t *testing.T, endpoint, target string, body any, header http.Header) rawResponse {
	t.Helper()
	resp, err := rawTry(endpoint, target, body, header, time.Minute)
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	return resp
}

// rawTry is rawCall giving up after timeout.
func rawTry(endpoint, target string, body any, header http.Header, timeout time.Duration) (rawResponse, error) {
	status, raw, err := rawSend(endpoint, target, body, header, timeout)
	if err != nil {
		return rawResponse{}, err
	}
	out := rawResponse{Status: status}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			return rawResponse{}, fmt.Errorf("answer %q is no JSON object: %w", raw, err)
		}
	}
	return out, nil
}

// rawSend sends the call of rawTry and returns the answer's status and its
// body as it came, for the checks of its bytes.
func rawSend(endpoint, target string, body any, header http.Header, timeout time.Duration) (int, []byte, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(http.MethodPost, endpoint+"/", bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	service := map[string]string{"Kinesis": "kinesis", "Firehose": "firehose", "Logs": "logs"}[strings.Split(target, "_")[0]]
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", target)
	req.Header.Set("X-Amz-Date", "20260101T000000Z")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAEMULATORTEST0000/20260101/us-east-1/"+service+"/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature="+strings.Repeat("0", 64))
	for name, values := range header {
		req.Header.Del(name)
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, raw, nil
}
