package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// waitReady waits until GET url/readyz answers 200, for at most 10 s: a
// worker is ready once its routes are reconciled, a moment after it serves.
func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := request(t, http.MethodGet, url+readyzPath, "", "")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %s after 10 s", readyzPath, code, body)
		}
		time.Sleep(20 * time.Millisecond) // polling readiness, with a deadline
	}
}

// TestServeMetrics runs serve --dev with a route to the emulator: once
// events flow, /metrics on --metrics-http shows the delivery, route and
// stream metrics, /metrics on --http answers 404, and /readyz answers 200
// on both.
func TestServeMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve --dev")
	}
	clearSluiceEnv(t)
	const token = "sk_test_metrics_token_0123456789"
	t.Setenv(bootstrapKeyEnv, token)
	p := startServeInProcess(t, "--dev", "--dev-aws-listen", "127.0.0.1:0")
	waitReady(t, p.url)

	status, body := request(t, http.MethodPost, p.url+"/event_destinations", token,
		`{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/metrics", "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}}`)
	if status != http.StatusCreated {
		t.Fatalf("creating a destination: %d %s", status, body)
	}
	var dest struct{ ID string }
	if err := json.Unmarshal([]byte(body), &dest); err != nil {
		t.Fatal(err)
	}
	status, body = request(t, http.MethodPost, p.url+"/event_subscriptions", token,
		`{"sources": [{"type": "http_request_complete.v0", "filter": "ev.conn.server_port == 443"}], "destination_ids": ["`+dest.ID+`"]}`)
	if status != http.StatusCreated {
		t.Fatalf("creating the subscription: %d %s", status, body)
	}

	// Publish an event kept and one filtered out every 200 ms until the
	// route has delivered one: it starts within a second or two.
	delivered := regexp.MustCompile(`sluice_delivery_delivered_events_total\{[^}]*destination_id="` + dest.ID + `"[^}]*\} [1-9]`)
	deadline := time.Now().Add(30 * time.Second)
	var metrics string
	for {
		events := `[{"event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 443}}}, {"event_type": "http_request_complete.v0", "object": {"conn": {"server_port": 80}}}]`
		if status, body := request(t, http.MethodPost, p.url+"/events", token, events); status != http.StatusAccepted {
			t.Fatalf("publishing: %d %s", status, body)
		}
		status, metrics = request(t, http.MethodGet, p.metricsURL+metricsPath, "", "")
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", metricsPath, status, metrics)
		}
		if delivered.MatchString(metrics) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing delivered to %s after 30 s:\n%s", dest.ID, p.logs)
		}
		time.Sleep(200 * time.Millisecond) // publishing the next events
	}
	for _, want := range []string{
		`sluice_delivery_filtered_events_total{account_id="`,
		`sluice_delivery_latency_seconds_count{account_id="`,
		`sluice_delivery_write_records_count{destination_type="kinesis"}`,
		`sluice_delivery_write_bytes_count{destination_type="kinesis"}`,
		`sluice_delivery_write_duration_seconds_count{destination_type="kinesis",outcome="ok"}`,
		`sluice_route_pending_events{account_id="`,
		`sluice_route_ack_pending_events{account_id="`,
		`sluice_stream_messages{stream="SLUICE_EVENTS"}`,
		`sluice_stream_bytes{stream="SLUICE_EVENTS"}`,
		`sluice_stream_messages{stream="SLUICE_DLQ"} 0`,
		`sluice_ingest_events_total{event_type="http_request_complete.v0"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("%s has no %s", metricsPath, want)
		}
	}
	if t.Failed() {
		t.Logf("%s:\n%s", metricsPath, metrics)
	}
	// The metrics name every account's ids: the API's listener, which
	// anyone who reaches the API reaches without a key, does not serve them.
	if code, body := request(t, http.MethodGet, p.url+metricsPath, "", ""); code != http.StatusNotFound || strings.Contains(body, dest.ID) {
		t.Errorf("GET %s on --http: %d %.300s, want 404 without the destination's id", metricsPath, code, body)
	}
	for _, url := range []string{p.url, p.metricsURL} {
		if code, body := request(t, http.MethodGet, url+readyzPath, "", ""); code != http.StatusOK {
			t.Errorf("GET %s%s: %d %s", url, readyzPath, code, body)
		}
		if code, body := request(t, http.MethodGet, url+healthzPath, "", ""); code != http.StatusOK || body != "ok\n" {
			t.Errorf("GET %s%s: %d %q", url, healthzPath, code, body)
		}
	}
}

// TestServeWithoutMetrics runs serve with --metrics-http empty: it serves
// no metrics anywhere, and says so by logging no metrics address.
func TestServeWithoutMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	clearSluiceEnv(t)
	p := startServeInProcess(t, "--roles", "api", "--metrics-http", "")
	if p.metricsURL != "" {
		t.Errorf("logged metrics at %s, want none", p.metricsURL)
	}
	if code, body := request(t, http.MethodGet, p.url+metricsPath, "", ""); code != http.StatusNotFound {
		t.Errorf("GET %s on --http: %d %.200s, want 404", metricsPath, code, body)
	}
}
