package emulator_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

func TestAuthorizationAndProtocolErrors(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	if err := emu.CreateStream("s", 1); err != nil {
		t.Fatal(err)
	}
	describe := map[string]string{"StreamName": "s"}
	tests := []struct {
		name     string
		target   string
		header   http.Header
		wantCode string
	}{
		{"a signed call", "Kinesis_20131202.DescribeStreamSummary", nil, ""},
		{"no Authorization", "Kinesis_20131202.DescribeStreamSummary", http.Header{"Authorization": {}}, "MissingAuthenticationTokenException"},
		{"another algorithm", "Kinesis_20131202.DescribeStreamSummary", http.Header{"Authorization": {"AWS3 x"}}, "IncompleteSignatureException"},
		{"no Signature", "Kinesis_20131202.DescribeStreamSummary", http.Header{"Authorization": {"AWS4-HMAC-SHA256 Credential=AK/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host"}}, "IncompleteSignatureException"},
		{"a bad credential scope", "Kinesis_20131202.DescribeStreamSummary", http.Header{"Authorization": {"AWS4-HMAC-SHA256 Credential=AK/us-east-1/kinesis, SignedHeaders=host, Signature=" + strings.Repeat("a", 64)}}, "IncompleteSignatureException"},
		{"no date", "Kinesis_20131202.DescribeStreamSummary", http.Header{"X-Amz-Date": {}}, "IncompleteSignatureException"},
		{"scoped to another service", "Kinesis_20131202.DescribeStreamSummary", http.Header{"Authorization": {"AWS4-HMAC-SHA256 Credential=AK/20260101/us-east-1/firehose/aws4_request, SignedHeaders=host, Signature=" + strings.Repeat("a", 64)}}, "InvalidSignatureException"},
		{"an unknown operation", "Kinesis_20131202.DeleteStream", nil, "UnknownOperationException"},
		{"an unknown service", "DynamoDB_20120810.ListTables", nil, "UnknownOperationException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := rawCall(t, emu.Endpoint, tt.target, describe, tt.header)
			if tt.wantCode == "" {
				if resp.Status != http.StatusOK {
					t.Fatalf("status %d: %v", resp.Status, resp.Body)
				}
				return
			}
			if resp.Status != http.StatusBadRequest || resp.Body["__type"] != tt.wantCode {
				t.Fatalf("answer %d %v, want 400 %s", resp.Status, resp.Body, tt.wantCode)
			}
		})
	}
	t.Run("a body that is no JSON", func(t *testing.T) {
		resp := rawCall(t, emu.Endpoint, "Kinesis_20131202.DescribeStreamSummary", json.RawMessage(`"x"`), nil)
		if resp.Status != http.StatusBadRequest || resp.Body["__type"] != "SerializationException" {
			t.Fatalf("answer %d %v", resp.Status, resp.Body)
		}
	})
}

