package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/pipeline"
)

// TestServeIgnoresHost runs serve without --public-url and creates a
// destination with a Host header of the client's choosing: the response and
// the audit event stored name the address serve listens on, never that
// host.
func TestServeIgnoresHost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	clearSluiceEnv(t)
	const token = "sk_test_host_token_0123456789"
	const evil = "evil.example.com"
	t.Setenv(bootstrapKeyEnv, token)
	p := startServeInProcess(t, "--roles", "api", "--nats-listen", "127.0.0.1:0")

	req, err := http.NewRequest(http.MethodPost, p.url+"/event_destinations", strings.NewReader(
		`{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/host", "auth": {"role": {"role_arn": "arn:aws:iam::123456789012:role/sluice"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = evil
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var dest struct{ ID, URI string }
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(out, &dest) != nil {
		t.Fatalf("creating a destination: %d %s", resp.StatusCode, out)
	}
	if want := p.url + "/event_destinations/" + dest.ID; dest.URI != want {
		t.Errorf("uri %s, want %s", dest.URI, want)
	}

	nc, err := nats.Connect(logAttrOf(t, p.logs.String(), "the embedded NATS server is listening", "nats_url"), sluiceNkey(t, logAttrOf(t, p.logs.String(), "the embedded NATS server is listening", "nats_nkey")))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The audit event is stored before the response is sent.
	stream, err := js.Stream(ctx, pipeline.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetMsg(ctx, 1)
	if err != nil {
		t.Fatalf("reading the audit event: %v", err)
	}
	stored := string(msg.Data)
	if !strings.Contains(stored, "event_destination_created.v0") || strings.Contains(stored, evil) || !strings.Contains(stored, `"uri":"`+dest.URI+`"`) {
		t.Errorf("audit event %s, want the uri %s and nothing of the request's Host %s", stored, dest.URI, evil)
	}
}