func TestAdminAPI(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{})
	post := func(body string) *http.Response {
		t.Helper()
		resp, err := http.Post(emu.Endpoint+"/_emulator/faults", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := post(`{"service":"kinesis","resource":"s","throttle_records":0.3,"latency":"300ms","operations":["PutRecords"]}`); resp.StatusCode != 200 {
		t.Fatalf("POST a fault: %d", resp.StatusCode)
	}
	if resp := post(`[{"service":"logs","resource":"/a/b","access_denied":true},{"service":"firehose","resource":"*","server_errors":0.2}]`); resp.StatusCode != 200 {
		t.Fatalf("POST faults: %d", resp.StatusCode)
	}
	if resp := post(`{"service":"kinesis","resource":"s","throttle_records":2}`); resp.StatusCode != 400 {
		t.Fatalf("POST an invalid fault: %d, want 400", resp.StatusCode)
	}
	faults := emu.Faults()
	if len(faults) != 3 || faults[1].Latency != 300*time.Millisecond || faults[1].ThrottleRecords != 0.3 || !faults[2].AccessDenied {
		t.Fatalf("faults %+v", faults)
	}

	resp, err := http.Get(emu.Endpoint + "/_emulator/faults")
	if err != nil {
		t.Fatal(err)
	}
	var listed struct{ Faults []emulator.Fault }
	err = json.NewDecoder(resp.Body).Decode(&listed)
	resp.Body.Close()
	if err != nil || len(listed.Faults) != 3 || listed.Faults[1].Latency != 300*time.Millisecond {
		t.Fatalf("GET faults: %+v, %v", listed, err)
	}

	del := func(query string) int {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodDelete, emu.Endpoint+"/_emulator/faults"+query, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := del("?service=logs&resource=/a/b"); status != 200 || len(emu.Faults()) != 2 {
		t.Fatalf("DELETE one fault: %d, %d left", status, len(emu.Faults()))
	}
	if status := del("?service=logs&resource=/a/b"); status != 404 {
		t.Fatalf("DELETE a fault twice: %d, want 404", status)
	}
	if status := del(""); status != 200 || len(emu.Faults()) != 0 {
		t.Fatalf("DELETE every fault: %d, %d left", status, len(emu.Faults()))
	}

	// Counters of a call.
	if err := emu.CreateStream("s", 1); err != nil {
		t.Fatal(err)
	}
	rawCall(t, emu.Endpoint, "Kinesis_20131202.PutRecords", map[string]any{"StreamName": "s", "Records": []map[string]any{{"PartitionKey": "k", "Data": "eA=="}}}, nil)
	resp, err = http.Get(emu.Endpoint + "/_emulator/counters")
	if err != nil {
		t.Fatal(err)
	}
	var counters map[string]emulator.Counters
	err = json.NewDecoder(resp.Body).Decode(&counters)
	resp.Body.Close()
	if got := counters["kinesis/s"].ByOperation["PutRecords"]; err != nil || got.Calls != 1 || got.RecordsAccepted != 1 {
		t.Fatalf("counters %+v, %v", counters, err)
	}
}

func TestParseFault(t *testing.T) {
	tests := []struct {
		flag string
		want emulator.Fault
	}{
		{"kinesis/orders:throttle_records=0.3", emulator.Fault{Service: emulator.ServiceKinesis, Resource: "orders", ThrottleRecords: 0.3}},
		{"logs//sluice/audit:server_errors=0.2,latency=300ms", emulator.Fault{Service: emulator.ServiceLogs, Resource: "/sluice/audit", ServerErrors: 0.2, Latency: 300 * time.Millisecond}},
		{"firehose/*:access_denied,operations=PutRecordBatch+PutRecord", emulator.Fault{Service: emulator.ServiceFirehose, Resource: "*", AccessDenied: true, Operations: []string{"PutRecordBatch", "PutRecord"}}},
		{"kinesis/s:not_found=true,throttle_requests=1,fail_records=0.1", emulator.Fault{Service: emulator.ServiceKinesis, Resource: "s", NotFound: true, ThrottleRequests: 1, FailRecords: 0.1}},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			got, err := emulator.ParseFault(tt.flag)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := mustJSON(t, got), mustJSON(t, tt.want); g != w {
				t.Errorf("ParseFault = %s, want %s", g, w)
			}
			if again, err := emulator.ParseFault(got.String()); err != nil || mustJSON(t, again) != mustJSON(t, got) {
				t.Errorf("ParseFault(%q) = %+v, %v: String does not read back", got.String(), again, err)
			}
		})
	}
	for _, bad := range []string{"kinesis", "kinesis/s", "kinesis/s:", "kinesis/s:throttle_records=x", "kinesis/s:speed=1", "s3/b:latency=1s", "kinesis/s:latency=-1s"} {
		t.Run(bad, func(t *testing.T) {
			if _, err := emulator.ParseFault(bad); !errors.Is(err, emulator.ErrInvalidFault) {
				t.Errorf("ParseFault(%q) = %v, want ErrInvalidFault", bad, err)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// serve runs srv.Serve on a loopback port and returns its address, and stop,
// which ends Serve's context and fails the test unless Serve then returns
// nil within 10 s.
func serve(t *testing.T, srv *emulator.Server) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	return ln.Addr().String(), func() {
		t.Helper()
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Fatalf("Serve = %v, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve still running 10 s after its context ended")
		}
	}
}

func TestServeStopsWhenItsContextEnds(t *testing.T) {
	srv, err := emulator.New(emulator.Config{Faults: []emulator.Fault{{Service: emulator.ServiceKinesis, Resource: "*", Latency: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := serve(t, srv)
	// A call waiting out an hour of latency does not hold the shutdown.
	answered := make(chan int, 1)
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/_emulator/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
		slow, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(`{"StreamName":"s"}`))
		slow.Header.Set("Content-Type", "application/x-amz-json-1.1")
		slow.Header.Set("X-Amz-Target", "Kinesis_20131202.DescribeStreamSummary")
		slow.Header.Set("X-Amz-Date", "20260101T000000Z")
		slow.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AK/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host, Signature="+strings.Repeat("0", 64))
		if resp, err := http.DefaultClient.Do(slow); err == nil {
			resp.Body.Close()
		}
	}()
	if status := <-answered; status != http.StatusOK {
		t.Fatalf("healthz: %d", status)
	}
	stop()
	<-slowDone
}

// TestServeClosesUnusedConnections ends Serve while a client holds a
// connection it never sent a request on: Serve closes it once its
// shutdown timeout passes and returns nil.
func TestServeClosesUnusedConnections(t *testing.T) {
	srv, err := emulator.New(emulator.Config{ShutdownTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := serve(t, srv)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A call on a second connection is answered after the server accepted
	// the first, which connected before it.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/_emulator/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	stop()
}
